// Arrays of values: a UInt32 little-endian count, then each element as its own
// write method writes it, the layout BNRPersistence gave arrays of references
// (`writeArray:ofClass:`). BNRPersistence had no arrays of values, so this is
// Cabinet's, built the same way; docs/FORMAT.md, "Values inside a record".

extension DataBuffer {
    /// Writes `values`: their count, then each with `write`.
    ///
    /// ```swift
    /// buffer.writeArray(dates) { $0.writeDate($1) }
    /// ```
    public mutating func writeArray<Element>(_ values: [Element], _ write: (inout DataBuffer, Element) -> Void) {
        writeUInt32(UInt32(values.count))
        for value in values { write(&self, value) }
    }

    /// Reads an array written by ``writeArray(_:_:)``, each element with `read`.
    /// `minimumElementSize` is the fewest bytes an element takes: a count that
    /// needs more bytes than remain is a malformed record, found before anything
    /// is allocated.
    ///
    /// ```swift
    /// dates = try buffer.readArray(minimumElementSize: 8) { try $0.readDate() }
    /// ```
    public mutating func readArray<Element>(minimumElementSize: Int, _ read: (inout DataBuffer) throws -> Element) throws -> [Element] {
        let start = readerIndex
        do {
            let count = try readCount(bytesPerElement: max(minimumElementSize, 1), of: "values")
            var values: [Element] = []
            values.reserveCapacity(count)
            for _ in 0..<count { values.append(try read(&self)) }
            return values
        } catch {
            readerIndex = start     // a failed read leaves the cursor where it was
            throw error
        }
    }

    /// Writes an array of strings (each as ``writeString(_:)``).
    ///
    /// ```swift
    /// buffer.writeStrings(tags)       // in write(to:)
    /// tags = try buffer.readStrings() // in read(from:)
    /// ```
    public mutating func writeStrings(_ values: [String]) { writeArray(values) { $0.writeString($1) } }

    /// Reads an array written by ``writeStrings(_:)``.
    public mutating func readStrings() throws -> [String] { try readArray(minimumElementSize: 4) { try $0.readString() } }

    /// Writes an array of UInt32s, each little-endian.
    public mutating func writeUInt32s(_ values: [UInt32]) { writeArray(values) { $0.writeUInt32($1) } }

    /// Reads an array written by ``writeUInt32s(_:)``.
    public mutating func readUInt32s() throws -> [UInt32] { try readArray(minimumElementSize: 4) { try $0.readUInt32() } }

    /// Writes an array of Int64s, each little-endian.
    public mutating func writeInt64s(_ values: [Int64]) { writeArray(values) { $0.writeInt64($1) } }

    /// Reads an array written by ``writeInt64s(_:)``.
    public mutating func readInt64s() throws -> [Int64] { try readArray(minimumElementSize: 8) { try $0.readInt64() } }

    /// Writes an array of Float64s, each big-endian as ``writeFloat64(_:)``.
    public mutating func writeFloat64s(_ values: [Float64]) { writeArray(values) { $0.writeFloat64($1) } }

    /// Reads an array written by ``writeFloat64s(_:)``.
    public mutating func readFloat64s() throws -> [Float64] { try readArray(minimumElementSize: 8) { try $0.readFloat64() } }
}
