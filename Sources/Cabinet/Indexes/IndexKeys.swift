/// The keys of a class's index file (`<storedName>.index`, an ordered table;
/// `docs/FORMAT.md`, "Indexes"). The first byte says what a record is:
///
/// - 0: the file's catalog (key `0 "catalog"`): which index has which number;
/// - 1: a row's entries (key `1` + row ID, big-endian): what the save of the row
///   wrote into each index, so the next save or delete of the row removes
///   exactly those, whatever the object holds by then;
/// - 2 to 255: an entry of the index with that number: the value's bytes
///   (``IndexableValue/indexBytes(into:)``), then the row ID (big-endian), so
///   equal values sort by row ID. Its value is empty (a full-text entry's holds
///   the word's positions).
enum IndexKeys {
    static let catalogKey: [UInt8] = [0] + Array("catalog".utf8)
    static let rowPrefix: UInt8 = 1
    static let firstIndexNumber: UInt8 = 2

    /// A row ID as 4 big-endian bytes: they sort as the row IDs.
    static func rowBytes(_ rowID: UInt32) -> [UInt8] {
        withUnsafeBytes(of: rowID.bigEndian) { Array($0) }
    }

    static func rowKey(_ rowID: UInt32) -> [UInt8] { [rowPrefix] + rowBytes(rowID) }

    static func entryKey(index: UInt8, value: [UInt8], row: UInt32) -> [UInt8] {
        var key: [UInt8] = [index]
        key.reserveCapacity(1 + value.count + 4)
        key.append(contentsOf: value)
        withUnsafeBytes(of: row.bigEndian) { key.append(contentsOf: $0) }
        return key
    }

    /// The row ID at the end of an entry's key.
    static func row(ofEntry key: UnsafeRawBufferPointer) -> UInt32? {
        guard key.count >= 5 else { return nil }
        return UInt32(bigEndian: key.loadUnaligned(fromByteOffset: key.count - 4, as: UInt32.self))
    }

    /// The smallest key above every key that starts with `prefix` (`nil`: no such key, all bytes 255).
    static func keyAfterPrefix(_ prefix: [UInt8]) -> [UInt8]? {
        var key = prefix
        while let last = key.last {
            if last < 255 {
                key[key.count - 1] = last + 1
                return key
            }
            key.removeLast()
        }
        return nil
    }
}

/// One entry an object makes in an index: the bytes of its key between the
/// index's number and the row ID, and its value (empty, or a full-text entry's
/// word positions).
struct IndexEntry: Equatable {
    var key: [UInt8]
    var value: [UInt8] = []
}

/// What a row's save wrote into its class's indexes: each entry's index number,
/// key bytes and value. Stored under the row's key (``IndexKeys/rowKey(_:)``) as:
/// count (UInt32), then per entry the index number (UInt8), the key bytes and
/// the value bytes (each a UInt32 length and the bytes), all little-endian,
/// then the store's record trailer.
struct RowEntries: Equatable {
    struct Entry: Equatable {
        var index: UInt8
        var entry: IndexEntry
    }
    var entries: [Entry]

    func encoded(format: RecordFormat) -> [UInt8] {
        var buffer = DataBuffer(capacity: 8 + entries.reduce(0) { $0 + 9 + $1.entry.key.count + $1.entry.value.count })
        buffer.writeUInt32(UInt32(entries.count))
        for entry in entries {
            buffer.writeUInt8(entry.index)
            buffer.writeBytes(entry.entry.key)
            buffer.writeBytes(entry.entry.value)
        }
        buffer.appendTrailer(for: format)
        return buffer.allBytes
    }

    /// Reads a row's entries; damage is a ``CabinetError/malformedRecord(_:reason:)`` at `location`.
    static func decode(_ bytes: UnsafeRawBufferPointer, format: RecordFormat, location: RecordLocation) throws -> RowEntries {
        var buffer = DataBuffer(bytes: bytes)
        buffer.context = RecordContext(location: location)
        try buffer.removeTrailer(for: format)
        let count = Int(try buffer.readUInt32())
        guard count <= buffer.readableBytes / 9 else { throw buffer.malformed("\(count) index entries in \(buffer.readableBytes) bytes") }
        var entries: [Entry] = []
        entries.reserveCapacity(count)
        for _ in 0..<count {
            let index = try buffer.readUInt8()
            guard index >= IndexKeys.firstIndexNumber else { throw buffer.malformed("an entry of index number \(index), below the first") }
            let key = try buffer.readBytes()
            entries.append(Entry(index: index, entry: IndexEntry(key: key, value: try buffer.readBytes())))
        }
        return RowEntries(entries: entries)
    }
}
