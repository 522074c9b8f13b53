/// A backend that keeps every table in memory: for tests, previews and
/// scratch stores that need no file.
///
/// ```swift
/// let backend = MemoryBackend(name: "scratch")
/// let notes = try backend.openTable(named: "Notes")    // created empty
/// print(try notes.recordCount, try backend.tableNames())    // 0 ["Notes"]
/// ```
/// It behaves like ``TokyoCabinetBackend`` (transactions included), and its
/// content lives as long as the backend. Nothing of it outlives the process, so
/// it needs no journal, no lock and no recovery. It is also the smallest
/// complete ``StorageBackend``, and its own ``StoreServices``.
public final class MemoryBackend: StorageBackend, StoreServices {
    public let path: String
    private var tables: [String: MemoryTable] = [:]
    private var formatMarker: String?
    private var catalog: StoreCatalog?
    private var journal: [UInt8]?

    /// A new, empty in-memory backend; `name` appears in error messages.
    public init(name: String = "memory") {
        path = name
    }

    public var services: any StoreServices { self }

    /// Each table's changes in one transaction: in memory, none can fail half way.
    /// A batch's ``WriteBatch/durability`` changes nothing: no disk holds it,
    /// so a ``CommitDurability/flushed`` batch has nothing to flush.
    public func commit(_ batch: WriteBatch) throws {
        try commits.commit(batch, to: self)
    }

    public var hasUnfinishedCommit: Bool { false }

    @discardableResult
    public func finishUnfinishedCommit() throws -> Int? { nil }

    private let commits = JournaledCommit()

    public func openTable(named name: String) throws -> any StorageTable {
        if let table = tables[name] { return table }
        let table = MemoryTable(path: location(ofTable: name))
        tables[name] = table
        return table
    }

    public func openOrderedTable(named name: String) throws -> any OrderedStorageTable {
        if let table = tables[name] {
            guard let ordered = table as? MemoryOrderedTable else {
                throw CabinetError.notADatabase(RecordLocation(file: table.path), reason: "it is a table that keeps no order, where an ordered one was expected")
            }
            return ordered
        }
        let table = MemoryOrderedTable(path: location(ofTable: name))
        tables[name] = table
        return table
    }

    public func removeTable(named name: String) throws {
        tables.removeValue(forKey: name)?.close()
    }

    public func tableNames() throws -> [String] {
        tables.keys.sorted()
    }

    public func hasTable(named name: String) throws -> Bool { tables[name] != nil }

    public func location(ofTable name: String) -> String { path + "/" + name }

    /// Always empty: nothing but tables can be in an in-memory store.
    public func storageProblems() throws -> [StorageProblem] { [] }

    /// Copies `source` into a new set of tables, then takes them in one step: a
    /// copy that fails part way leaves this store as it was. Tables handed out
    /// before are closed (they throw ``CabinetError/storeClosed(path:)``), as the
    /// protocol says: a store still open on them would otherwise go on reading
    /// and saving records that are no longer this backend's, and lose them.
    public func replaceContents(with source: any StorageBackend, formatMarker: String) throws {
        try replaceContents(with: source, formatMarker: formatMarker, progress: nil)
    }

    /// ``replaceContents(with:formatMarker:)``, reporting the records copied.
    public func replaceContents(with source: any StorageBackend, formatMarker: String, progress: StoreProgress.Handler?) throws {
        let copy = MemoryBackend(name: path)
        try copy.copyContents(of: source, formatMarker: formatMarker, progress: progress)
        for table in tables.values { table.close() }
        (tables, self.formatMarker, catalog, journal) = (copy.tables, copy.formatMarker, copy.catalog, nil)
    }

    /// Does nothing: the content stays, for the next store opened on this backend.
    public func close() {}

    // MARK: Services

    /// Always `false`: only this process can reach the store, so there is no lock to share.
    public var isReadOnly: Bool { false }

    /// `false`: a save interrupted in memory dies with the memory, so it needs no journal.
    public var needsJournal: Bool { false }

    public var journalLocation: String { path + "/journal" }

    public func writeJournal(_ bytes: [UInt8]) throws { journal = bytes }

    public func readJournal() throws -> [UInt8]? { journal }

    public func removeJournal() throws { journal = nil }

    public var formatMarkerLocation: String { path + "/format" }

    public func readFormatMarker() throws -> String? { formatMarker }

    public func writeFormatMarker(_ text: String) throws { formatMarker = text }

    public func readCatalog() throws -> StoreCatalog? { catalog }

    public func writeCatalog(_ catalog: StoreCatalog) throws { self.catalog = catalog }

    /// Always empty: nothing of an in-memory store outlives a crash.
    public func pendingRecovery() throws -> [PendingRecovery] { [] }

