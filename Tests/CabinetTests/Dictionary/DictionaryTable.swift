import CabinetStorage
import Foundation

// Written from the seam's documentation only (StorageTable, OrderedStorageTable):
// a second in-memory backend, so the store tests show what the documented
// contract is enough for. Shared with the macro's package (Model/Tests links it).

/// One table's records, shared by every open of a ``DictionaryBackend/Contents``:
/// a dictionary of key bytes to value bytes. No transactions: the backend
/// applies a batch in one call that cannot stop half way.
final class DictionaryRecords {
    private(set) var values: [[UInt8]: [UInt8]] = [:]
    /// Whether scans go in key order (an ``OrderedStorageTable``).
    let isOrdered: Bool
    /// The bytes of every key and value, kept as they change: `byteCount` asks often.
    private(set) var byteCount = 0
    /// The keys in order, made when an ordered scan needs them and dropped when
    /// a key comes or goes. Behind `sortedKeysLock`: scans run on several threads
    /// at once (``DictionaryBackend/allowsConcurrentReads``), and the first one makes them.
    private var sortedKeys: [[UInt8]]?
    /// A pthread mutex (`NSLock`), not `Synchronization.Mutex`, whose futex
    /// ThreadSanitizer can't see into: `make tsan` flagged the scans it orders.
    private let sortedKeysLock = NSLock()

    init(ordered: Bool) {
        isOrdered = ordered
    }

    func value(_ key: [UInt8]) -> [UInt8]? { values[key] }

    /// Stores `value` under `key` (`nil`: removes it); returns what was there.
    @discardableResult
    func set(_ key: [UInt8], _ value: [UInt8]?) -> [UInt8]? {
        let old = value.map { values.updateValue($0, forKey: key) } ?? values.removeValue(forKey: key)
        if (old == nil) != (value == nil) { sortedKeysLock.withLock { sortedKeys = nil } }
        byteCount += (value.map { key.count + $0.count } ?? 0) - (old.map { key.count + $0.count } ?? 0)
        return old
    }

    func removeAll() {
        values = [:]
        sortedKeysLock.withLock { sortedKeys = nil }
        byteCount = 0
    }

    func reserveCapacity(_ count: Int) { values.reserveCapacity(count) }

    /// The keys in the order the documentation gives (bytes compared unsigned,
    /// a prefix first: what `lexicographicallyPrecedes` does for `UInt8`).
    func keysInOrder() -> [[UInt8]] {
        sortedKeysLock.withLock {
            if let sortedKeys { return sortedKeys }
            let made = values.keys.sorted { $0.lexicographicallyPrecedes($1) }
            sortedKeys = made
            return made
        }
    }
}

/// A table of a ``DictionaryBackend``: an open of one ``DictionaryRecords``,
/// which throws ``CabinetError/storeClosed(path:)`` once its backend closes it.
final class DictionaryTable: OrderedStorageTable {
    let path: String
    let records: DictionaryRecords
    private(set) var isClosed = false

    init(path: String, records: DictionaryRecords) {
        self.path = path
        self.records = records
    }

    func close() { isClosed = true }

    private func open() throws -> DictionaryRecords {
        if isClosed { throw CabinetError.storeClosed(path: path) }
        return records
    }

    var recordCount: Int { get throws { try open().values.count } }

    var byteCount: UInt64 { get throws { UInt64(try open().byteCount) } }

    func withValue<R>(forKey key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        guard let value = try open().value(Array(key)) else { return nil }
        return try value.withUnsafeBytes(body)
    }

    func withValues(forKeys keys: [[UInt8]], _ body: (Int, UnsafeRawBufferPointer?) throws -> Void) throws {
        let records = try open()
        for (index, key) in keys.enumerated() {
            if let value = records.value(key) { try value.withUnsafeBytes { try body(index, $0) } } else { try body(index, nil) }
        }
    }

    func setValue(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer) throws {
        try open().set(Array(key), Array(value))
    }

    func removeValue(forKey key: UnsafeRawBufferPointer) throws -> Bool {
        try open().set(Array(key), nil) != nil
    }

    func reserveCapacity(_ records: Int) throws { try open().reserveCapacity(records) }

    /// Nothing to do: a dictionary keeps no free space.
    func compact() throws { _ = try open() }

    /// In the dictionary's own order, or in key order for an ordered table.
    func forEach(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        let records = try open()
        guard !records.isOrdered else { return try forEach(from: nil, to: nil, descending: false, body) }
        for (key, value) in records.values {
            let more = try key.withUnsafeBytes { key in try value.withUnsafeBytes { try body(key, $0) } }
            if !more { return }
        }
    }

    func forEach(from lower: UnsafeRawBufferPointer?, to upper: UnsafeRawBufferPointer?, descending: Bool,
                 _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        let records = try open()
        let keys = records.keysInOrder()
        let start = lower.map { Self.firstIndex(notBelow: Array($0), in: keys) } ?? 0
        let end = upper.map { Self.firstIndex(notBelow: Array($0), in: keys) } ?? keys.count
        var index = descending ? end - 1 : start
        while start <= index && index < end {
            let key = keys[index]
            index += descending ? -1 : 1
            guard let value = records.value(key) else { continue }
            let more = try key.withUnsafeBytes { key in try value.withUnsafeBytes { try body(key, $0) } }
            if !more { return }
        }
    }

    /// Where `bound` would go in `keys`: the first key not below it.
    private static func firstIndex(notBelow bound: [UInt8], in keys: [[UInt8]]) -> Int {
        var (low, high) = (0, keys.count)
        while low < high {
            let middle = (low + high) / 2
            if keys[middle].lexicographicallyPrecedes(bound) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Never: nothing a dictionary does can fail half way.
    var isDamaged: Bool { false }

    func removeAll() throws { try open().removeAll() }
}
