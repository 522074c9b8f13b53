#if canImport(Glibc)
import Glibc
#endif

/// One table's part of a ``WriteBatch``: for each key changed, its new value
/// or its removal, in the order of each key's first change.
///
/// ```swift
/// var changes = TableChanges()
/// changes.set(Array("a".utf8), to: Array("1".utf8))
/// changes.set(Array("b".utf8), to: nil)          // removed
/// changes.forEach { key, value in
///     print(Array(key), value.map(Array.init) as Any)
///     return true
/// }
/// ```
///
/// Indexed (the default), a key changed twice keeps its last change, in the
/// place of its first, and lookups (``contains(_:)``, ``withChange(of:_:)``)
/// are a hash probe. Unindexed (`TableChanges(indexed: false)`), it is a log,
/// for a writer that changes each key once (a save's rows): no index is
/// kept, a key changed again is appended again (``forEach(_:)`` then gives
/// both, in order, and applying them in order leaves the last), and a lookup
/// reads the whole log from its end.
///
/// A save of a million objects makes a million changes, so they are kept in
/// one byte buffer with an index of where each is, not as a million pairs of
/// arrays in a dictionary (whose allocations, hashing and freeing cost more
/// than writing them). Keys of up to 7 bytes (every row key) are found
/// through a `UInt64` holding their bytes and length (`ShortKeyIndex`).
public struct TableChanges: Sendable {
    private struct Change: Sendable {
        var key: Range<Int>
        /// The new value's place in ``bytes``; `nil` for a removal.
        var value: Range<Int>?
        /// Whether the writer said the key was not in the table before.
        var isNew: Bool
    }

    /// Every key and value, one after another; a value changed twice leaves its first bytes unused.
    private var bytes = ChangeBytes()
    /// Indexed: one per key changed, in the order of their first change.
    /// Unindexed, empty: each change is kept in ``bytes`` behind its lengths (``ChangeBytes/appendLogEntry(_:_:isNew:)``).
    private var changes: [Change] = []
    /// Unindexed: how many changes the log holds.
    private var logCount = 0
    /// Where the change of a short key is, by ``ShortKeyIndex/packed(_:)``.
    private var shortKeys = ShortKeyIndex()
    private var longKeys: [LongKey: Int] = [:]
    /// Whether keys are looked up by hash, each kept once (see the type's comment).
    public let isIndexed: Bool

    /// Changes whose keys are kept once each and looked up by hash (`indexed`),
    /// or a log of changes (see the type's comment).
    public init(indexed: Bool = true) {
        isIndexed = indexed
    }

    /// Whether no key is changed.
    public var isEmpty: Bool { count == 0 }
    /// How many keys are changed (unindexed: how many changes).
    public var count: Int { isIndexed ? changes.count : logCount }
    /// The bytes of the keys and values held (a value changed twice counts both times).
    public var byteCount: Int { bytes.count }

    /// An indexed table's lookup.
    private func index(of key: UnsafeRawBufferPointer) -> Int? {
        if let packed = ShortKeyIndex.packed(key) { return shortKeys.find(packed) }
        return longKeys.isEmpty ? nil : longKeys[LongKey(key)]
    }

