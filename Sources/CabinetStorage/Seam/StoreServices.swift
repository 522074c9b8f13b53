/// What a store keeps beside its tables: the save journal, the format marker,
/// the catalog of tables, the lock that keeps it to one writer, and the
/// recovery an interrupted writer left to finish. A ``StorageBackend`` vends
/// them as its ``StorageBackend/services``.
///
/// They are a protocol of their own, not more requirements of
/// ``StorageBackend``, because they are another kind of thing with another
/// contract: each one is a small named value written whole or not at all,
/// where a table is many records changed in transactions. Code that needs only
/// them (the record format, the journal's replay) takes only them, and a
/// wrapper that changes how tables behave (counting reads, failing writes)
/// forwards them with one line. A backend that keeps them with its tables
/// returns itself:
/// ```swift
/// extension MyBackend: StoreServices { ... }      // the journal, marker and catalog as keys of MyBackend's store
/// var services: any StoreServices { self }
/// ```
///
/// **What every requirement must guarantee**
/// - *Whole or not at all*: each write (journal, marker, catalog) replaces the
///   old value atomically. A reader, in this process or another, and the next
///   open after a crash at any instant, sees the old value or the new one,
///   never a mix or a prefix (a file backend writes a temporary and renames it).
/// - *Durability*: a write has reached where the store lives when it returns;
///   a backend that promises power-loss durability (Tokyo Cabinet's
///   `syncOnCommit`) has also flushed it to the disk.
/// - *Read-only*: while ``isReadOnly``, nothing is written, not even to tidy up:
///   writes throw ``CabinetError/readOnly(path:reason:)``; reads still work.
/// - *Closed*: after the backend's ``StorageBackend/close()``, reads and writes
///   throw ``CabinetError/storeClosed(path:)``: the store's lock is gone, and
///   another process may have opened the store since. (A backend that is its
///   own store, as ``MemoryBackend``, may keep serving, as its tables may.)
/// - *Errors*: damage is thrown as ``CabinetError/malformedRecord(_:reason:)``
///   naming where the value is kept; a failure of the medium (a full disk, a
///   lost connection) as ``CabinetError/backendFailure(_:operation:underlying:)``
///   in the backend's own domain, or, for a failed system call (as the Tokyo
///   Cabinet backend's files give), ``CabinetError/systemCallFailure(_:operation:errno:message:)``.
///   Nothing traps on damaged data.
public protocol StoreServices: AnyObject {
    /// How this open holds the store: `false` as its one writer, `true` as one
    /// of any number of readers.
    ///
    /// The writer's lock is taken when the backend opens, for as long as it is
    /// open: while a writer has the store, a second writer's open (in this
    /// process or another) throws ``CabinetError/storeLocked(path:pid:)`` at once.
    /// Readers in other processes open alongside the writer and each other, and
    /// see whole saves only (see ``withCommittedState(_:)``); inside one process a
    /// store is open either for writing once or for reading. ``StorageBackend/close()``
    /// releases the lock, and so must the death of the process that held it (a
    /// lock a crash leaves behind would lock the store for good). A store only
    /// one process can reach (in memory) needs no lock.
    var isReadOnly: Bool { get }

    /// Runs `body`, one read operation of a reader (a fetch, a scan, loading a
    /// fault, a whole `cabinet verify`), on committed saves only: while it runs
    /// no writer changes the tables, and the tables this backend has open show
    /// the last save committed before it started (a reader's handles are brought
    /// up to date first: records added or removed, files rebuilt and replaced).
    /// Calls nest: an inner call runs inside the outer one's state. A table in
    /// which a killed writer left a transaction throws
    /// ``CabinetError/recoveryPending(path:reason:)`` when it is read.
    ///
    /// A writer, and a store no other process can reach, runs `body` as it is:
    /// the writer is the only one changing its tables. The layer above may skip
    /// the call for a store that is not ``isReadOnly``.
    /// ```swift
    /// let count = try backend.services.withCommittedState { try backend.openTable(named: "Song").recordCount }
    /// ```
    func withCommittedState<R>(_ body: () throws -> R) throws -> R

