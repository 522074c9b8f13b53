/// An in-memory ``OrderedStorageTable``: a ``MemoryTable`` (its dictionary
/// answers single reads) that also keeps its keys in order for range scans.
final class MemoryOrderedTable: MemoryTable, OrderedStorageTable {
    private var order = SortedKeys()

    override func keyAdded(_ key: [UInt8]) { order.insert(key) }
    override func keyRemoved(_ key: [UInt8]) { order.remove(key) }
    override func keysCleared() { order = SortedKeys() }

    /// Always `false`: memory loses no write.
    var isDamaged: Bool { false }

    func removeAll() throws {
        try checkOpen()
        removeAllValues()
    }

    /// In key order, as a B+ tree file lists its records.
    override func forEach(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        try forEach(from: nil, to: nil, descending: false, body)
    }

    func forEach(from lower: UnsafeRawBufferPointer?, to upper: UnsafeRawBufferPointer?, descending: Bool,
                 _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        try checkOpen()
        try order.forEach(from: lower.map { Array($0) }, to: upper.map { Array($0) }, descending: descending) { key in
            guard let value = values[key] else { return true }
            return try key.withUnsafeBytes { k in try value.withUnsafeBytes { v in try body(k, v) } }
        }
    }
}

/// Byte-string keys in order (unsigned bytes, shorter first on a common
/// prefix), kept in chunks of at most ``chunkCapacity``: an insert or a remove
/// moves the keys of one chunk, not of the whole table, so a million inserts in
/// any order stay fast.
struct SortedKeys {
    static let chunkCapacity = 1024
    private var chunks: [[[UInt8]]] = []

    var count: Int { chunks.reduce(0) { $0 + $1.count } }

    private static func precedes(_ a: [UInt8], _ b: [UInt8]) -> Bool { a.lexicographicallyPrecedes(b) }

    /// The first chunk whose last key is not below `key` (`chunks.count` if none).
    private func chunkIndex(for key: [UInt8]) -> Int {
        var low = 0, high = chunks.count
        while low < high {
            let middle = (low + high) / 2
            if SortedKeys.precedes(chunks[middle][chunks[middle].count - 1], key) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The first position in `chunk` whose key is not below `key`.
    private static func position(of key: [UInt8], in chunk: [[UInt8]]) -> Int {
        var low = 0, high = chunk.count
        while low < high {
            let middle = (low + high) / 2
            if precedes(chunk[middle], key) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Adds `key`, which must not be here yet.
    mutating func insert(_ key: [UInt8]) {
        guard !chunks.isEmpty else {
            chunks = [[key]]
            return
        }
        let index = min(chunkIndex(for: key), chunks.count - 1)
        let at = SortedKeys.position(of: key, in: chunks[index])
        chunks[index].insert(key, at: at)
        if chunks[index].count > SortedKeys.chunkCapacity {
            let half = chunks[index].count / 2
            let right = Array(chunks[index][half...])
            chunks[index].removeSubrange(half...)
            chunks.insert(right, at: index + 1)
        }
    }

    /// Removes `key` if it is here.
    mutating func remove(_ key: [UInt8]) {
        let index = chunkIndex(for: key)
        guard index < chunks.count else { return }
        let at = SortedKeys.position(of: key, in: chunks[index])
        guard at < chunks[index].count, chunks[index][at] == key else { return }
        chunks[index].remove(at: at)
        if chunks[index].isEmpty { chunks.remove(at: index) }
    }

    /// Calls `body` with each key at least `lower` and below `upper`, in order (or reversed).
    func forEach(from lower: [UInt8]?, to upper: [UInt8]?, descending: Bool, _ body: ([UInt8]) throws -> Bool) rethrows {
        func inRange(_ key: [UInt8]) -> Bool {
            (lower.map { !SortedKeys.precedes(key, $0) } ?? true) && (upper.map { SortedKeys.precedes(key, $0) } ?? true)
        }
        if !descending {
            var chunk = lower.map(chunkIndex(for:)) ?? 0
            var at = lower.map { chunk < chunks.count ? SortedKeys.position(of: $0, in: chunks[chunk]) : 0 } ?? 0
            while chunk < chunks.count {
                while at < chunks[chunk].count {
                    let key = chunks[chunk][at]
                    guard inRange(key) else { return }
                    if try !body(key) { return }
                    at += 1
                }
                chunk += 1
                at = 0
            }
        } else {
            // The last key below `upper`: start in the chunk that holds the first key not below it.
            var chunk = upper.map { min(chunkIndex(for: $0), chunks.count - 1) } ?? chunks.count - 1
            guard chunk >= 0 else { return }
            var at = (upper.map { SortedKeys.position(of: $0, in: chunks[chunk]) } ?? chunks[chunk].count) - 1
            while chunk >= 0 {
                while at >= 0 {
                    let key = chunks[chunk][at]
                    if let lower, SortedKeys.precedes(key, lower) { return }
                    if inRange(key), try !body(key) { return }
                    at -= 1
                }
                chunk -= 1
                if chunk >= 0 { at = chunks[chunk].count - 1 }
            }
        }
    }
}