    /// An unindexed log's lookup: `body` with its last change of `key`.
    private func withLastLogged<R>(_ key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R? {
        var found: Range<Int>??
        bytes.forEachLogEntry { stored, value, _ in
            if stored.count == key.count && (key.isEmpty || memcmp(stored.baseAddress!, key.baseAddress!, key.count) == 0) {
                found = .some(value)
            }
            return true
        }
        guard let found else { return nil }
        guard let value = found else { return try body(nil) }
        return try bytes.withBytes(value) { try body($0) }
    }

    @inline(__always)
    private mutating func append(_ source: UnsafeRawBufferPointer) -> Range<Int> {
        bytes.append(source)
    }

    private mutating func store(_ value: UnsafeRawBufferPointer?) -> Range<Int>? {
        guard let value else { return nil }
        return append(value)
    }

    /// Records that `key` now holds `value` (`nil`: is removed); returns
    /// whether it had a change already (which this one replaces). `isNew`
    /// says the table did not have `key` before (an inserted object's row),
    /// for those who read the batch as a change (``forEachChange(_:)``);
    /// a key new in the batch stays new, whatever replaces its change.
    @discardableResult
    public mutating func set(_ key: UnsafeRawBufferPointer, to value: UnsafeRawBufferPointer?, isNew: Bool = false) -> Bool {
        guard isIndexed else {
            bytes.appendLogEntry(key, value, isNew: isNew)
            logCount += 1
            return false
        }
        return setIndexed(key, to: value, isNew: isNew)
    }

    /// ``set(_:to:isNew:)`` of an indexed table. Apart, so that a log's append,
    /// once a save's every record, is a small function of its own.
    @inline(never)
    private mutating func setIndexed(_ key: UnsafeRawBufferPointer, to value: UnsafeRawBufferPointer?, isNew: Bool) -> Bool {
        if let existing = index(of: key) {
            changes[existing].value = store(value)
            return true
        }
        let (keyRange, valueRange) = bytes.append(key, value)
        let change = Change(key: keyRange, value: valueRange, isNew: isNew)
        if let packed = ShortKeyIndex.packed(key) { shortKeys.insert(packed, at: changes.count) } else { longKeys[LongKey(key)] = changes.count }
        changes.append(change)
        return false
    }

    /// ``set(_:to:)`` for arrays.
    @discardableResult
    public mutating func set(_ key: [UInt8], to value: [UInt8]?) -> Bool {
        key.withUnsafeBytes { key in
            guard let value else { return set(key, to: nil) }
            return value.withUnsafeBytes { set(key, to: $0) }
        }
    }

    /// Whether `key` is changed (given a value or removed).
    public func contains(_ key: UnsafeRawBufferPointer) -> Bool {
        isIndexed ? index(of: key) != nil : withLastLogged(key) { _ in } != nil
    }

    /// Calls `body` with `key`'s new value (`nil` if it is removed) and returns
    /// what it returns; `nil` without calling it if `key` is not changed.
    public func withChange<R>(of key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R? {
        guard isIndexed else { return try withLastLogged(key, body) }
        guard let found = index(of: key) else { return nil }
        guard let value = changes[found].value else { return try body(nil) }
        return try bytes.withBytes(value) { try body($0) }
    }

    /// Calls `body` with each change in the order of the keys' first change
    /// (`nil` for a removal); `body` returns `false` to stop. The bytes are
    /// valid only during each call.
    public func forEach(_ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer?) throws -> Bool) rethrows {
        try forEachChange { key, value, _ in try body(key, value) }
    }

    /// `key`'s change, one lookup: whether it holds a value (not a removal)
    /// and whether the writer said it is new; `nil` if it is not changed.
    package func change(of key: UnsafeRawBufferPointer) -> (hasValue: Bool, isNew: Bool)? {
        guard isIndexed else {
            var found: (hasValue: Bool, isNew: Bool)?
            bytes.forEachLogEntry { stored, value, isNew in
                if stored.elementsEqual(key) { found = (value != nil, isNew) }
                return true
            }
            return found
        }
        return index(of: key).map { (changes[$0].value != nil, changes[$0].isNew) }
    }

    /// ``forEach(_:)`` with whether each key is new (see ``set(_:to:isNew:)``).
    public func forEachChange(_ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer?, _ isNew: Bool) throws -> Bool) rethrows {
        guard isIndexed else {
            return try bytes.withAllBytes { all in
                try bytes.forEachLogEntry { key, value, isNew in
                    try body(key, value.map { ChangeBytes.bytes($0, in: all) }, isNew)
                }
            }
        }
        try bytes.withAllBytes { all in
            for change in changes {
                let value = change.value.map { ChangeBytes.bytes($0, in: all) }
                guard try body(ChangeBytes.bytes(change.key, in: all), value, change.isNew) else { return }
            }
        }
    }

    /// The keys changed, in the order of their first change.
    public var keys: [[UInt8]] { entries.map(\.key) }

    /// The changes as pairs of arrays, for the slower paths (range scans, counting).
    public var entries: [(key: [UInt8], value: [UInt8]?)] {
        var entries: [(key: [UInt8], value: [UInt8]?)] = []
        entries.reserveCapacity(count)
        forEach { key, value in
            entries.append((Array(key), value.map(Array.init)))
            return true
        }
        return entries
    }

    /// Makes room for about `changes` more changes of `bytes` bytes in all.
    public mutating func reserveCapacity(changes count: Int, bytes byteCount: Int) {
        if isIndexed { changes.reserveCapacity(changes.count + count) }
        bytes.reserveCapacity(adding: byteCount + (isIndexed ? 0 : count * ChangeBytes.logHeaderSize))
        if isIndexed { shortKeys.reserveCapacity(changes.count + count) }
    }
}
