import CabinetStorage

/// A set of keys, cheap for the short ones: a scan remembers every key it
/// gave (``RedisTable/forEach(_:)``, since `HSCAN` may give a key twice) in
/// one `UInt64` per row key, not one array each.
struct RedisKeySet {
    private var short = ShortKeyIndex()
    private var long: Set<[UInt8]> = []

    /// Adds `key`; false if it was there already.
    mutating func insert(_ key: UnsafeRawBufferPointer) -> Bool {
        if let packed = ShortKeyIndex.packed(key) { return short.insertIfAbsent(packed) }
        return long.insert(Array(key)).inserted
    }
}
