/// What a row's save wrote into its class's indexes: each entry's index number,
/// key bytes and value, so the next save or delete of the row takes out exactly
/// those, whatever the object holds by then. Stored under the row's key
/// (``IndexKeys/rowKey(_:)``) as: the count (varint), then per entry the index
/// number (UInt8), the key bytes and the value bytes (each a varint length and
/// the bytes), then the store's record trailer.
struct RowEntries: Equatable {
    struct Entry: Equatable {
        var index: UInt8
        var entry: IndexEntry
    }
    var entries: [Entry]

    func encoded(format: RecordFormat) -> [UInt8] {
        var buffer = DataBuffer(capacity: 8 + entries.reduce(0) { $0 + 5 + $1.entry.key.count + $1.entry.value.count })
        buffer.writeVarint(UInt64(entries.count))
        for entry in entries {
            buffer.writeUInt8(entry.index)
            buffer.writeVarintCounted(entry.entry.key)
            buffer.writeVarintCounted(entry.entry.value)
        }
        buffer.appendTrailer(for: format)
        return buffer.allBytes
    }

    /// Reads a row's entries; damage is a ``CabinetError/malformedRecord(_:reason:)`` at `location`.
    static func decode(_ bytes: UnsafeRawBufferPointer, format: RecordFormat, location: RecordLocation) throws -> RowEntries {
        var buffer = DataBuffer(bytes: bytes)
        buffer.context = RecordContext(location: location)
        try buffer.removeTrailer(for: format)
        // An entry takes at least 3 bytes: more than that many is damage, not a huge allocation.
        let count = Int(try buffer.readVarint(limit: UInt64(buffer.readableBytes / 3)))
        var entries: [Entry] = []
        entries.reserveCapacity(count)
        for _ in 0..<count {
            let index = try buffer.readUInt8()
            guard index >= IndexKeys.firstIndexNumber else { throw buffer.malformed("an entry of index number \(index), below the first") }
            let key = try buffer.readVarintCounted()
            entries.append(Entry(index: index, entry: IndexEntry(key: key, value: try buffer.readVarintCounted())))
        }
        guard buffer.readableBytes == 0 else { throw buffer.malformed("\(buffer.readableBytes) bytes after the last entry") }
        return RowEntries(entries: entries)
    }
}