    /// Runs `body`, the part of a writer's operation that changes tables (a save
    /// from its first transaction, or its journal, to the last commit; a rebuild
    /// of a file; a replay; a restore's swaps), exclusive of every reader's
    /// ``withCommittedState(_:)``: it waits for the readers' operations in
    /// progress, and they wait for it. Calls nest. A reader, and a store no other
    /// process can reach, runs `body` as it is.
    func withExclusiveCommit<R>(_ body: () throws -> R) throws -> R

    /// Whether the tables outlive the process, so that a save touching several
    /// of them must go through the journal to stay all-or-nothing. `false` for a
    /// store nothing of which survives the process (in memory): it never writes
    /// a journal, though the journal requirements still work.
    var needsJournal: Bool { get }

    /// Where the journal is kept, for messages: a file's path, a key's name.
    var journalLocation: String { get }

    /// Stores the journal of a save, whole or not at all, replacing any other.
    ///
    /// If it returns, the journal is there and durable: it is the save, and the
    /// next open replays it. If it throws, the journal may still be there
    /// (written whole, then its flush to the disk failed): the caller calls
    /// ``removeJournal()`` to take it back, and goes on with the save as
    /// decided only if that throws too. So after a failure that left no whole
    /// journal, ``removeJournal()`` must succeed.
    func writeJournal(_ bytes: [UInt8]) throws

    /// The journal a save left, whole, or `nil` if there is none. Never part of
    /// one: a journal whose write did not finish is not there. A reader writes
    /// nothing; a writer may remove what an unfinished write left behind.
    func readJournal() throws -> [UInt8]?

    /// Removes the journal once its save is in every table; a journal that is
    /// not there is not an error. Durable when it returns, like a write: a
    /// journal that came back after a crash would replay an old save over newer ones.
    func removeJournal() throws

    /// Where the format marker is kept, for messages.
    var formatMarkerLocation: String { get }

    /// The store's format marker, a short text the layer above writes once and
    /// reads at every open, or `nil` if it has none.
    func readFormatMarker() throws -> String?

    /// Records the store's format marker, whole or not at all.
    func writeFormatMarker(_ text: String) throws

    /// The store's catalog of tables, or `nil` if it has none (a store written
    /// before catalogs). Throws ``CabinetError/malformedRecord(_:reason:)`` if it is
    /// damaged (see ``StoreCatalog/init(encoded:file:)``).
    func readCatalog() throws -> StoreCatalog?

    /// Replaces the store's catalog, whole or not at all.
    func writeCatalog(_ catalog: StoreCatalog) throws

    /// What a writable open must finish before the tables read consistently
    /// (replay a journal, roll back a table's interrupted transaction), each
    /// with where it is kept; empty when nothing is pending. It only looks:
    /// it writes nothing, even for a writer. A reader must refuse to read while
    /// it is not empty (the layer above throws ``CabinetError/recoveryPending(path:reason:)``).
    /// ```swift
    /// var reading = TokyoCabinetBackend.Options(); reading.readOnly = true
    /// let backend = try TokyoCabinetBackend(directory: "/tmp/music", options: reading)
    /// for work in try backend.services.pendingRecovery() { print("a writable open will finish: \(work)") }
    /// ```
    func pendingRecovery() throws -> [PendingRecovery]
}

/// One piece of work a writable open finishes: see ``StoreServices/pendingRecovery()``.
public struct PendingRecovery: Sendable, Equatable, CustomStringConvertible {
    /// What is to be finished, in words that name where it is kept.
    public var description: String
    /// The table that must not be opened until then (opening it would finish the
    /// work, writing, or read it half-done), or `nil` for work that concerns the
    /// whole store (a journal).
    public var table: String?
    /// Why a writable open cannot finish it as it is, or `nil` if it can: a damaged
    /// journal, which the writable open refuses with this reason
    /// (``CabinetError/malformedRecord(_:reason:)``), so a reader can say it too.
    public var problem: String?

    public init(_ description: String, table: String? = nil, problem: String? = nil) {
        self.description = description
        self.table = table
        self.problem = problem
    }
}
