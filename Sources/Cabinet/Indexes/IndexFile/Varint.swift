/// LEB128 varints: seven bits a byte, low bits first, the high bit set on every
/// byte but the last. Index records use them where most numbers are small (word
/// positions, row ID gaps, lengths), so a record is a few bytes, not a few words.
enum Varint {
    /// Calls `body` with each byte of `value`'s encoding, in order.
    @inline(__always)
    static func encode(_ value: UInt64, _ body: (UInt8) -> Void) {
        var value = value
        while value >= 0x80 {
            body(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        body(UInt8(value))
    }

    /// Appends `value`.
    static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        encode(value) { bytes.append($0) }
    }

    /// Reads the varint at `offset` in `bytes` and moves `offset` past it; `nil`
    /// (and `offset` unchanged) for bytes no encoding of a value up to `limit`
    /// makes: cut short, longer than ten bytes, or above `limit`. Damage is an
    /// answer, never a trap.
    @inline(__always)
    static func read(_ bytes: UnsafeRawBufferPointer, at offset: inout Int, limit: UInt64 = .max) -> UInt64? {
        var value: UInt64 = 0, shift: UInt64 = 0, at = offset
        while at < bytes.count {
            let byte = bytes[at]
            at += 1
            let bits = UInt64(byte & 0x7F)
            // The tenth byte may carry one bit; more would not fit in 64.
            guard shift < 63 || (shift == 63 && bits <= 1) else { return nil }
            value |= bits << shift
            if byte & 0x80 == 0 {
                guard value <= limit else { return nil }
                offset = at
                return value
            }
            shift += 7
        }
        return nil
    }
}

extension DataBuffer {
    /// Writes `value` as a LEB128 varint (``Varint``).
    mutating func writeVarint(_ value: UInt64) {
        Varint.encode(value) { writeUInt8($0) }
    }

    /// Reads a varint written by ``writeVarint(_:)``: at most `limit`, or the record is malformed.
    mutating func readVarint(limit: UInt64 = .max) throws -> UInt64 {
        var offset = readerIndex
        guard let value = withUnsafeBytes({ Varint.read($0, at: &offset, limit: limit) }) else {
            throw malformed("a varint cut short, too long or above \(limit)")
        }
        readerIndex = offset
        return value
    }

    /// Writes raw bytes with a varint byte count in front.
    mutating func writeVarintCounted(_ bytes: [UInt8]) {
        writeVarint(UInt64(bytes.count))
        bytes.withUnsafeBytes { append($0) }
    }

    /// Reads bytes written by ``writeVarintCounted(_:)``.
    mutating func readVarintCounted() throws -> [UInt8] {
        try readRawBytes(Int(try readVarint(limit: UInt64(readableBytes))))
    }

    /// Reads the next `count` bytes, which carry no length of their own.
    mutating func readRawBytes(_ count: Int) throws -> [UInt8] {
        guard count <= readableBytes else { throw malformed("a length of \(count) bytes, but only \(readableBytes) follow") }
        let start = try consume(count)
        return Array(slice(start..<(start + count)))
    }
}
