/// A backend that keeps every table in memory: for tests, previews and
/// scratch stores that need no file.
///
/// ```swift
/// let store = try ObjectStore(backend: MemoryBackend())
/// try store.register(Song.self)
/// ```
/// It behaves like ``TokyoCabinetBackend`` (transactions included), and its
/// content is lost when the store closes.
public final class MemoryBackend: StorageBackend {
    public let path: String
    private var tables: [String: MemoryTable] = [:]
    private var formatMarker: String?
    private var catalog: StoreCatalog?

    /// A new, empty in-memory backend; `name` appears in error messages.
    public init(name: String = "memory") {
        path = name
    }

    public func openTable(named name: String) throws -> any StorageTable {
        if let table = tables[name] { return table }
        let table = MemoryTable(path: path + "/" + name)
        tables[name] = table
        return table
    }

    public func tableNames() throws -> [String] {
        tables.keys.sorted()
    }

    public func hasTable(named name: String) throws -> Bool { tables[name] != nil }

    public func close() {}

    public func readFormatMarker() throws -> String? { formatMarker }

    public func writeFormatMarker(_ text: String) throws { formatMarker = text }

    public func readCatalog() throws -> StoreCatalog? { catalog }

    public func writeCatalog(_ catalog: StoreCatalog) throws { self.catalog = catalog }

    public var isReadOnly: Bool { false }

    /// Always empty: nothing of an in-memory store outlives a crash.
    public func pendingRecovery() throws -> [String] { [] }
}

/// One in-memory table; transactions keep the values they replace so abort can put them back.
final class MemoryTable: StorageTable {
    let path: String
    private var values: [[UInt8]: [UInt8]] = [:]
    private var inTransaction = false
    /// The value each key had before the open transaction changed it (nil: it had none).
    private var undoLog: [[UInt8]: [UInt8]?] = [:]

    init(path: String) {
        self.path = path
    }

    var recordCount: Int { values.count }

    /// The bytes of every key and value (what a file would hold, without its overhead).
    var byteCount: UInt64 { values.reduce(0) { $0 + UInt64($1.key.count + $1.value.count) } }

    func withValue<R>(forKey key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        guard let value = values[Array(key)] else { return nil }
        return try value.withUnsafeBytes(body)
    }

    func setValue(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer) throws {
        let key = Array(key)
        remember(key)
        values[key] = Array(value)
    }

    func removeValue(forKey key: UnsafeRawBufferPointer) throws -> Bool {
        let key = Array(key)
        remember(key)
        return values.removeValue(forKey: key) != nil
    }

    private func remember(_ key: [UInt8]) {
        guard inTransaction, undoLog.index(forKey: key) == nil else { return }
        undoLog[key] = .some(values[key])
    }

    func forEach(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
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
        inTransaction = true
        undoLog = [:]
    }

    func commitTransaction() throws {
        inTransaction = false
        undoLog = [:]
    }

    func abortTransaction() throws {
        let log = undoLog
        inTransaction = false
        undoLog = [:]
        for (key, old) in log {
            if let old { values[key] = old } else { values.removeValue(forKey: key) }
        }
    }
}
