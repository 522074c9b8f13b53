import CTokyoCabinet

/// A B+ tree file's transactions: Tokyo Cabinet's, with the header logged
/// before the tree rewrites it, and the file reopened and rebuilt after a
/// failed write (see the type's comment).
extension TokyoCabinetOrderedTable {
    func beginTransaction() throws {
        try beginTransaction(durability: .asOpened)
    }

    func beginTransaction(durability: CommitDurability) throws {
        if options.readOnly { throw CabinetError.readOnly(path: path, reason: "a save needs to write") }
        // (A fatal handle's transaction is rolled back by the reopen below.)
        if let bdb = handle, bdb.pointee.tran, !isFatal { throw CabinetError.transactionAlreadyOpen(path: path) }
        if isFatal { reopenAfterFailure() }
        let bdb = try open()
        // The tree rewrites the header before its transaction (and log) begins.
        guard TokyoCabinetOrderedTable.logHeader(of: bdb) else {
            let error = failure("begin transaction")
            reopenAfterFailure()
            throw error
        }
        do {
            try whileHeaderLogged?()
        } catch {
            TokyoCabinetOrderedTable.dropHeaderLog(of: bdb)
            throw error
        }
        // After the header's log: its begin and void need no flush of their own.
        syncTransactions(of: bdb, durability == .flushed || options.syncOnCommit)
        let begun = tcbdbtranbegin(bdb)
        generation &+= 1
        guard begun else {
            syncTransactions(of: bdb, options.syncOnCommit)
            let error = failure("begin transaction")
            reopenAfterFailure()
            throw error
        }
        flushed()   // tcbdbtranbegin writes the cache's changed pages first
        startWriteCheck(bdb)
    }

    func commitTransaction() throws {
        let bdb = try open()
        let synced = bdb.pointee.hdb.map { $0.pointee.omode & UInt32(HDBOTSYNC) != 0 } ?? false
        let committed = tcbdbtrancommit(bdb)
        syncTransactions(of: bdb, options.syncOnCommit)
        // A synced commit fsyncs the whole file: what earlier commits left in the page cache too.
        hasUnflushedChanges = !(committed && synced)
        writeCheck = nil
        defer { generation &+= 1 }
        if committed { flushed() }
        if committed && isFatal {
            // Tokyo Cabinet went on after a failed write and committed without it
            // (it ignores some failures): no log is left to take it back.
            isDamaged = true
            throw CabinetError.backendFailure(RecordLocation(file: path), operation: "commit", code: tcbdbecode(bdb),
                                              message: "a write failed during the commit, which Tokyo Cabinet finished without it: the file must be rebuilt")
        }
        guard committed else {
            // A commit that failed is not a commit: Tokyo Cabinet has rolled the
            // file back, or left its log for the next open to do it; reopening
            // (without writing the page cache) and rebuilding finish the job.
            let error = failure("commit")
            // Before the reopen's rollback: the file keeps its mark until it is rebuilt.
            if let hdb = bdb.pointee.hdb { TokyoCabinetFailedWriteMark.keep(hdb, sync: synced) }
            reopenAfterFailure()
            rebuildAfterFailedWrite()
            throw error
        }
    }

    func abortTransaction() throws {
        let bdb = try open()
        let writeFailed = isFatal
        // A flushed transaction's mark is flushed as with syncOnCommit (its span set the handle's sync).
        let synced = bdb.pointee.hdb.map { $0.pointee.omode & UInt32(HDBOTSYNC) != 0 } ?? options.syncOnCommit
        // Before any rollback: the file keeps its mark until it is rebuilt.
        if writeFailed, let hdb = bdb.pointee.hdb { TokyoCabinetFailedWriteMark.keep(hdb, sync: synced) }
        let aborted = tcbdbtranabort(bdb)
        syncTransactions(of: bdb, options.syncOnCommit)
        hasUnflushedChanges = true   // the rollback rewrote pages
        writeCheck = nil
        defer { generation &+= 1 }
        let error = aborted ? nil : failure("abort transaction")
        // Tokyo Cabinet voids the transaction and keeps its log (the header): spent, emptied for readers.
        if aborted && !isFatal { TokyoCabinetOrderedTable.dropHeaderLog(of: bdb) }
        if !aborted || isFatal { reopenAfterFailure() }
        if writeFailed { rebuildAfterFailedWrite() }
        if let error { throw error }
    }

    /// Sets the sync of the hash file's transactions under the tree (see
    /// ``TokyoCabinetTable/syncTransactions(of:_:)``).
    private func syncTransactions(of bdb: UnsafeMutablePointer<TCBDB>, _ sync: Bool) {
        if let hdb = bdb.pointee.hdb { TokyoCabinetTable.syncTransactions(of: hdb, sync) }
    }

    /// Rewrites the file without free space (a copy renamed over it), the
    /// header logged while the tree rewrites it in the old file first.
    func optimize(_ bdb: UnsafeMutablePointer<TCBDB>) throws -> Bool {
        try withHeaderLogged(bdb) { tcbdboptimize(bdb, 0, 0, 0, -1, -1, UInt8.max) }
    }

    /// After a transaction in which a write failed, the hash file under the tree
    /// may keep a wrong bucket even once rolled back (see TokyoCabinetTable): its
    /// records are right, so the file is rewritten from them. If that fails, the
    /// table says it is damaged, and its owner rebuilds it from the class's records.
    func rebuildAfterFailedWrite() {
        // The optimize's copy, or the pages a failed reopen left, are unflushed: a flushed commit flushes them.
        hasUnflushedChanges = !options.syncOnCommit
        guard let bdb = handle, (try? optimize(bdb)) == true else {
            isDamaged = true
            reopenAfterFailure()
            return
        }
    }
}
