/// A transaction's changes to one table, until its commit sends them: for
/// each key changed, its new value or its removal.
///
/// A save of a million objects makes a million changes, so they are kept in
/// one byte buffer with an index of where each is, not as a million pairs of
/// arrays in a dictionary (whose allocations, hashing and freeing cost more
/// than the round trip of the save itself). Keys of up to 7 bytes (every row
/// key) are found through a `UInt64` holding their bytes and length.
struct RedisPendingChanges {
    private struct Change {
        var key: Range<Int>
        /// The new value's place in ``bytes``; `nil` for a removal.
        var value: Range<Int>?
    }

    /// Every key and value, one after another; a value changed twice leaves its first bytes unused.
    private var bytes: [UInt8] = []
    /// One per key changed, in the order of their first change.
    private var changes: [Change] = []
    /// Where the change of a short key is, by ``RedisKeySet/packed(_:)``.
    private var shortKeys = ShortKeyIndex()
    private var longKeys: [[UInt8]: Int] = [:]

    var isEmpty: Bool { changes.isEmpty }
    /// How many keys are changed.
    var count: Int { changes.count }

    private func index(of key: UnsafeRawBufferPointer) -> Int? {
        if let packed = RedisKeySet.packed(key) { return shortKeys.find(packed) }
        return longKeys[Array(key)]
    }

    private mutating func store(_ value: UnsafeRawBufferPointer?) -> Range<Int>? {
        guard let value else { return nil }
        let start = bytes.count
        bytes.append(contentsOf: value)
        return start..<bytes.count
    }

    /// Records that `key` now holds `value` (`nil`: is removed).
    mutating func set(_ key: UnsafeRawBufferPointer, to value: UnsafeRawBufferPointer?) {
        if let existing = index(of: key) {
            changes[existing].value = store(value)
            return
        }
        let start = bytes.count
        bytes.append(contentsOf: key)
        let change = Change(key: start..<bytes.count, value: store(value))
        if let packed = RedisKeySet.packed(key) { shortKeys.insert(packed, at: changes.count) } else { longKeys[Array(key)] = changes.count }
        changes.append(change)
    }

    /// Whether `key` is changed (given a value or removed).
    func contains(_ key: UnsafeRawBufferPointer) -> Bool { index(of: key) != nil }

    /// Calls `body` with `key`'s new value (`nil` if it is removed) and returns
    /// what it returns; `nil` without calling it if `key` is not changed.
    func withChange<R>(of key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R? {
        guard let found = index(of: key) else { return nil }
        return try bytes.withUnsafeBytes { buffer in try body(changes[found].value.map { UnsafeRawBufferPointer(rebasing: buffer[$0]) }) }
    }

    /// Calls `body` with each change in the order of the keys' first change (`nil` for a removal); `body` returns false to stop.
    func forEach(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer?) throws -> Bool) rethrows {
        try bytes.withUnsafeBytes { buffer in
            for change in changes {
                let value = change.value.map { UnsafeRawBufferPointer(rebasing: buffer[$0]) }
                guard try body(UnsafeRawBufferPointer(rebasing: buffer[change.key]), value) else { return }
            }
        }
    }

    /// The keys changed, in the order of their first change.
    var keys: [[UInt8]] { changes.map { Array(bytes[$0.key]) } }

    /// The changes as pairs of arrays, for the slower paths (an index's range scans, counting).
    var entries: [(key: [UInt8], value: [UInt8]?)] {
        changes.map { (Array(bytes[$0.key]), $0.value.map { Array(bytes[$0]) }) }
    }
}

/// An open-addressing table from a packed short key to its change's index,
/// with linear probing: cheaper per insert than a `Dictionary<UInt64, Int>`
/// (no SipHash, no per-key allocation).
/// Never more than half full, so a probe always ends at a free slot.
private struct ShortKeyIndex {
    /// Packed keys; 0 marks a free slot (a packed key holds its length in its top byte,
    /// so only the empty key packs to 0, and it is kept aside).
    private var keys: [UInt64] = []
    private var slots: [Int32] = []
    private var used = 0
    private var emptyKeyIndex: Int?

    func find(_ key: UInt64) -> Int? {
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
    mutating func insert(_ key: UInt64, at index: Int) {
        if key == 0 { emptyKeyIndex = index; return }
        if 2 * (used + 1) > keys.count { grow() }
        place(key, Int32(index))
        used += 1
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

    private mutating func grow() {
        let old = (keys, slots)
        let capacity = max(1024, keys.count * 2)
        keys = [UInt64](repeating: 0, count: capacity)
        slots = [Int32](repeating: 0, count: capacity)
        for (key, slot) in zip(old.0, old.1) where key != 0 { place(key, slot) }
    }
}
