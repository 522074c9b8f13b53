import Foundation

/// A growable byte buffer with a read cursor: how a ``StoredObject`` reads and
/// writes its content.
///
/// Writing appends at the end; reading consumes from the read cursor. The byte
/// order of every kind of value is fixed (see `docs/FORMAT.md`), so a store
/// reads the same on every machine. Every read checks that enough bytes remain
/// and throws ``/CabinetStorage/CabinetError/truncatedRecord(_:offset:needed:available:)`` or
/// ``/CabinetStorage/CabinetError/malformedRecord(_:reason:)`` instead of over-reading; a read
/// never allocates more than the bytes actually present.
///
/// ```swift
/// var buffer = DataBuffer()
/// buffer.writeString("Car")
/// buffer.writeUInt32(298)
/// let title = try buffer.readString()     // "Car"
/// let seconds = try buffer.readUInt32()   // 298
/// ```
///
/// A buffer is a value: its bytes (shared between copies until one of them
/// writes), its read cursor, ``version``, and at most one context from the store
/// that made it, saying which record the bytes are (named in errors) and how
/// the references in them turn into objects. `DataBuffer()` and
/// `DataBuffer(bytes:)` make buffers without one.
///
/// Two buffers are equal when they hold the same bytes, all of them from offset
/// 0. The read cursor, ``version`` and the context do not count: a record read
/// from a store equals a buffer made from the same bytes.
///
/// Every buffer is `Sendable`. One without a context is plain bytes, and reads
/// the same on any thread. One the store made may be kept beyond `read(from:)`
/// (or ``ObjectStore/namedBuffer(forName:)``) and sent on as well: its bytes
/// read anywhere, its errors keep naming its record (file, class, row) even after
/// the store is gone, and reading a reference from it is one operation of the
/// store. So reading a reference on one thread while another thread is inside
/// the store stops the program, as two threads calling the store would, and
/// once the store is closed it throws ``/CabinetStorage/CabinetError/storeClosed(path:)``.
///
/// ```swift
/// final class Song: StoredObject {
///     @Stored var title = ""
///     var record = DataBuffer()
///
///     override func read(from buffer: inout DataBuffer) throws {
///         record = buffer                    // a copy: the store reuses its buffer for the next record
///         title = try buffer.readString()
///     }
/// }
/// if let song = try store.fetch(Song.self, rowID: 2) {
///     let bytes = DataBuffer(bytes: song.record.allBytes)
///     bytes == song.record                   // true: the same bytes, with no store behind them
///     Task.detached { var mine = bytes; _ = try mine.readString() }   // plain bytes cross threads freely
/// }
/// ```
public struct DataBuffer: Sendable {
    /// `nil` until the first write, so an empty buffer costs no allocation.
    @usableFromInline var storage: DataBufferStorage?
    /// The number of bytes written.
    @usableFromInline var writerIndex: Int = 0
    @usableFromInline var readerIndex: Int = 0

    /// The version of the class that wrote the record being read: the
    /// per-instance version byte at the start of the record. Version 0 is the
    /// oldest (BNRPersistence wrote 0 for classes that never set a version).
    public internal(set) var version: UInt8 = 0

    /// The store's view of the bytes, if a store made the buffer to be read (see ``RecordContext``).
    var context: RecordContext?
    /// The save-time state of the loop encoding into the buffer, or the buffer's
    /// own note of an uninserted reference (see ``RecordEncoder``); `nil` otherwise.
    var encoder: RecordEncoder?

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
        if _slowPath(encoder != nil) { removeNotes() }
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
}

extension DataBuffer: Equatable {
    /// Whether both hold the same bytes; the read cursor, ``version`` and the
    /// store behind a buffer do not count (see ``DataBuffer``).
    ///
    /// ```swift
    /// var read = DataBuffer(bytes: [1, 2])
    /// _ = try read.readUInt8()
    /// read == DataBuffer(bytes: [1, 2])   // true
    /// ```
    public static func == (lhs: DataBuffer, rhs: DataBuffer) -> Bool {
        lhs.withUnsafeBytes { left in
            rhs.withUnsafeBytes { right in
                left.count == right.count && (left.isEmpty || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0)
            }
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
