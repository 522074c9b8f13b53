/// A table with transactions of its own: how the built-in backends make a
/// ``WriteBatch`` all or nothing (``JournaledCommit``: each table's part in one
/// transaction, several tables through the journal or, for Redis, committed
/// together). Not part of the seam: a backend written from ``StorageBackend``'s
/// documentation commits batches as it can and needs none of this.
///
/// ```swift
/// try table.transaction {
///     try table.setValue(record, forRow: 7)
/// }
/// ```
package protocol TransactionalTable: StorageTable {
    /// Starts a transaction: changes until ``commitTransaction()`` become visible
    /// together, or not at all after ``abortTransaction()`` or a crash, whenever
    /// the process dies (the next open rolls back what a killed writer left).
    /// One transaction at a time per table: while one is open, a second call
    /// throws ``CabinetError/backendFailure(_:operation:code:message:)`` ("begin
    /// a transaction") and leaves the open one as it was. A read-only table throws
    /// ``CabinetError/readOnly(path:reason:)``.
    func beginTransaction() throws
    /// ``beginTransaction()`` for a commit at `durability`: a table whose file
    /// can be flushed makes ``commitTransaction()`` return only once the
    /// transaction is on stable storage when `durability` is
    /// ``CommitDurability/flushed``, and goes back to its own level after.
    /// Tables with nothing of their own to flush (memory, Redis, whose server
    /// flushes) keep the default, which ignores the level.
    func beginTransaction(durability: CommitDurability) throws
    /// Makes the transaction's changes permanent. If it throws, none of them
    /// were made: the table has rolled the transaction back, and the next
    /// ``beginTransaction()`` starts afresh.
    func commitTransaction() throws
    /// Discards the transaction's changes. If it throws, the table still ends
    /// up without them (at the latest at its next open).
    func abortTransaction() throws
}

extension TransactionalTable {
    package func beginTransaction(durability: CommitDurability) throws {
        try beginTransaction()
    }

    /// Runs `body` in one transaction: committed if it returns, aborted if it throws.
    package func transaction<R>(_ body: () throws -> R) throws -> R {
        try beginTransaction()
        do {
            let result = try body()
            try commitTransaction()
            return result
        } catch {
            try? abortTransaction()
            throw error
        }
    }
}

/// A table whose backend can commit the open transactions of several of its
/// tables as one, all or nothing (a Redis store's `MULTI`/`EXEC`), so that a
/// batch across several tables needs no journal (``StoreServices/needsJournal``
/// is `false`). ``commitTransactions(of:partial:)`` commits through it when the
/// tables all say ``canCommitTogether(with:)``.
package protocol GroupCommittingTable: TransactionalTable {
    /// Whether `other` is a table this one can commit together with (the same store's).
    func canCommitTogether(with other: any TransactionalTable) -> Bool

    /// Commits the open transactions of `tables` (this one among them, all of
    /// them accepted by ``canCommitTogether(with:)``) as one. If it throws,
    /// none of them was committed and every one has rolled back, as
    /// ``TransactionalTable/commitTransaction()`` does for one table.
    func commitTogether(_ tables: [any TransactionalTable]) throws
}

/// Commits the transactions of `tables` in order, the last step of a batch
/// that changes several tables. If one commit fails, that table has rolled
/// itself back: the ones after it are aborted, `partial` learns how many
/// committed before it (their changes stay), and the error is thrown.
///
/// Tables whose backend commits several transactions as one (``GroupCommittingTable``:
/// Redis's `MULTI`/`EXEC`) commit together instead: all of them or none.
package func commitTransactions(of tables: [any TransactionalTable], partial: (_ committed: Int) -> Void = { _ in }) throws {
    if tables.count > 1, let first = tables.first as? any GroupCommittingTable,
       tables.dropFirst().allSatisfy({ first.canCommitTogether(with: $0) }) {
        return try first.commitTogether(tables)
    }
    var committed = 0
    do {
        for table in tables {
            try table.commitTransaction()
            committed += 1
        }
    } catch {
        for table in tables[(committed + 1)...] { try? table.abortTransaction() }
        partial(committed)
        throw error
    }
}
