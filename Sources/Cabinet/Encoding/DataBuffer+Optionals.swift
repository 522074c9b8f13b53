// Optional values: a presence byte (0 absent, 1 present), then the value if
// present. BNRPersistence wrote nil only for strings (a count of 0), dates (0)
// and references (row 0), which `writeOptionalString`, `writeDate` and
// `writeReference` keep; this is for every other value. docs/FORMAT.md.

extension DataBuffer {
    /// Writes `value` or its absence: a byte 0 for `nil`; otherwise a byte 1,
    /// then the value with `write`.
    ///
    /// ```swift
    /// buffer.writeOptional(rating) { $0.writeUInt32($1) }
    /// ```
    public mutating func writeOptional<Value>(_ value: Value?, _ write: (inout DataBuffer, Value) -> Void) {
        guard let value else { return writeUInt8(0) }
        writeUInt8(1)
        write(&self, value)
    }

    /// Reads a value written by ``writeOptional(_:_:)``; a presence byte other than
    /// 0 or 1 is a malformed record (the bytes are not what was written).
    ///
    /// ```swift
    /// rating = try buffer.readOptional { try $0.readUInt32() }
    /// ```
    public mutating func readOptional<Value>(_ read: (inout DataBuffer) throws -> Value) throws -> Value? {
        let start = readerIndex
        switch try readUInt8() {
        case 0: return nil
        case 1:
            do {
                return try read(&self)
            } catch {
                readerIndex = start     // a failed read leaves the cursor where it was
                throw error
            }
        case let marker:
            readerIndex = start
            throw malformed("an optional value's presence byte \(marker) (0 or 1 expected)")
        }
    }
}
