/// An open-addressing table from a packed short key (``packed(_:)``)
/// to an index (a change's, in ``TableChanges``), or a set of them (a Redis scan's keys),
/// with linear probing: cheaper per insert than a `Dictionary<UInt64, Int>`
/// (no SipHash, no per-key allocation).
/// Never more than half full, so a probe always ends at a free slot.
package struct ShortKeyIndex: Sendable {
    /// Packed keys; 0 marks a free slot (a packed key holds its length in its top byte,
    /// so only the empty key packs to 0, and it is kept aside).
    private var keys: [UInt64] = []
    private var slots: [Int32] = []
    private var used = 0
    private var emptyKeyIndex: Int?

    package init() {}

    /// A key of up to 7 bytes as one number: its bytes, and its length in the top byte.
    @inline(__always)
    package static func packed(_ key: UnsafeRawBufferPointer) -> UInt64? {
        // A row key, the common case: one load.
        if key.count == 4 { return 4 << 56 | UInt64(UInt32(littleEndian: key.loadUnaligned(as: UInt32.self))) }
        guard key.count <= 7 else { return nil }
        var value = UInt64(key.count) << 56
        for (index, byte) in key.enumerated() { value |= UInt64(byte) << (8 * index) }
        return value
    }

    package func find(_ key: UInt64) -> Int? {
        if key == 0 { return emptyKeyIndex }
        guard !keys.isEmpty else { return nil }
        let mask = keys.count - 1
        var at = ShortKeyIndex.home(key, mask)
        while true {
            let found = keys[at]
            if found == key { return Int(slots[at]) }
            if found == 0 { return nil }
            at = (at + 1) & mask
        }
    }

    /// Adds `key`, which is not in the table yet.
    package mutating func insert(_ key: UInt64, at index: Int) {
        if key == 0 { emptyKeyIndex = index; return }
        if 2 * (used + 1) > keys.count { grow() }
        place(key, Int32(index))
        used += 1
    }

    /// Adds `key` (with index 0) unless it is there; whether it was added. One probe, for a set.
    package mutating func insertIfAbsent(_ key: UInt64) -> Bool {
        if key == 0 {
            defer { emptyKeyIndex = 0 }
            return emptyKeyIndex == nil
        }
        if 2 * (used + 1) > keys.count { grow() }
        let mask = keys.count - 1
        var at = ShortKeyIndex.home(key, mask)
        while keys[at] != 0 {
            if keys[at] == key { return false }
            at = (at + 1) & mask
        }
        keys[at] = key
        used += 1
        return true
    }

    /// A key's first slot: a multiplicative (Fibonacci) hash of all its bits.
    /// Tried and not kept: slots by row ID (kind to the cache for a save's
    /// consecutive new rows, but linear probing then makes one long run of
    /// them, which every update whose row falls inside probes to its end:
    /// quadratic for a save that mixes updates and inserts), and blocks of 16
    /// consecutive rows placed by hash (0.05 s less of a million inserts, but
    /// probe runs up to ten times as long as this hash makes, on a model of the table).
    private static func home(_ key: UInt64, _ mask: Int) -> Int {
        Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 32) & mask
    }

    private mutating func place(_ key: UInt64, _ slot: Int32) {
        let mask = keys.count - 1
        var at = ShortKeyIndex.home(key, mask)
        while keys[at] != 0 { at = (at + 1) & mask }
        keys[at] = key
        slots[at] = slot
    }

    /// Makes room for `count` keys without growing (each growth places every key again).
    package mutating func reserveCapacity(_ count: Int) {
        var capacity = max(16, keys.count)
        while 2 * count > capacity { capacity *= 2 }
        guard capacity > keys.count else { return }
        rehash(to: capacity)
    }

    private mutating func grow() {
        rehash(to: max(16, keys.count * 2))
    }

    private mutating func rehash(to capacity: Int) {
        let old = (keys, slots)
        keys = [UInt64](repeating: 0, count: capacity)
        slots = [Int32](repeating: 0, count: capacity)
        for (key, slot) in zip(old.0, old.1) where key != 0 { place(key, slot) }
    }
}

/// A key of 8 bytes or more, as ``TableChanges`` finds it by hash. Its bytes
/// are hashed once, as one run (an array of bytes hashes each byte on its
/// own, which cost several percent of a pool write), when the key is made.
package struct LongKey: Hashable, Sendable {
    let bytes: [UInt8]
    private let bytesHash: Int

    package init(_ key: UnsafeRawBufferPointer) {
        bytes = Array(key)
        var hasher = Hasher()
        hasher.combine(bytes: key)
        bytesHash = hasher.finalize()
    }

    package static func == (left: LongKey, right: LongKey) -> Bool {
        left.bytesHash == right.bytesHash && left.bytes == right.bytes
    }

    package func hash(into hasher: inout Hasher) { hasher.combine(bytesHash) }
}
