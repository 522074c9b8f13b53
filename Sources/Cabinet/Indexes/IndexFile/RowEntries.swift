/// What a row's save wrote into its class's indexes: each entry's index number,
/// key bytes and value, so the next save or delete of the row takes out exactly
/// those, whatever the object holds by then. Stored under the row's key
/// (``IndexKeys/rowKey(_:)``) as, per entry, up to the record's end:
///
/// - the index number (UInt8);
/// - a varint: the stored key's length times 4, plus 2 if the key ends in a 0
///   byte that is not stored, plus 1 if a value follows;
/// - the key bytes (without that last 0);
/// - if one follows, the value: a varint length and the bytes (a full-text
///   entry's word positions);
///
/// then the store's record trailer. Every row has one of these beside its
/// entries, so each byte saved here is a megabyte of a million rows': most
/// entries have no value, and words and strings end in a 0 byte.
struct RowEntries: Equatable {
    struct Entry: Equatable {
        var index: UInt8
        var entry: IndexEntry
    }
    var entries: [Entry]

    func encoded(format: RecordFormat) -> [UInt8] {
        var buffer = DataBuffer(capacity: 8 + entries.reduce(0) { $0 + 5 + $1.entry.key.count + $1.entry.value.count })
        for entry in entries {
            buffer.writeUInt8(entry.index)
            let key = entry.entry.key, value = entry.entry.value
            let dropsZero = key.last == 0
            let stored = dropsZero ? key.count - 1 : key.count
            buffer.writeVarint(UInt64(stored) << 2 | (dropsZero ? 2 : 0) | (value.isEmpty ? 0 : 1))
            key.withUnsafeBytes { buffer.append(UnsafeRawBufferPointer(rebasing: $0[0..<stored])) }
            if !value.isEmpty { buffer.writeVarintCounted(value) }
        }
        buffer.appendTrailer(for: format)
        return buffer.allBytes
    }

    /// Reads a row's entries; damage is a ``CabinetError/malformedRecord(_:reason:)`` at `location`.
    static func decode(_ bytes: UnsafeRawBufferPointer, format: RecordFormat, location: RecordLocation) throws -> RowEntries {
        var buffer = DataBuffer(bytes: bytes)
        buffer.context = RecordContext(location: location)
        try buffer.removeTrailer(for: format)
        var entries: [Entry] = []
        while buffer.readableBytes > 0 {
            let index = try buffer.readUInt8()
            guard index >= IndexKeys.firstIndexNumber else { throw buffer.malformed("an entry of index number \(index), below the first") }
            let shape = try buffer.readVarint(limit: UInt64(buffer.readableBytes) << 2 | 3)
            var key = try buffer.readRawBytes(Int(shape >> 2))
            if shape & 2 != 0 { key.append(0) }
            let value = shape & 1 == 1 ? try buffer.readVarintCounted() : []
            guard shape & 1 == 0 || !value.isEmpty else { throw buffer.malformed("an entry whose value is marked but empty") }
            entries.append(Entry(index: index, entry: IndexEntry(key: key, value: value)))
        }
        return RowEntries(entries: entries)
    }
}
