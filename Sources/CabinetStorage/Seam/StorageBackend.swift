/// Where a store keeps its tables: one table per stored class, plus one for
/// named buffers. ``TokyoCabinetBackend`` keeps each table in a Tokyo Cabinet
/// hash database file; ``MemoryBackend`` keeps them in memory.
///
/// The store talks to its backend only through this protocol and
/// ``StorageTable``. Every method that can fail throws a ``CabinetError``
/// that names the table; none traps on damaged data.
public protocol StorageBackend: AnyObject {
    /// Where the tables live (a directory path, or a name for in-memory stores).
    var path: String { get }

    /// Opens the table `name`, creating it if it does not exist.
    ///
    /// Throws ``CabinetError/notADatabase(_:reason:)`` when something that is
    /// not a table is in its place, ``CabinetError/storeLocked(path:pid:)`` when
    /// another process holds it, ``CabinetError/backendFailure(_:operation:code:message:)`` otherwise.
    func openTable(named name: String) throws -> any StorageTable

    /// The names of the tables that exist, whether opened or not.
    func tableNames() throws -> [String]

    /// Whether anything is in table `name`'s place: a table, or (for a file
    /// backend) a file that may be a damaged one. `false` means opening it would create it.
    func hasTable(named name: String) throws -> Bool

    /// Closes every table and releases the store's lock. Calling it twice does nothing.
    func close()

    /// Whether the tables outlive the process, so that a save touching several of
    /// them must go through a journal (see `SaveJournal`) to stay all-or-nothing.
    var needsJournal: Bool { get }

    /// Stores the journal so that it becomes visible whole or not at all.
    func writeJournal(_ bytes: [UInt8]) throws

    /// The journal left by a save that may not have finished, if any.
    func readJournal() throws -> [UInt8]?

    /// Removes the journal once its save is applied.
    func removeJournal() throws

    /// The store's format marker (see ``RecordFormat``), or `nil` if it has none.
    func readFormatMarker() throws -> String?

    /// Records the store's format marker.
    func writeFormatMarker(_ text: String) throws

    /// The store's catalog of tables, or `nil` if it has none (a store written by
    /// BNRPersistence or an older Cabinet). Throws if it is damaged.
    func readCatalog() throws -> StoreCatalog?

    /// Replaces the store's catalog, whole or not at all.
    func writeCatalog(_ catalog: StoreCatalog) throws


    /// Whether the backend only reads: it writes nothing, not even to recover.
    var isReadOnly: Bool { get }

    /// What a writable open must finish (replay a journal, roll back a file's
    /// interrupted transaction) before the tables read consistently, in words;
    /// empty when nothing is pending. A read-only ``ObjectStore`` refuses to open
    /// while it is not empty (``CabinetError/recoveryPending(path:reason:)``).
    /// ```swift
    /// var reading = TokyoCabinetBackend.Options(); reading.readOnly = true
    /// let backend = try TokyoCabinetBackend(directory: "/tmp/music", options: reading)
    /// for work in try backend.pendingRecovery() { print("a writable open will finish: \(work)") }
    /// ```
    func pendingRecovery() throws -> [String]
}

extension StorageBackend {
    public var needsJournal: Bool { false }
    public func writeJournal(_ bytes: [UInt8]) throws {}
    public func readJournal() throws -> [UInt8]? { nil }
    public func removeJournal() throws {}
}

/// One table of byte-string keys and values.
///
/// Reads hand the value to a closure for the duration of the call, so a
/// read loop copies each record once and allocates nothing per record.
public protocol StorageTable: AnyObject {
    /// The table's file (or name), used in error messages.
    var path: String { get }

    /// The number of records (every key, whatever the layer above keeps there).
    var recordCount: Int { get }

    /// The bytes the table occupies where it is kept: a file's size, free space
    /// included, or what an in-memory or remote table holds. For `cabinet info`.
    var byteCount: UInt64 { get }

    /// Calls `body` with the value stored under `key`, or returns `nil` if there is none.
    func withValue<R>(forKey key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R?

    /// Stores `value` under `key`, replacing any previous value.
    func setValue(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer) throws

    /// Removes the value under `key`; returns whether there was one.
    @discardableResult
    func removeValue(forKey key: UnsafeRawBufferPointer) throws -> Bool

    /// Prepares the table to hold about `records` records, before a save that
    /// will bring it there (a hash table grows its buckets). Called outside any
    /// transaction. Tables that need no preparation do nothing.
    func reserveCapacity(_ records: Int) throws

    /// Rewrites the table without free space. Tables that have none do nothing.
    func compact() throws

    /// Calls `body` with each key and value, in the table's own order, until it returns `false`.
    /// The table must not be changed while this runs.
    func forEach(_ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool) throws

    /// Starts a transaction: changes until ``commitTransaction()`` become visible
    /// together, or not at all after ``abortTransaction()``.
    func beginTransaction() throws
    /// Makes the transaction's changes permanent. If it throws, none of them
    /// were made: the table has rolled the transaction back, and the next
    /// ``beginTransaction()`` starts afresh.
    func commitTransaction() throws
    /// Discards the transaction's changes.
    func abortTransaction() throws
}

extension StorageTable {
    public func reserveCapacity(_ records: Int) throws {}
    public func compact() throws {}

    /// Calls `body` with the value under a 4-byte little-endian row key.
    @inlinable
    package func withValue<R>(forRow rowID: UInt32, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try withUnsafeBytes(of: rowID.littleEndian) { try withValue(forKey: $0, body) }
    }

    package func setValue(_ value: UnsafeRawBufferPointer, forRow rowID: UInt32) throws {
        try withUnsafeBytes(of: rowID.littleEndian) { try setValue(value, forKey: $0) }
    }

    @discardableResult
    package func removeValue(forRow rowID: UInt32) throws -> Bool {
        try withUnsafeBytes(of: rowID.littleEndian) { try removeValue(forKey: $0) }
    }

    /// Stores `value` under `key`, or removes the key when `value` is `nil`.
    package func apply(_ value: UnsafeRawBufferPointer?, forKey key: UnsafeRawBufferPointer) throws {
        if let value { try setValue(value, forKey: key) } else { try removeValue(forKey: key) }
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
