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

extension Optional where Wrapped == [UInt8] {
    /// Runs `body` with the bytes, or with `nil`.
    func withUnsafeOptionalBytes<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        guard let self else { return try body(nil) }
        return try self.withUnsafeBytes { try body($0) }
    }
}
