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

    /// Records that `key` now holds `value` (`nil`: is removed); whether it had a change already.
    @discardableResult
    mutating func set(_ key: UnsafeRawBufferPointer, to value: UnsafeRawBufferPointer?) -> Bool {
        if let existing = index(of: key) {
            changes[existing].value = store(value)
            return true
        }
        let start = bytes.count
        bytes.append(contentsOf: key)
        let change = Change(key: start..<bytes.count, value: store(value))
        if let packed = RedisKeySet.packed(key) { shortKeys.insert(packed, at: changes.count) } else { longKeys[Array(key)] = changes.count }
        changes.append(change)
        return false
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
