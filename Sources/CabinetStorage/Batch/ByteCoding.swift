/// Little-endian integers and counted byte strings for the storage layer's own
/// files (a write batch's bytes, the save journal). The layer above encodes its records its own way;
/// these two write and read the journal, whose values are opaque bytes.
struct ByteWriter: ~Copyable {
    // Raw memory grown by doubling, not an Array: a journaled save appends every
    // record here, and `Array.append(contentsOf:)` was a visible part of a
    // save (BENCHMARKS.md, "What the code's shape was chosen against").
    private var start: UnsafeMutableRawPointer
    private var capacity: Int
    private(set) var count = 0

    init(capacity: Int = 0) {
        self.capacity = max(capacity, 256)
        start = UnsafeMutableRawPointer.allocate(byteCount: self.capacity, alignment: 16)
    }

    deinit { start.deallocate() }

    /// Makes room for `extra` more bytes and returns where they go.
    @inline(__always)
    private mutating func space(for extra: Int) -> UnsafeMutableRawPointer {
        if extra > capacity &- count { grow(to: count + extra) }
        return start + count
    }

    private mutating func grow(to needed: Int) {
        let larger = max(needed, capacity * 2)
        let moved = UnsafeMutableRawPointer.allocate(byteCount: larger, alignment: 16)
        moved.copyMemory(from: start, byteCount: count)
        start.deallocate()
        start = moved
        capacity = larger
    }

    mutating func append(_ source: UnsafeRawBufferPointer) {
        guard let base = source.baseAddress, source.count > 0 else { return }
        space(for: source.count).copyMemory(from: base, byteCount: source.count)
        count &+= source.count
    }

    mutating func append<T: FixedWidthInteger>(_ value: T) {
        space(for: MemoryLayout<T>.size).storeBytes(of: value.littleEndian, as: T.self)
        count &+= MemoryLayout<T>.size
    }

    /// A UInt32 byte count, then the bytes (the layout `DataBuffer.writeString` uses too).
    mutating func appendCounted(_ source: UnsafeRawBufferPointer) {
        precondition(source.count <= Int(UInt32.max), "Cabinet: a journal entry over 4 GiB cannot be written")
        append(UInt32(source.count))
        append(source)
    }

    /// Calls `body` with every byte written.
    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: start, count: count))
    }

    var bytes: [UInt8] { withUnsafeBytes { Array($0) } }
}

/// Reads what ``ByteWriter`` wrote, checking every length against what is
/// there: a damaged count throws, it never reads or allocates past the end.
struct ByteReader {
    let bytes: [UInt8]
    private(set) var offset: Int
    /// Makes the error for a read that does not fit, naming the file.
    let damaged: (String) -> CabinetError

    init(_ bytes: [UInt8], from offset: Int = 0, damaged: @escaping (String) -> CabinetError) {
        self.bytes = bytes
        self.offset = offset
        self.damaged = damaged
    }

    mutating func read<T: FixedWidthInteger>(_: T.Type) throws -> T {
        let size = MemoryLayout<T>.size
        guard size <= bytes.count - offset else { throw damaged("it ends inside a \(size)-byte number at offset \(offset)") }
        defer { offset += size }
        return bytes.withUnsafeBytes { T(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: T.self)) }
    }

    /// The range of a counted byte string (see ``ByteWriter/appendCounted(_:)``).
    mutating func readCountedRange() throws -> Range<Int> {
        let count = Int(try read(UInt32.self))
        guard count <= bytes.count - offset else {
            throw damaged("a length of \(count) bytes at offset \(offset - 4), but only \(bytes.count - offset) follow")
        }
        defer { offset += count }
        return offset..<(offset + count)
    }

    mutating func readString() throws -> String {
        let range = try readCountedRange()
        guard let text = String(validating: bytes[range], as: UTF8.self) else {
            throw damaged("invalid UTF-8 at offset \(range.lowerBound)")
        }
        return text
    }
}
