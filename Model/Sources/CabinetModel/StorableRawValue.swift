import Foundation

// Each raw value type with the DataBuffer method of its own width.

extension String: StorableRawValue {
    @inlinable public func write(to buffer: inout DataBuffer) { buffer.writeString(self) }
    @inlinable public static func read(from buffer: inout DataBuffer) throws -> String { try buffer.readString() }
}

extension Bool: StorableRawValue {
    @inlinable public func write(to buffer: inout DataBuffer) { buffer.writeBool(self) }
    @inlinable public static func read(from buffer: inout DataBuffer) throws -> Bool { try buffer.readBool() }
}

extension Int8: StorableRawValue {
    @inlinable public func write(to buffer: inout DataBuffer) { buffer.writeInt8(self) }
    @inlinable public static func read(from buffer: inout DataBuffer) throws -> Int8 { try buffer.readInt8() }
}

extension UInt8: StorableRawValue {
    @inlinable public func write(to buffer: inout DataBuffer) { buffer.writeUInt8(self) }
    @inlinable public static func read(from buffer: inout DataBuffer) throws -> UInt8 { try buffer.readUInt8() }
}

extension Int16: StorableRawValue {
    @inlinable public func write(to buffer: inout DataBuffer) { buffer.writeInt16(self) }
    @inlinable public static func read(from buffer: inout DataBuffer) throws -> Int16 { try buffer.readInt16() }
}

extension UInt16: StorableRawValue {
    @inlinable public func write(to buffer: inout DataBuffer) { buffer.writeUInt16(self) }
    @inlinable public static func read(from buffer: inout DataBuffer) throws -> UInt16 { try buffer.readUInt16() }
}

extension Int32: StorableRawValue {
    @inlinable public func write(to buffer: inout DataBuffer) { buffer.writeInt32(self) }
    @inlinable public static func read(from buffer: inout DataBuffer) throws -> Int32 { try buffer.readInt32() }
}

extension UInt32: StorableRawValue {
    @inlinable public func write(to buffer: inout DataBuffer) { buffer.writeUInt32(self) }
    @inlinable public static func read(from buffer: inout DataBuffer) throws -> UInt32 { try buffer.readUInt32() }
}

extension Int64: StorableRawValue {
    @inlinable public func write(to buffer: inout DataBuffer) { buffer.writeInt64(self) }
    @inlinable public static func read(from buffer: inout DataBuffer) throws -> Int64 { try buffer.readInt64() }
}

extension UInt64: StorableRawValue {
    @inlinable public func write(to buffer: inout DataBuffer) { buffer.writeUInt64(self) }
    @inlinable public static func read(from buffer: inout DataBuffer) throws -> UInt64 { try buffer.readUInt64() }
}

extension Int: StorableRawValue {
    @inlinable public func write(to buffer: inout DataBuffer) { buffer.writeInt(self) }
    @inlinable public static func read(from buffer: inout DataBuffer) throws -> Int { try buffer.readInt() }
}

extension UInt: StorableRawValue {
    @inlinable public func write(to buffer: inout DataBuffer) { buffer.writeUInt(self) }
    @inlinable public static func read(from buffer: inout DataBuffer) throws -> UInt { try buffer.readUInt() }
}

extension Float32: StorableRawValue {
    @inlinable public func write(to buffer: inout DataBuffer) { buffer.writeFloat32(self) }
    @inlinable public static func read(from buffer: inout DataBuffer) throws -> Float32 { try buffer.readFloat32() }
}

extension Float64: StorableRawValue {
    @inlinable public func write(to buffer: inout DataBuffer) { buffer.writeFloat64(self) }
    @inlinable public static func read(from buffer: inout DataBuffer) throws -> Float64 { try buffer.readFloat64() }
}
