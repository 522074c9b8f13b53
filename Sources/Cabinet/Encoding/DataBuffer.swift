/// A growable byte buffer with a read cursor: how a ``StoredObject`` reads and
/// writes its content.
///
/// Writing appends at the end; reading consumes from the read cursor. The byte
/// order of every kind of value is fixed (see `docs/FORMAT.md`), so a store
/// reads the same on every machine. Every read checks that enough bytes remain
/// and throws ``CabinetError/truncatedRecord(_:offset:needed:available:)`` or
/// ``CabinetError/malformedRecord(_:reason:)`` instead of over-reading; a read
/// never allocates more than the bytes actually present.
///
/// ```swift
/// var buffer = DataBuffer()
/// buffer.writeString("Car")
/// buffer.writeUInt32(298)
/// let title = try buffer.readString()     // "Car"
/// let seconds = try buffer.readUInt32()   // 298
/// ```
public struct DataBuffer {
    /// `nil` until the first write, so an empty buffer costs no allocation.
    @usableFromInline var storage: DataBufferStorage?
    /// The number of bytes written.
    @usableFromInline var writerIndex: Int = 0
    @usableFromInline var readerIndex: Int = 0

    /// The version of the class that wrote the record being read: the
    /// per-instance version byte at the start of the record. Version 0 is the
    /// oldest (BNRPersistence wrote 0 for classes that never set a version).
    public internal(set) var version: UInt8 = 0

    /// Turns row IDs read from this buffer into objects of its store, if it has one.
    var resolver: ReferenceResolver?
    /// Where the bytes came from, for error messages.
    var origin: RecordOrigin?
    /// The class of the first object written as a reference before it was inserted.
    var firstUninsertedReference: String?

    /// An empty buffer.
    public init() {}

    /// A buffer with room for `capacity` bytes before it grows.
    public init(capacity: Int) {
        if capacity > 0 { storage = DataBufferStorage(capacity: capacity) }
    }

    /// A buffer holding `bytes`, read from the start.
    ///
    /// ```swift
    /// var buffer = DataBuffer(bytes: [0x2A, 0, 0, 0])
    /// try buffer.readUInt32()   // 42
    /// ```
    public init<Bytes: Sequence>(bytes: Bytes) where Bytes.Element == UInt8 {
        let array = Array(bytes)
        array.withUnsafeBytes { append($0) }
    }

    /// A buffer holding a copy of `bytes`, read from the start.
    public init(bytes: UnsafeRawBufferPointer) {
        append(bytes)
    }

    /// All bytes written so far (including any already read).
    public var allBytes: [UInt8] { withUnsafeBytes { Array($0) } }

    /// The number of bytes in the buffer.
    public var count: Int { writerIndex }

    /// The number of bytes not yet read.
    public var readableBytes: Int { writerIndex - readerIndex }

    /// The offset of the next read.
    public var readOffset: Int { readerIndex }

    /// Empties the buffer, keeping its capacity for reuse.
    public mutating func removeAll() {
        writerIndex = 0
        readerIndex = 0
        firstUninsertedReference = nil
    }

    /// Moves the read cursor back to the start.
    public mutating func rewind() {
        readerIndex = 0
    }

    /// Replaces the content with `source`, keeping capacity; used by the store's read loops.
    @inline(__always)
    mutating func load(_ source: UnsafeRawBufferPointer) {
        writerIndex = 0
        readerIndex = 0
        append(source)
    }

    /// Checks that `count` bytes remain and returns the offset to read them from.
    @inlinable
    mutating func consume(_ count: Int) throws -> Int {
        let start = readerIndex
        guard count >= 0, count <= writerIndex &- start else {
            throw truncated(needed: count)
        }
        readerIndex = start &+ count
        return start
    }

    @usableFromInline
    func truncated(needed: Int) -> CabinetError {
        .truncatedRecord(location, offset: readerIndex, needed: needed, available: readableBytes)
    }

    @usableFromInline
    func malformed(_ reason: String) -> CabinetError {
        .malformedRecord(location, reason: "\(reason) at offset \(readerIndex)")
    }

    /// The location named in errors thrown while reading.
    var location: RecordLocation {
        origin?.location ?? RecordLocation(file: "<DataBuffer>")
    }
}

/// Where a buffer's bytes were read from: a record of a class, or a named buffer.
///
/// The class entry is held strongly: an app may keep the buffer beyond
/// `read(from:)` (a copy is just a struct), and the error it throws then must
/// still name its record rather than read a freed entry. The store's read loops
/// set the entry once per class and only move `rowID` per record (`pointOrigin`),
/// so the reference costs no retain per record.
struct RecordOrigin {
    private(set) var entry: ClassEntry?
    var rowID: UInt32
    var file: String?

    init(entry: ClassEntry?, rowID: UInt32, file: String?) {
        self.entry = entry
        self.rowID = rowID
        self.file = file
    }

    var location: RecordLocation {
        if let entry {
            return RecordLocation(file: entry.table.path, className: entry.name, rowID: rowID)
        }
        return RecordLocation(file: file ?? "<DataBuffer>")
    }
}

extension DataBuffer {
    /// Names the record about to be read: `rowID` of `entry`'s class.
    @inline(__always)
    mutating func pointOrigin(at entry: ClassEntry, rowID: UInt32) {
        if origin?.entry === entry {
            origin!.rowID = rowID
        } else {
            origin = RecordOrigin(entry: entry, rowID: rowID, file: nil)
        }
    }
}

extension DataBuffer: CustomStringConvertible {
    public var description: String {
        let shown = allBytes.prefix(64).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined(separator: " ")
        return "DataBuffer(\(count) bytes, read at \(readerIndex): \(shown)\(count > 64 ? " …" : ""))"
    }
}
