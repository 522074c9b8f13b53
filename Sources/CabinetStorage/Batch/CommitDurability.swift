/// How far a commit's changes must have gone when the commit returns: what a
/// ``WriteBatch`` asks of its backend (``WriteBatch/durability``), as LevelDB's
/// `WriteOptions::sync` does of a write.
///
/// ```swift
/// var batch = WriteBatch()
/// batch.set(record, forKey: rowKey, inTable: "Payment")
/// batch.durability = .flushed          // on the disk before commit returns
/// try backend.commit(batch)
/// ```
/// The levels are ordered, weakest first: batches merged into one
/// (``WriteBatch/append(contentsOf:)``, a `StorePool`'s group commit) take the
/// strongest of theirs, `max(a, b)`.
///
/// The level belongs to a commit, not to what it changes: it is not part of
/// the batch's bytes (``WriteBatch/encoded()``, the save journal's format), and
/// a journal replayed after a crash is not a new commit.
public enum CommitDurability: Sendable, Equatable, Hashable, Comparable, CustomStringConvertible {
    /// As the backend was opened. Tokyo Cabinet: the commit survives a killed
    /// process; with `TokyoCabinetBackend.Options.syncOnCommit`, a power loss
    /// too. The memory backend: nothing outlives the process. Redis: what the
    /// server's own configuration (`appendonly`, `appendfsync`) promises.
    case asOpened
    /// Flushed to stable storage before the commit returns: the commit survives
    /// a power loss, on a backend opened without `syncOnCommit` too, and so does
    /// every commit the same backend made before it. Tokyo Cabinet flushes the
    /// journal, each file the batch changes (and any an earlier commit left
    /// unflushed), the catalog and the directory. Redis: the server has the
    /// batch in its append-only file, fsynced; a server that cannot promise it
    /// refuses the batch with ``CabinetError/Code-swift.struct/durabilityUnavailable``
    /// and nothing written. The memory backend keeps nothing on a disk: there is
    /// nothing to flush, and the batch commits as at ``asOpened``.
    case flushed

    public var description: String {
        switch self {
        case .asOpened: "as opened"
        case .flushed: "flushed"
        }
    }
}

/// A backend that can tell, before anything is staged, whether it can commit
/// at a level: a `StorePool` asks when a flushed block starts, so that a
/// server that cannot flush fails that block alone, with nothing staged,
/// rather than the group commit it would join (and every block in it).
/// A backend that is not one takes every level (``StorageBackend/commit(_:)``
/// still refuses one it cannot keep).
package protocol DurabilityChecking: AnyObject {
    /// Throws ``CabinetError/Code-swift.struct/durabilityUnavailable`` if a
    /// commit at `level` would be refused now.
    func checkDurability(_ level: CommitDurability) throws
}
