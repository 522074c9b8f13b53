/// A set of keys, cheap for the short ones: a scan remembers every key it
/// gave (``RedisTable/forEach(_:)``, since `HSCAN` may give a key twice) in
/// one `UInt64` per row key, not one array each.
struct RedisKeySet {
    private var short = ShortKeyIndex()
    private var long: Set<[UInt8]> = []

    /// A key of up to 7 bytes as one number: its bytes, and its length in the top byte.
    static func packed(_ key: UnsafeRawBufferPointer) -> UInt64? {
        guard key.count <= 7 else { return nil }
        var value = UInt64(key.count) << 56
        for (index, byte) in key.enumerated() { value |= UInt64(byte) << (8 * index) }
        return value
    }

    /// Adds `key`; false if it was there already.
    mutating func insert(_ key: UnsafeRawBufferPointer) -> Bool {
        if let packed = RedisKeySet.packed(key) { return short.insertIfAbsent(packed) }
        return long.insert(Array(key)).inserted
    }
}
