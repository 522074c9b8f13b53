/// The store's services as dot files beside the tables (see `docs/FORMAT.md`):
/// the format marker and the catalog each written in full under `NAME.tmp`
/// (created exclusively, never through a link) and renamed over `NAME`, so it
/// is whole or absent, with `syncOnCommit` the file and the directory flushed
/// first; the journal written in place (``TokyoCabinetJournalFile``). Reads
/// follow no link and open no FIFO.
extension TokyoCabinetBackend {
    /// The file that records the store's record format.
    public static let formatFileName = ".cabinet-format"
    /// The file that lists the store's tables (see ``StoreCatalog``).
    public static let catalogFileName = ".cabinet-catalog"
    /// The journal of a save in progress.
    public static let journalFileName = ".cabinet-journal"

    /// Every table is a file of its own, committed on its own: a save of several needs the journal.
    public var needsJournal: Bool { true }

    public var isReadOnly: Bool { options.readOnly }

    /// Throws ``CabinetError/readOnly(path:reason:)`` for a read-only backend,
    /// and ``CabinetError/storeClosed(path:)`` after ``close()``.
    func checkWritable(_ reason: String) throws {
        try checkOpen()
        if options.readOnly { throw CabinetError.readOnly(path: path, reason: reason) }
    }

    /// Throws ``CabinetError/storeClosed(path:)`` after ``close()``: the store's
    /// lock is released then, and a service that went on would read or write the
    /// directory of a store another process may have opened since.
    func checkOpen() throws {
        guard lock != nil else { throw CabinetError.storeClosed(path: path) }
    }

    var journalPath: String { path + "/" + TokyoCabinetBackend.journalFileName }

    public var journalLocation: String { journalPath }

    public func writeJournal(_ bytes: [UInt8]) throws {
        try checkWritable("a save needs to write")
        try journalFile.write(bytes)
    }

    public func readJournal() throws -> [UInt8]? {
        try checkOpen()
        // A leftover temporary (an older Cabinet's) is a journal that never became one; a reader writes nothing, so leaves it.
        if !options.readOnly { try? DirectoryFiles.remove(journalPath + ".tmp") }
        // A reader asks at every read operation: through the file it keeps open.
        let contents = options.readOnly ? try journalProbe.contents() : try TokyoCabinetJournalFile.contents(of: journalPath)
        switch contents {
        case .none, .empty, .torn: return nil
        case .journal(let bytes), .legacy(let bytes): return bytes
        case .unreadable(let bytes, let reason):
            // A reader only learns a journal is there (a recovery is pending); the writer that
            // would replay it is told what is wrong with it, rather than the replay's "no magic".
            if options.readOnly { return bytes }
            throw CabinetError.malformedRecord(RecordLocation(file: journalPath), reason: Self.damagedJournal(reason))
        }
    }

    public func removeJournal() throws {
        try checkOpen()
        // A reader writes no journal, and must not take back one a killed writer left.
        if options.readOnly { return }
        try journalFile.remove()
    }

    /// Whether the store holds a save's journal to replay (not one whose write a kill cut short).
    package static func hasPendingJournal(inDirectory directory: String) throws -> Bool {
        switch try TokyoCabinetJournalFile.contents(of: directory + "/" + journalFileName) {
        case .none, .empty, .torn: return false
        case .journal, .legacy, .unreadable: return true
        }
    }

    public var formatMarkerLocation: String { path + "/" + TokyoCabinetBackend.formatFileName }

    public func readFormatMarker() throws -> String? {
        try checkOpen()
        return try DirectoryFiles.read(formatMarkerLocation).map { String(decoding: $0, as: UTF8.self) }
    }

    public func writeFormatMarker(_ text: String) throws {
        try checkWritable("a new store needs its format marker written")
        try DirectoryFiles.writeWhole(Array(text.utf8), to: formatMarkerLocation, directory: path, sync: options.syncOnCommit)
        // Renamed into place unflushed: a flushed commit flushes it first, or a
        // power loss could keep its name with no bytes (an unsupported format).
        if !options.syncOnCommit { unflushedServiceFiles.insert(TokyoCabinetBackend.formatFileName) }
    }

    public func readCatalog() throws -> StoreCatalog? {
        try checkOpen()
        let file = path + "/" + TokyoCabinetBackend.catalogFileName
        return try DirectoryFiles.read(file).map { try StoreCatalog(encoded: $0, file: file) }
    }

    public func writeCatalog(_ catalog: StoreCatalog) throws {
        try checkWritable("the store's catalog needs to be written")
        let final = path + "/" + TokyoCabinetBackend.catalogFileName
        try DirectoryFiles.writeWhole(catalog.encoded, to: final, directory: path, sync: options.syncOnCommit || journalFile.flushing)
        // Renamed into place unflushed: a later flushed commit flushes it first.
        if options.syncOnCommit || journalFile.flushing {
            unflushedServiceFiles.remove(TokyoCabinetBackend.catalogFileName)
        } else {
            unflushedServiceFiles.insert(TokyoCabinetBackend.catalogFileName)
        }
    }

    /// What a writable open must finish before the files read consistently: a
    /// save's journal to replay, and each table file whose transaction a killed
    /// writer left half-done (its `.wal`, which Tokyo Cabinet would roll back, and
    /// write, at the first open, even a reader's). Empty when there is nothing.
    public func pendingRecovery() throws -> [PendingRecovery] {
        try checkOpen()
        var pending: [PendingRecovery] = []
        switch try TokyoCabinetJournalFile.contents(of: journalPath) {
        case .none, .empty, .torn: break
        case .journal, .legacy:
            pending.append(PendingRecovery("a journal, \(TokyoCabinetBackend.journalFileName), of a save that changed several files"))
        case .unreadable(_, let reason):
            pending.append(PendingRecovery("a journal, \(TokyoCabinetBackend.journalFileName), that is damaged (\(reason)): a writable open refuses it",
                                           problem: Self.damagedJournal(reason)))
        }
        for table in try TokyoCabinetDirectory.interruptedTransactions(in: path) {
            pending.append(PendingRecovery("\(table).wal, a transaction of \(table) that did not finish", table: table))
        }
        return pending
    }

    /// The reason a damaged journal is refused with, by the writer and in ``pendingRecovery()``.
    static func damagedJournal(_ reason: String) -> String { "the save journal is damaged: \(reason)" }
}
