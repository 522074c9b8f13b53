import CTokyoCabinet

/// A hash file's transactions: one per table for each batch a commit applies
/// (`JournaledCommit`), at the batch's durability, and what a failed one leaves
/// to repair.
extension TokyoCabinetTable {
    func beginTransaction() throws {
        try beginTransaction(durability: .asOpened)
    }

    func beginTransaction(durability: CommitDurability) throws {
        if readOnly { throw CabinetError.readOnly(path: path, reason: "a save needs to write") }
        // (A fatal handle's transaction is rolled back by the reopen below.)
        if let hdb = handle, hdb.pointee.tran, !isFatal { throw CabinetError.transactionAlreadyOpen(path: path) }
        if isFatal { reopenAfterFailure() }
        try rebuildIndexIfNeeded()
        let hdb = try open()
        TokyoCabinetTable.syncTransactions(of: hdb, durability == .flushed || options.syncOnCommit)
        guard tchdbtranbegin(hdb) else {
            let error = failure("begin transaction")
            TokyoCabinetTable.syncTransactions(of: hdb, options.syncOnCommit)
            reopenAfterFailure()
            throw error
        }
    }

    func commitTransaction() throws {
        let hdb = try open()
        let synced = hdb.pointee.omode & UInt32(HDBOTSYNC) != 0
        let committed = tchdbtrancommit(hdb)
        TokyoCabinetTable.syncTransactions(of: hdb, options.syncOnCommit)
        // A synced commit fsyncs the whole file: what earlier commits left in the page cache too.
        hasUnflushedChanges = !(committed && synced)
        guard committed else {
            // A commit that failed is not a commit. Tokyo Cabinet ends the transaction
            // anyway, leaving the file part-written and its log of the old pages in
            // place; put the transaction back so that aborting it restores those pages.
            let error = failure("commit")
            // Before any rollback: the file keeps its mark until it is rebuilt (flushed as the transaction was).
            TokyoCabinetFailedWriteMark.keep(hdb, sync: synced)
            if !hdb.pointee.tran {
                hdb.pointee.tran = true
                _ = tchdbtranabort(hdb)
            }
            reopenAfterFailure()
            repairIndexAfterFailedTransaction()
            throw error
        }
    }

    func abortTransaction() throws {
        let hdb = try open()
        let writeFailed = hdb.pointee.fatal
        // A flushed transaction's mark is flushed as with syncOnCommit (its span set the handle's sync).
        let synced = hdb.pointee.omode & UInt32(HDBOTSYNC) != 0
        // Before the rollback: the file keeps its mark until it is rebuilt.
        if writeFailed { TokyoCabinetFailedWriteMark.keep(hdb, sync: synced) }
        let aborted = tchdbtranabort(hdb)
        TokyoCabinetTable.syncTransactions(of: hdb, options.syncOnCommit)
        hasUnflushedChanges = true   // the rollback rewrote pages
        let error = aborted ? nil : failure("abort transaction")
        if aborted && !isFatal { TokyoCabinetLog.settleAfterRollback(hdb) }
        if !aborted || isFatal { reopenAfterFailure() }
        if writeFailed { repairIndexAfterFailedTransaction() }
        if let error { throw error }
    }

    /// Whether Tokyo Cabinet refuses further writes through the handle.
    var isFatal: Bool { handle?.pointee.fatal ?? false }

    /// After a transaction in which a write failed, the file's bucket array may
    /// be wrong even once the transaction is rolled back: Tokyo Cabinet changes
    /// a bucket even when it could not log the bucket's old value (it ignores
    /// that failure). The records themselves are rolled back correctly, so the
    /// file is rebuilt from them; until that succeeds, no new transaction starts.
    func repairIndexAfterFailedTransaction() {
        needsIndexRebuild = true
        try? rebuildIndexIfNeeded()
    }

    func rebuildIndexIfNeeded() throws {
        guard needsIndexRebuild else { return }
        let hdb = try open()
        try rebuild(buckets: Int64(hdb.pointee.bnum), operation: "rebuild the index after a failed write")
        needsIndexRebuild = false
    }
}
