/// How a reader and the writer, in different processes, share a store (see
/// `docs/FORMAT.md`, "Readers and the writer"): the writer changes table files
/// only while it holds the commit lock exclusive; a reader holds it shared for
/// each read operation and, once it has it, brings its open tables up to the
/// last commit.
extension TokyoCabinetBackend {
    /// Runs `body` on committed saves only; see ``StoreServices/withCommittedState(_:)``.
    /// A reader's outermost call takes the shared commit lock (waiting while the
    /// writer commits), refuses a restore a killed process left half done, and
    /// reopens each open table whose file changed since its handle looked (records
    /// added or removed, or the file replaced by a rebuild or a restore); a table
    /// in which a killed writer left a transaction is refused
    /// (``CabinetError/recoveryPending(path:reason:)``). A writer runs `body` as it is.
    public func withCommittedState<R>(_ body: () throws -> R) throws -> R {
        guard options.readOnly, let commits = lock?.commits else { return try body() }
        return try commits.holding(whenTaken: refreshOpenTables, body)
    }

    /// Runs `body` while readers in other processes wait; see ``StoreServices/withExclusiveCommit(_:)``.
    /// A reader runs `body` as it is (its writes throw ``CabinetError/readOnly(path:reason:)``).
    public func withExclusiveCommit<R>(_ body: () throws -> R) throws -> R {
        guard !options.readOnly, let commits = lock?.commits else { return try body() }
        return try commits.holding(whenTaken: {}, body)
    }

    /// Brings every open table of a reader to the committed state of its file.
    private func refreshOpenTables() throws {
        if restorePending { try checkWritableForRecovery("a restore was interrupted") }
        for (name, table) in tables {
            readerStamps[name] = try table.refreshForReading(since: readerStamps[name])
        }
    }
}

extension TokyoCabinetBackend: CommitWatchingBackend {
    /// A read-only open calls `handler` after each commit the writer (in
    /// another process) announces in `.cabinet-commits`, on a thread of its own,
    /// within moments of the commit, without polling the store (inotify; see
    /// docs/FORMAT.md, "Commit announcements"). A writable open, which makes
    /// the commits itself, calls it never. `nil` stops.
    public func watchCommits(_ handler: (@Sendable (OthersSave) -> Void)?) {
        commitWatcher?.stop()
        commitWatcher = nil
        guard let handler, options.readOnly else { return }
        commitWatcher = CommitWatcher(directory: path) { tables in
            guard let tables else { return handler(OthersSave(tables: [:], wholeStore: true)) }
            handler(OthersSave(tables: Dictionary(uniqueKeysWithValues: tables.map { ($0, Set<[UInt8]>?.none) })))
        }
    }
}

extension TokyoCabinetBackend: AnnouncesCommits {
    package func willCommit(tables names: [String]) {
        lock?.commits?.announcer?.changed(tables: names)
    }

    package func willChangeEverything() {
        lock?.commits?.announcer?.changedAll()
    }
}