    /// Runs `body`: only this process reaches the store, so no writer elsewhere changes it.
    public func withCommittedState<R>(_ body: () throws -> R) throws -> R { try body() }

    /// Runs `body`: only this process reaches the store, so no reader elsewhere waits.
    public func withExclusiveCommit<R>(_ body: () throws -> R) throws -> R { try body() }
}

/// One in-memory table; transactions keep the values they replace so abort can put them back.
/// ``MemoryOrderedTable`` keeps its keys in order besides.
class MemoryTable: TransactionalTable {
    let path: String
    fileprivate(set) var values: [[UInt8]: [UInt8]] = [:]
    private var inTransaction = false
    /// The value each key had before the open transaction changed it (nil: it had none).
    private var undoLog: [[UInt8]: [UInt8]?] = [:]
    /// Set when the backend's contents were replaced: this table is no longer one of them.
    private var isClosed = false

    init(path: String) {
        self.path = path
    }

    /// Lets go of the records; every later call throws ``CabinetError/storeClosed(path:)``.
    func close() {
        isClosed = true
        values = [:]
        keysCleared()
        undoLog = [:]
        inTransaction = false
    }

    /// Drops every record (outside a transaction).
    func removeAllValues() {
        values = [:]
        undoLog = [:]
        keysCleared()
    }

    /// Told of each key that comes or goes (an ordered table keeps them in order).
    func keyAdded(_ key: [UInt8]) {}
    func keyRemoved(_ key: [UInt8]) {}
    func keysCleared() {}

    func checkOpen() throws {
        if isClosed { throw CabinetError.storeClosed(path: path) }
    }

    var recordCount: Int { values.count }

    /// The bytes of every key and value (what a file would hold, without its overhead).
    var byteCount: UInt64 { values.reduce(0) { $0 + UInt64($1.key.count + $1.value.count) } }

    func withValue<R>(forKey key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try checkOpen()
        guard let value = values[Array(key)] else { return nil }
        return try value.withUnsafeBytes(body)
    }

    func withValues(forKeys keys: [[UInt8]], _ body: (Int, UnsafeRawBufferPointer?) throws -> Void) throws {
        try checkOpen()
        for (index, key) in keys.enumerated() {
            if let value = values[key] { try value.withUnsafeBytes { try body(index, $0) } } else { try body(index, nil) }
        }
    }

    func setValue(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer) throws {
        try checkOpen()
        let key = Array(key)
        remember(key)
        if values.updateValue(Array(value), forKey: key) == nil { keyAdded(key) }
    }

    func removeValue(forKey key: UnsafeRawBufferPointer) throws -> Bool {
        try checkOpen()
        let key = Array(key)
        remember(key)
        guard values.removeValue(forKey: key) != nil else { return false }
        keyRemoved(key)
        return true
    }

    /// Does nothing: a dictionary grows by itself.
    func reserveCapacity(_ records: Int) throws { try checkOpen() }

    /// Does nothing: a dictionary keeps no free space.
    func compact() throws { try checkOpen() }

    private func remember(_ key: [UInt8]) {
        guard inTransaction, undoLog.index(forKey: key) == nil else { return }
        undoLog[key] = .some(values[key])
    }

    func forEach(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        try checkOpen()
        // Row keys in ascending order, like a freshly written hash file.
        for key in values.keys.sorted(by: MemoryTable.rowOrder) {
            guard let value = values[key] else { continue }
            let goOn = try key.withUnsafeBytes { k in try value.withUnsafeBytes { v in try body(k, v) } }
            if !goOn { return }
        }
    }

    /// Shorter keys first, then from the last byte: 4-byte little-endian row keys sort by row ID.
    private static func rowOrder(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        if a.count != b.count { return a.count < b.count }
        return a.reversed().lexicographicallyPrecedes(b.reversed())
    }

    func beginTransaction() throws {
        try checkOpen()
        if inTransaction { throw CabinetError.transactionAlreadyOpen(path: path) }
        inTransaction = true
        undoLog = [:]
    }

    func commitTransaction() throws {
        try checkOpen()
        inTransaction = false
        undoLog = [:]
    }

    func abortTransaction() throws {
        try checkOpen()
        let log = undoLog
        inTransaction = false
        undoLog = [:]
        for (key, old) in log {
            let had = values[key] != nil
            if let old { values[key] = old } else { values.removeValue(forKey: key) }
            if had && old == nil { keyRemoved(key) }
            if !had && old != nil { keyAdded(key) }
        }
    }
}

extension MemoryBackend: ConcurrentReadingBackend {
    /// Always `true`: dictionaries that no thread changes meanwhile may be read from any number of threads.
    public var allowsConcurrentReads: Bool { true }
}
