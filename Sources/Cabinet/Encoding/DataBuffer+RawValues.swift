// Enums and other RawRepresentable values: the raw value, as its own method
// writes it. A raw value that is no case of the type is a malformed record
// (the store was written by a version of the program with more cases).

extension DataBuffer {
    /// Writes `value`'s raw value with `write`.
    ///
    /// ```swift
    /// enum Mood: UInt8 { case calm, loud }
    /// buffer.writeRawValue(mood) { $0.writeUInt8($1) }
    /// ```
    @inlinable
    public mutating func writeRawValue<Value: RawRepresentable>(_ value: Value, _ write: (inout DataBuffer, Value.RawValue) -> Void) {
        write(&self, value.rawValue)
    }

    /// Reads a value written by ``writeRawValue(_:_:)``: its raw value with `read`.
    /// A raw value that is no case of `Value` throws
    /// ``/CabinetStorage/CabinetError/malformedRecord(_:reason:)``, naming the record.
    ///
    /// ```swift
    /// mood = try buffer.readRawValue(Mood.self) { try $0.readUInt8() }
    /// ```
    @inlinable
    public mutating func readRawValue<Value: RawRepresentable>(_ type: Value.Type, _ read: (inout DataBuffer) throws -> Value.RawValue) throws -> Value {
        let start = readerIndex
        let raw = try read(&self)
        guard let value = Value(rawValue: raw) else {
            readerIndex = start     // a failed read leaves the cursor where it was
            throw malformed("the raw value \(raw) is no case of \(Value.self)")
        }
        return value
    }
}
