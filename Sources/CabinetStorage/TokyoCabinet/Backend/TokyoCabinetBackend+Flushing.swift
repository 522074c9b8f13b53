/// A flushed commit (``CommitDurability/flushed``) on a store opened without
/// ``TokyoCabinetBackend/Options/syncOnCommit``: as durable as one with it,
/// while every other commit makes no flush it did not make before.
///
/// 1. What earlier commits left only in the page cache is flushed first: each
///    open file with unflushed changes (`tchdbsync`, `tcbdbsync`), the catalog,
///    and then the directory. A flushed commit that survives a power loss must
///    not outlive one that came before it (an object it refers to). If this
///    fails, nothing of the batch was written.
/// 2. The batch commits as any other (`JournaledCommit`), with the journal file
///    flushed (`TokyoCabinetJournalFile.flushing`: its write, its removal, its
///    name when it is made), each table's transaction synced as Tokyo Cabinet
///    syncs a handle opened with `HDBOTSYNC` (``TokyoCabinetTable/syncTransactions(of:_:)``),
///    and the catalog written with its file and the directory flushed.
/// 3. If the batch made a table's file, the directory is flushed, so that its
///    name outlives a power loss as its bytes do. The batch is committed by
///    then: a failure here is ``CabinetError/Code-swift.struct/durabilityUnconfirmed``.
extension TokyoCabinetBackend {
    func commitFlushed(_ batch: WriteBatch) throws {
        try flushEarlierCommits()
        hadFlushedCommit = true
        let newFiles = batch.tableNames.contains { tables[$0] == nil && !DirectoryFiles.exists(filePath(forTable: $0)) }
        journalFile.flushing = true
        defer { journalFile.flushing = false }
        try commits.commit(batch, to: self)
        guard newFiles else { return }
        do {
            try DirectoryFiles.syncDirectory(path)
        } catch {
            throw CabinetError.durabilityUnconfirmed(path: path, reason: "the save made a class file whose name could not be flushed to the disk (\(error))")
        }
    }

    /// Flushes what commits made since the last flushed one (or before this
    /// open) left in the page cache: the journal first (a state 1 kept
    /// without its state 0 would be replayed over this commit), files, the
    /// catalog and the format marker, then the directory (names they were
    /// made or renamed with).
    private func flushEarlierCommits() throws {
        var flushed = try journalFile.flushIfNeeded()
        for name in tables.keys.sorted() {
            guard let table = tables[name], table.hasUnflushedChanges else { continue }
            try table.sync()
            flushed = true
        }
        for name in unflushedServiceFiles.sorted() {
            try DirectoryFiles.syncFile(path + "/" + name)
            unflushedServiceFiles.remove(name)
            flushed = true
        }
        if flushed { try DirectoryFiles.syncDirectory(path) }
    }
}
