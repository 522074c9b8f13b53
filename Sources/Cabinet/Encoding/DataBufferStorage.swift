/// The bytes behind a ``DataBuffer``: one allocation, grown by doubling,
/// shared between copies of a buffer until one of them writes (copy on write).
///
/// `@unchecked Sendable` (its pointer is not `Sendable`), as Array's storage is:
/// every write goes through `reserveForWriting`, which copies the bytes unless
/// this buffer holds the only reference, so storage that two buffers (and so
/// possibly two threads) share is never written, only read.
@usableFromInline
final class DataBufferStorage: @unchecked Sendable {
    @usableFromInline let pointer: UnsafeMutableRawPointer
    @usableFromInline let capacity: Int

    @usableFromInline
    init(capacity: Int) {
        self.capacity = capacity
        pointer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
    }

    deinit {
        pointer.deallocate()
    }

    /// A new storage of `capacity` bytes holding the first `count` bytes of this one.
    @usableFromInline
    func copy(count: Int, capacity: Int) -> DataBufferStorage {
        let copy = DataBufferStorage(capacity: capacity)
        copy.pointer.copyMemory(from: pointer, byteCount: count)
        return copy
    }
}

extension DataBuffer {
    /// Makes room for `extra` more bytes at the end, copying if the storage is shared.
    @inlinable
    mutating func reserveForWriting(_ extra: Int) {
        let needed = writerIndex &+ extra
        // Check uniqueness first: binding `storage` to a local would add a
        // reference and make every write copy the buffer (as unoptimized builds did).
        if isKnownUniquelyReferenced(&storage), let capacity = storage?.capacity, needed <= capacity { return }
        reserveSlowPath(needed)
    }

    @usableFromInline
    mutating func reserveSlowPath(_ needed: Int) {
        let current = storage?.capacity ?? 0
        let capacity = needed <= current ? current : max(needed, current * 2, 64)
        if let storage {
            self.storage = storage.copy(count: writerIndex, capacity: capacity)
        } else {
            storage = DataBufferStorage(capacity: capacity)
        }
    }

    /// Appends raw bytes.
    @inlinable
    mutating func append(_ source: UnsafeRawBufferPointer) {
        guard let base = source.baseAddress, source.count > 0 else { return }
        reserveForWriting(source.count)
        storage.unsafelyUnwrapped.pointer.advanced(by: writerIndex).copyMemory(from: base, byteCount: source.count)
        writerIndex &+= source.count
    }

    /// Appends a fixed-width value's bytes as they are in memory.
    @inlinable
    mutating func appendRaw<T: FixedWidthInteger>(_ value: T) {
        reserveForWriting(MemoryLayout<T>.size)
        storage.unsafelyUnwrapped.pointer.storeBytes(of: value, toByteOffset: writerIndex, as: T.self)
        writerIndex &+= MemoryLayout<T>.size
    }

    /// The readable region starting at `offset` (already bounds-checked by the caller).
    @inlinable
    func readPointer(at offset: Int) -> UnsafeRawPointer {
        UnsafeRawPointer(storage.unsafelyUnwrapped.pointer.advanced(by: offset))
    }

    /// Calls `body` with every byte written so far.
    @inlinable
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        guard let storage else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return try body(UnsafeRawBufferPointer(start: storage.pointer, count: writerIndex))
    }

    /// The bytes of `range`, which must lie within what was written.
    func slice(_ range: Range<Int>) -> UnsafeRawBufferPointer {
        guard let storage, !range.isEmpty else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: storage.pointer.advanced(by: range.lowerBound), count: range.count)
    }
}
