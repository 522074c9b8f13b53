import Foundation

// A String or Data is a UInt32 little-endian byte count followed by the bytes;
// a count of 0 reads back as empty (or nil, for the optional forms).
// A Date is a big-endian Float64 of seconds since 2001-01-01 00:00:00 UTC; 0 means nil.

extension DataBuffer {
    /// Writes a length-prefixed byte run.
    @usableFromInline
    mutating func writeCounted(_ source: UnsafeRawBufferPointer) {
        precondition(source.count <= Int(UInt32.max), "Cabinet: a String or Data over 4 GiB cannot be stored")
        // One capacity check for the count and the bytes.
        reserveForWriting(4 &+ source.count)
        let target = storage.unsafelyUnwrapped.pointer.advanced(by: writerIndex)
        target.storeBytes(of: UInt32(truncatingIfNeeded: source.count).littleEndian, as: UInt32.self)
        if let base = source.baseAddress { (target + 4).copyMemory(from: base, byteCount: source.count) }
        writerIndex &+= 4 &+ source.count
    }

    /// Reads a length prefix and checks that that many bytes follow; returns where they start.
    @usableFromInline
    mutating func readCountedRange() throws -> Range<Int> {
        let count = Int(try readLittleEndian(UInt32.self))
        guard count <= readableBytes else {
            readerIndex -= 4
            throw malformed("a length of \(count) bytes, but only \(readableBytes - 4) follow")
        }
        let start = readerIndex
        readerIndex += count
        return start..<(start + count)
    }

    /// Writes a String as its UTF-8 bytes with a UInt32 byte count in front.
    public mutating func writeString(_ value: String) {
        // A native string's UTF-8 is contiguous (small ones are copied to the stack);
        // only a bridged or foreign string takes the copying path.
        let written: Void? = value.utf8.withContiguousStorageIfAvailable { writeCounted(UnsafeRawBufferPointer($0)) }
        if written == nil {
            var value = value
            value.withUTF8 { writeCounted(UnsafeRawBufferPointer($0)) }
        }
    }

    /// Reads a String written by ``writeString(_:)``; an empty or nil string reads as `""`.
    ///
    /// Throws if the count runs past the end of the record or the bytes are not UTF-8.
    public mutating func readString() throws -> String {
        try readOptionalString() ?? ""
    }

    /// Writes an optional String; `nil` and `""` are both stored as a count of 0.
    public mutating func writeOptionalString(_ value: String?) {
        writeString(value ?? "")
    }

    /// Reads a String that may be absent: a count of 0 reads as `nil`.
    public mutating func readOptionalString() throws -> String? {
        let range = try readCountedRange()
        if range.isEmpty { return nil }
        let utf8 = slice(range).assumingMemoryBound(to: UInt8.self)
        // The initializer that copies into a new string's own storage is the
        // cheapest public way to make a String (cheaper than String(decoding:)
        // and String(validating:): BENCHMARKS.md has the counts); it repairs
        // invalid UTF-8 rather than failing, so a string that came back
        // different from its bytes was not valid.
        let decoded: String? = {
            var string = String(unsafeUninitializedCapacity: utf8.count) { target in
                _ = target.initialize(fromContentsOf: utf8)
                return utf8.count
            }
            if DataBuffer.isASCII(utf8) { return string }
            return string.withUTF8 { $0.elementsEqual(utf8) } ? string : nil
        }()
        guard let decoded else {
            readerIndex = range.lowerBound - 4
            throw malformed("a string of \(range.count) bytes that is not valid UTF-8")
        }
        return decoded
    }

    /// Writes Data with a UInt32 byte count in front.
    public mutating func writeData(_ value: Data) {
        value.withUnsafeBytes { writeCounted($0) }
    }

    /// Reads Data written by ``writeData(_:)``; a count of 0 reads as empty Data.
    public mutating func readData() throws -> Data {
        let range = try readCountedRange()
        return Data(slice(range))
    }

    /// Writes raw bytes with a UInt32 byte count in front (the same layout as Data).
    public mutating func writeBytes(_ value: [UInt8]) {
        value.withUnsafeBytes { writeCounted($0) }
    }

    /// Reads bytes written by ``writeBytes(_:)`` or ``writeData(_:)``.
    public mutating func readBytes() throws -> [UInt8] {
        let range = try readCountedRange()
        return Array(slice(range))
    }

    /// Writes an optional Date as seconds since 2001-01-01 00:00:00 UTC, big-endian; `nil` as 0.
    ///
    /// As in BNRPersistence, the exact instant 2001-01-01 00:00:00 UTC reads back as `nil`.
    public mutating func writeDate(_ value: Date?) {
        writeFloat64(value?.timeIntervalSinceReferenceDate ?? 0)
    }

    /// Reads a Date written by ``writeDate(_:)``; 0 reads as `nil`.
    ///
    /// Throws on NaN, which no Date writes.
    public mutating func readDate() throws -> Date? {
        let seconds = try readFloat64()
        if seconds == 0 { return nil }
        guard !seconds.isNaN else {
            readerIndex -= 8
            throw malformed("a date that is not a number")
        }
        return Date(timeIntervalSinceReferenceDate: seconds)
    }

    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        var index = 0
        let count = bytes.count
        while index + 8 <= count {
            if raw.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return false }
            index += 8
        }
        while index < count {
            if bytes[index] >= 0x80 { return false }
            index += 1
        }
        return true
    }
}
