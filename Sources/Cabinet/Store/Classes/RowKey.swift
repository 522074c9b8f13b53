/// A class file's key: an object's row ID as four bytes, least significant
/// first (BNRPersistence's layout), row 1 being the class's metadata.
///
/// One place for the layout, so the readers of a batch, a region and another
/// process's save (live data, pool changes) decode a key as the store writes it.
/// ```swift
/// if let row = RowKey.row(key), row != ClassMetadata.rowID { changed.insert(row) }
/// ```
enum RowKey {
    /// The row `key` names; `nil` for a key of another length, which names no row.
    @inline(__always)
    static func row(_ key: UnsafeRawBufferPointer) -> UInt32? {
        key.count == 4 ? UInt32(littleEndian: key.loadUnaligned(as: UInt32.self)) : nil
    }

    /// The row `key` names; `nil` for a key of another length.
    static func row(_ key: [UInt8]) -> UInt32? {
        key.withUnsafeBytes { row($0) }
    }

    /// The key of `row`.
    static func bytes(_ row: UInt32) -> [UInt8] {
        withUnsafeBytes(of: row.littleEndian, Array.init)
    }
}
