import CabinetStorage

extension ObjectStore {
    /// Runs `body` as one read: in a read-only store, every fetch, scan and fault
    /// inside it sees the same committed saves, across every class (the writer,
    /// in another process, waits until it returns, so keep it short). Each call
    /// of a read-only store is such a read by itself; group calls that must agree.
    /// In a writable store it simply runs `body`.
    ///
    /// ```swift
    /// let reader = try ObjectStore(path: "/var/lib/bank", readOnly: true)
    /// try reader.register(Checking.self, Savings.self)
    /// let total = try reader.reading {
    ///     try reader.fetchAll(Checking.self).reduce(0) { $0 + $1.amount }
    ///         + reader.fetchAll(Savings.self).reduce(0) { $0 + $1.amount }
    /// }
    /// ```
    public func reading<R>(_ body: () throws -> R) throws -> R {
        useDetector.enter("reading(_:)")
        defer { useDetector.leave() }
        try checkOpen()
        return try readingCommittedState(body)
    }

    /// Whether a fetch reads a live object's record again: in a read-only store,
    /// whose writer saves in another process, a clean object (not changed in
    /// memory) takes the content of the last save, as a newly loaded one would.
    @inline(__always)
    func refreshesLiveObjects(_ object: StoredObject) -> Bool {
        coordinatesReads && object.changeState == .clean
    }

    /// Runs `body`, one read operation, on whole saves: for a read-only store,
    /// inside the backend's ``StoreServices/withCommittedState(_:)`` (the writer,
    /// in another process, does not commit meanwhile, and the tables show its
    /// last commit), refusing a save a killed writer left half-applied (its
    /// journal) with ``CabinetError/recoveryPending(path:reason:)``. Nested calls
    /// (a fault loaded inside a scan) run inside the outer one. A writable store,
    /// the only one changing its tables, runs `body` as it is.
    @inline(__always)
    func readingCommittedState<R>(_ body: () throws -> R) throws -> R {
        if otherWriters != nil { return try readingAmongOtherWriters(body) }
        guard coordinatesReads, committedReadDepth == 0 else { return try body() }
        return try readingCommittedStateAlongsideWriter(body)
    }

    /// A read of a store other processes write too: other processes' saves
    /// announced by now are taken in first, by the outermost read only. Never
    /// inside one (a scan with rows fetched and not yet made objects, a list
    /// read while its owner is decoded, a save encoding its records): what it
    /// fetched before would count as up to date, and a later save of it would
    /// overwrite theirs.
    private func readingAmongOtherWriters<R>(_ body: () throws -> R) throws -> R {
        if committedReadDepth == 0 { try takeInAnnouncedSaves() }
        committedReadDepth += 1
        defer { committedReadDepth -= 1 }
        return try body()
    }

    private func readingCommittedStateAlongsideWriter<R>(_ body: () throws -> R) throws -> R {
        let services = backend.services
        return try services.withCommittedState {
            committedReadDepth += 1
            defer { committedReadDepth -= 1 }
            if try services.readJournal() != nil {
                throw CabinetError.recoveryPending(path: path, reason: "a journal, \(services.journalLocation), of a save that changed several files")
            }
            return try body()
        }
    }

    /// Runs `body`, the part of a writer's operation that changes tables, while
    /// readers in other processes wait (``StoreServices/withExclusiveCommit(_:)``).
    func changingTables<R>(_ body: () throws -> R) throws -> R {
        try backend.services.withExclusiveCommit(body)
    }

    /// Runs `body`, which writes the backend's tables, as the store's
    /// ``StoreLink`` says: a plain store just runs it (holding the commit lock);
    /// a pool block's store runs it as its ``ContextLink`` says (refused in a read
    /// block, staged or under the pool's lock in a write block) and, for a save,
    /// announces the batch `committed` then gives (nothing for other writes).
    func writingTables<R>(announcing committed: (() -> WriteBatch?)? = nil, _ body: () throws -> R) throws -> R {
        try link.writingTables(of: self, announcing: committed, body)
    }
}
