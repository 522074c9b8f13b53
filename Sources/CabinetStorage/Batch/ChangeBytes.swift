/// The bytes of a ``TableChanges``: keys and values one after another, in
/// raw memory grown by doubling, copied on write like an array. Not an
/// `[UInt8]`: a save appends every record here, and an array's
/// `append(contentsOf:)` costs several times the copy itself.
///
/// Every read names a range the appends returned, checked against the
/// count before memory is touched: a wrong range is a trap that says so,
/// never a read of other memory.
struct ChangeBytes: @unchecked Sendable {
    // @unchecked: the storage is written only through `uniqueStorage()`, so a
    // copy shared with another value (or thread) is never changed under it.
    private final class Storage {
        var start: UnsafeMutableRawPointer
        var capacity: Int
        var count = 0

        init(capacity: Int) {
            self.capacity = max(capacity, 64)
            start = UnsafeMutableRawPointer.allocate(byteCount: self.capacity, alignment: 16)
        }

        func copy() -> Storage {
            let copy = Storage(capacity: capacity)
            copy.start.copyMemory(from: start, byteCount: count)
            copy.count = count
            return copy
        }

        deinit { start.deallocate() }
    }

    private var storage = Storage(capacity: 0)

    var count: Int { storage.count }

    private mutating func uniqueStorage() -> Storage {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
        return storage
    }

    /// Makes room for `extra` more bytes.
    mutating func reserveCapacity(adding extra: Int) {
        let storage = uniqueStorage()
        if extra > storage.capacity - storage.count { grow(storage, to: storage.count + extra) }
    }

    private func grow(_ storage: Storage, to needed: Int) {
        let larger = max(needed, storage.capacity * 2)
        let moved = UnsafeMutableRawPointer.allocate(byteCount: larger, alignment: 16)
        moved.copyMemory(from: storage.start, byteCount: storage.count)
        storage.start.deallocate()
        storage.start = moved
        storage.capacity = larger
    }

    /// Appends `source`; returns where its bytes are.
    @inline(__always)
    mutating func append(_ source: UnsafeRawBufferPointer) -> Range<Int> {
        let storage = uniqueStorage()
        let start = storage.count
        guard let base = source.baseAddress, !source.isEmpty else { return start..<start }
        if source.count > storage.capacity &- start { grow(storage, to: start + source.count) }
        (storage.start + start).copyMemory(from: base, byteCount: source.count)
        storage.count = start &+ source.count
        return start..<storage.count
    }

    /// Appends `key`, then `value` if there is one, with one check of the
    /// storage and its room: a change's two appends, the cost of a save's every record.
    @inline(__always)
    mutating func append(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer?) -> (key: Range<Int>, value: Range<Int>?) {
        let storage = uniqueStorage()
        let start = storage.count
        let total = key.count &+ (value?.count ?? 0)
        if total > storage.capacity &- start { grow(storage, to: start + total) }
        let keyEnd = start &+ key.count
        if let base = key.baseAddress, key.count > 0 { (storage.start + start).copyMemory(from: base, byteCount: key.count) }
        storage.count = keyEnd
        guard let value else { return (start..<keyEnd, nil) }
        if let base = value.baseAddress, value.count > 0 { (storage.start + keyEnd).copyMemory(from: base, byteCount: value.count) }
        storage.count = keyEnd &+ value.count
        return (start..<keyEnd, keyEnd..<storage.count)
    }

    /// A log entry's header: the key's length (its top bit: the key is new)
    /// and the value's (all ones: a removal), each a `UInt32`.
    static let logHeaderSize = 8
    private static let removal = UInt32.max
    private static let newKey: UInt32 = 1 << 31

    /// Appends one change of an unindexed log: its header, key and value,
    /// with one check of the storage and its room.
    @inline(__always)
    mutating func appendLogEntry(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer?, isNew: Bool) {
        precondition(key.count < Int(ChangeBytes.newKey) && (value?.count ?? 0) < Int(ChangeBytes.newKey),
                     "Cabinet: a change of 2 GiB or more cannot be kept in a batch")
        let storage = uniqueStorage()
        let start = storage.count
        let total = ChangeBytes.logHeaderSize &+ key.count &+ (value?.count ?? 0)
        if total > storage.capacity &- start { grow(storage, to: start + total) }
        let at = storage.start + start
        at.storeBytes(of: (UInt32(key.count) | (isNew ? ChangeBytes.newKey : 0)).littleEndian, as: UInt32.self)
        (at + 4).storeBytes(of: (value.map { UInt32($0.count) } ?? ChangeBytes.removal).littleEndian, as: UInt32.self)
        if key.count == 4, let base = key.baseAddress {
            // A row key, a save's every record: one load and store, not a call to copy 4 bytes.
            (at + 8).storeBytes(of: base.loadUnaligned(as: UInt32.self), as: UInt32.self)
        } else if let base = key.baseAddress, key.count > 0 {
            (at + 8).copyMemory(from: base, byteCount: key.count)
        }
        if let value, let base = value.baseAddress, value.count > 0 { (at + 8 + key.count).copyMemory(from: base, byteCount: value.count) }
        storage.count = start &+ total
    }

    /// Calls `body` with each entry of an unindexed log, in order: its key,
    /// the range of its value (`nil`: a removal) and whether its key is new;
    /// `body` returns `false` to stop. Every length is checked against the
    /// bytes held before it is used.
    func forEachLogEntry(_ body: (_ key: UnsafeRawBufferPointer, _ value: Range<Int>?, _ isNew: Bool) throws -> Bool) rethrows {
        try withAllBytes { all in
            var offset = 0
            while offset < all.count {
                precondition(all.count - offset >= ChangeBytes.logHeaderSize, "Cabinet: a batch's log ends inside a header")
                let keyWord = UInt32(littleEndian: all.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
                let valueWord = UInt32(littleEndian: all.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self))
                let keyStart = offset + ChangeBytes.logHeaderSize
                let keyEnd = keyStart + Int(keyWord & ~ChangeBytes.newKey)
                let valueEnd = valueWord == ChangeBytes.removal ? keyEnd : keyEnd + Int(valueWord)
                precondition(valueEnd <= all.count, "Cabinet: a batch's log entry runs past its bytes")
                let key = ChangeBytes.bytes(keyStart..<keyEnd, in: all)
                guard try body(key, valueWord == ChangeBytes.removal ? nil : keyEnd..<valueEnd, keyWord & ChangeBytes.newKey != 0) else { return }
                offset = valueEnd
            }
        }
    }

    /// Calls `body` with the bytes of `range`, one that ``append(_:)`` returned.
    @inline(__always)
    func withBytes<R>(_ range: Range<Int>, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        precondition(range.lowerBound >= 0 && range.upperBound <= storage.count, "Cabinet: a change's bytes lie outside its table's buffer")
        return try body(UnsafeRawBufferPointer(start: storage.start + range.lowerBound, count: range.count))
    }

    /// Calls `body` with every byte held, for a loop over many ranges: each
    /// checked with ``bytes(_:in:)`` as it is read.
    @inline(__always)
    func withAllBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: storage.start, count: storage.count))
    }

    /// The bytes of `range` within `all` (from ``withAllBytes(_:)``), checked.
    @inline(__always)
    static func bytes(_ range: Range<Int>, in all: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        precondition(range.lowerBound >= 0 && range.upperBound <= all.count, "Cabinet: a change's bytes lie outside its table's buffer")
        return UnsafeRawBufferPointer(start: all.baseAddress.map { $0 + range.lowerBound }, count: range.count)
    }
}
