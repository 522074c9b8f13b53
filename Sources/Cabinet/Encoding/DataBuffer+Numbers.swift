// Integers are little-endian; floating-point values are big-endian, as
// BNRPersistence wrote them (CFConvertFloatHostToSwapped).

extension DataBuffer {
    @inlinable
    mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        appendRaw(value.littleEndian)
    }

    @inlinable
    mutating func readLittleEndian<T: FixedWidthInteger>(_: T.Type) throws -> T {
        let start = try consume(MemoryLayout<T>.size)
        return T(littleEndian: readPointer(at: start).loadUnaligned(as: T.self))
    }

    /// Writes one byte.
    @inlinable public mutating func writeUInt8(_ value: UInt8) { appendRaw(value) }

    /// Reads one byte.
    @inlinable public mutating func readUInt8() throws -> UInt8 {
        let start = try consume(1)
        return readPointer(at: start).load(as: UInt8.self)
    }

    /// Writes an Int8 as one byte, two's complement.
    @inlinable public mutating func writeInt8(_ value: Int8) { appendRaw(UInt8(bitPattern: value)) }

    /// Reads an Int8 written by ``writeInt8(_:)``.
    @inlinable public mutating func readInt8() throws -> Int8 { Int8(bitPattern: try readUInt8()) }

    /// Writes a UInt16, little-endian.
    @inlinable public mutating func writeUInt16(_ value: UInt16) { appendLittleEndian(value) }

    /// Reads a little-endian UInt16.
    @inlinable public mutating func readUInt16() throws -> UInt16 { try readLittleEndian(UInt16.self) }

    /// Writes an Int16, little-endian two's complement.
    @inlinable public mutating func writeInt16(_ value: Int16) { appendLittleEndian(value) }

    /// Reads a little-endian Int16.
    @inlinable public mutating func readInt16() throws -> Int16 { try readLittleEndian(Int16.self) }

    /// Writes an Int32, little-endian two's complement.
    @inlinable public mutating func writeInt32(_ value: Int32) { appendLittleEndian(value) }

    /// Reads a little-endian Int32.
    @inlinable public mutating func readInt32() throws -> Int32 { try readLittleEndian(Int32.self) }

    /// Writes a UInt32, little-endian.
    @inlinable public mutating func writeUInt32(_ value: UInt32) { appendLittleEndian(value) }

    /// Reads a little-endian UInt32.
    @inlinable public mutating func readUInt32() throws -> UInt32 { try readLittleEndian(UInt32.self) }

    /// Writes a UInt64, little-endian.
    @inlinable public mutating func writeUInt64(_ value: UInt64) { appendLittleEndian(value) }

    /// Reads a little-endian UInt64.
    @inlinable public mutating func readUInt64() throws -> UInt64 { try readLittleEndian(UInt64.self) }

    /// Writes an Int64, little-endian two's complement.
    @inlinable public mutating func writeInt64(_ value: Int64) { appendLittleEndian(value) }

    /// Reads a little-endian Int64.
    @inlinable public mutating func readInt64() throws -> Int64 { try readLittleEndian(Int64.self) }

    /// Writes an `Int` as 8 bytes (an Int64), whatever the platform's word size.
    @inlinable public mutating func writeInt(_ value: Int) { appendLittleEndian(Int64(value)) }

    /// Reads an `Int` written by ``writeInt(_:)``.
    @inlinable public mutating func readInt() throws -> Int {
        let value = try readLittleEndian(Int64.self)
        guard let result = Int(exactly: value) else {
            throw malformed("the integer \(value) does not fit in Int")
        }
        return result
    }

    /// Writes a `UInt` as 8 bytes (a UInt64), whatever the platform's word size.
    @inlinable public mutating func writeUInt(_ value: UInt) { appendLittleEndian(UInt64(value)) }

    /// Reads a `UInt` written by ``writeUInt(_:)``.
    @inlinable public mutating func readUInt() throws -> UInt {
        let value = try readLittleEndian(UInt64.self)
        guard let result = UInt(exactly: value) else {
            throw malformed("the integer \(value) does not fit in UInt")
        }
        return result
    }

    /// Writes a Bool as one byte, 0 or 1.
    @inlinable public mutating func writeBool(_ value: Bool) { appendRaw(UInt8(value ? 1 : 0)) }

    /// Reads a Bool: 0 is false, any other byte true (as C and Objective-C read it).
    @inlinable public mutating func readBool() throws -> Bool { try readUInt8() != 0 }

    /// Writes a Float32, big-endian.
    @inlinable public mutating func writeFloat32(_ value: Float32) { appendLittleEndian(value.bitPattern.byteSwapped) }

    /// Reads a big-endian Float32. NaN payloads and infinities round-trip.
    @inlinable public mutating func readFloat32() throws -> Float32 {
        Float32(bitPattern: try readLittleEndian(UInt32.self).byteSwapped)
    }

    /// Writes a Float64, big-endian.
    @inlinable public mutating func writeFloat64(_ value: Float64) { appendLittleEndian(value.bitPattern.byteSwapped) }

    /// Reads a big-endian Float64. NaN payloads and infinities round-trip.
    @inlinable public mutating func readFloat64() throws -> Float64 {
        Float64(bitPattern: try readLittleEndian(UInt64.self).byteSwapped)
    }
}
