/// One table of byte-string keys and values, opened by ``StorageBackend/openTable(named:)``.
///
/// Reads hand the value to a closure for the duration of the call, so a read
/// loop copies each record once and allocates nothing per record. Every
/// requirement must be implemented; none has a default, so a wrapper cannot
/// silently drop one:
/// ```swift
/// final class MyTable: StorageTable {
///     let path: String                       // for messages: "/tmp/music/Song", "redis://host/music:Song"
///     var recordCount: Int { get throws { ... } }
///     var byteCount: UInt64 { get throws { ... } }
///     func withValue<R>(forKey key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? { ... }
///     func withValues(forKeys keys: [[UInt8]], _ body: (Int, UnsafeRawBufferPointer?) throws -> Void) throws { ... }
///     func setValue(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer) throws { ... }
///     func removeValue(forKey key: UnsafeRawBufferPointer) throws -> Bool { ... }
///     func reserveCapacity(_ records: Int) throws {}   // nothing to prepare
///     func compact() throws {}                         // no free space to give back
///     func forEach(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws { ... }
/// }
/// ```
/// A table needs no transactions: every write a store makes reaches the
/// backend as one ``WriteBatch`` (``StorageBackend/commit(_:)``), which the
/// backend makes all or nothing however it can. The writes above serve that
/// commit and a store's copy (``StorageBackend/replaceContents(with:formatMarker:)``).
/// A failure throws a ``CabinetError`` naming ``path``: damage as
/// ``CabinetError/malformedRecord(_:reason:)``, a failure of the medium as
/// ``CabinetError/backendFailure(_:operation:underlying:)`` in the backend's
/// own domain (a failed system call: ``CabinetError/systemCallFailure(_:operation:errno:message:)``), a write to a
/// read-only store as ``CabinetError/readOnly(path:reason:)``. None traps on
/// damaged data. Keys and values are at most ``StorageLimits/largestValue`` bytes.
public protocol StorageTable: AnyObject {
    /// Where the table is kept (a file's path, or a name), used in error messages.
    var path: String { get }

    /// The number of records (every key, whatever the layer above keeps there).
    /// Throws if it cannot be learnt (a remote table whose server failed):
    /// never a count it did not read.
    var recordCount: Int { get throws }

    /// The bytes the table occupies where it is kept: a file's size, free space
    /// included, or what an in-memory or remote table holds. For `cabinet info`.
    /// Throws if it cannot be learnt, as ``recordCount``.
    var byteCount: UInt64 { get throws }

    /// Calls `body` with the value stored under `key`, or returns `nil` if there
    /// is none. The bytes are valid only during `body`; an error `body` throws
    /// is rethrown as it is.
    func withValue<R>(forKey key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R?

    /// Calls `body` with the index in `keys` and the value of each key (`nil`:
    /// none), in the order of `keys`: many single reads in one call, which a
    /// networked table answers in one round trip (Redis: `HMGET`), and a file
    /// one read at a time. The bytes are valid only during each call of `body`;
    /// an error `body` throws ends the reads and is rethrown.
    /// ```swift
    /// try table.withValues(forKeys: rows.map { withUnsafeBytes(of: $0.littleEndian, Array.init) }) { index, value in
    ///     if let value { print(rows[index], value.count) }
    /// }
    /// ```
    func withValues(forKeys keys: [[UInt8]], _ body: (_ index: Int, _ value: UnsafeRawBufferPointer?) throws -> Void) throws

    /// ``withValues(forKeys:_:)`` for 4-byte little-endian row keys (a class's
    /// records), without an array per key: an index query reads its objects'
    /// records so. The default reads through ``withValues(forKeys:_:)``; a
    /// requirement with a default, so tables written before it keep working.
    /// ```swift
    /// try table.withValues(forRows: [2, 5, 9]) { index, value in
    ///     if let value { print(value.count) }
    /// }
    /// ```
    func withValues(forRows rows: [UInt32], _ body: (_ index: Int, _ value: UnsafeRawBufferPointer?) throws -> Void) throws

    /// Stores `value` under `key`, replacing any previous value. An empty value
    /// is a value (its base address may be `nil`). Inside a transaction the
    /// change becomes visible to other opens only at the commit.
    func setValue(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer) throws

    /// Removes the value under `key`; returns whether there was one (none is not an error).
    @discardableResult
    func removeValue(forKey key: UnsafeRawBufferPointer) throws -> Bool

    /// Prepares the table to hold about `records` records, before a save that
    /// will bring it there (a hash file grows its buckets). Called outside any
    /// transaction; it changes no record, and if it throws the table is as it
    /// was. A table that needs no preparation implements it as an empty method.
    func reserveCapacity(_ records: Int) throws

    /// Rewrites the table without free space (and rebuilds its index), for
    /// `cabinet compact`: whole or not at all, even if the process dies part
    /// way, and with every record kept. Called outside any transaction. A table
    /// that has no free space implements it as an empty method.
    func compact() throws

    /// ``compact()``, calling `progress` with the records copied so far every
    /// ``StoreProgress/reportingInterval`` records, for a table that copies
    /// them one by one. The one requirement with a default: a table written
    /// before it compacts without reports (the store reports it whole, at its end).
    func compact(progress: (_ recordsCopied: Int) -> Void) throws

    /// Calls `body` with each key and value, in the table's own order, until it
    /// returns `false`; an error `body` throws ends the scan and is rethrown.
    /// The table must not be changed while this runs; other tables may be read.
    /// A plain table promises no order, and the layer above depends on none (a
    /// hash file's order, a Swift dictionary's, will do); an ``OrderedStorageTable``
    /// scans in key order.
    func forEach(_ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool) throws

    /// Calls `body` with each record whose key is a row ID of `rows` (4 bytes,
    /// little-endian), in row order, until it returns `false`; rows without a
    /// record are passed over. `body` runs outside any read of the table, so it
    /// may change the table; records already read ahead are not read again. A networked table reads them in batches, the
    /// next asked for while `body` handles the last (Redis: pipelined `HMGET`s
    /// of 1,024 rows); the default reads one row at a time. A requirement with
    /// a default, so tables written before it keep working.
    /// ```swift
    /// try table.forEachRow(in: 2...1_001) { row, value in
    ///     print(row, value.count)
    ///     return true
    /// }
    /// ```
    func forEachRow(in rows: ClosedRange<UInt32>, _ body: (_ row: UInt32, _ value: UnsafeRawBufferPointer) throws -> Bool) throws

    /// Whether ``forEachRow(in:_:)`` reads a class whose rows are mostly there
    /// faster than ``forEach(_:)`` (a networked table: batched reads by key
    /// against a cursor the server walks); `false` by default (a file is read
    /// fastest in its own order).
    var prefersRowReads: Bool { get }
}

extension StorageTable {
    /// Compacts without reports: the default for a table that implements only ``compact()``.
    public func compact(progress: (_ recordsCopied: Int) -> Void) throws {
        try compact()
    }

    /// One row at a time: the default ``forEachRow(in:_:)``.
    public func forEachRow(in rows: ClosedRange<UInt32>, _ body: (_ row: UInt32, _ value: UnsafeRawBufferPointer) throws -> Bool) throws {
        try forEachRowOneByOne(in: rows, body)
    }

    /// ``forEachRow(in:_:)`` as a loop of ``withValue(forKey:_:)``. Each value is
    /// copied out before `body` runs, outside the table's read: `body` may then
    /// write the table (a save in the middle of a page), as it could read it.
    package func forEachRowOneByOne(in rows: ClosedRange<UInt32>, _ body: (UInt32, UnsafeRawBufferPointer) throws -> Bool) throws {
        var value: [UInt8] = []
        for row in rows {
            let found: Void? = try withValue(forRow: row) { bytes in
                value.removeAll(keepingCapacity: true)
                value.append(contentsOf: bytes)
            }
            guard found != nil else { continue }
            if try !value.withUnsafeBytes({ try body(row, $0) }) { return }
        }
    }

    /// The default ``withValues(forRows:_:)``: the rows' keys, through ``withValues(forKeys:_:)``.
    public func withValues(forRows rows: [UInt32], _ body: (_ index: Int, _ value: UnsafeRawBufferPointer?) throws -> Void) throws {
        try withValues(forKeys: rows.map { withUnsafeBytes(of: $0.littleEndian, Array.init) }, body)
    }

    /// `false`: a table is read fastest in its own order, by ``forEach(_:)``.
    public var prefersRowReads: Bool { false }

    /// ``withValues(forKeys:_:)`` for a table that reads one key at a time: a loop of ``withValue(forKey:_:)``.
    package func withValuesOneByOne(forKeys keys: [[UInt8]], _ body: (Int, UnsafeRawBufferPointer?) throws -> Void) throws {
        for (index, key) in keys.enumerated() {
            let found: Void? = try key.withUnsafeBytes { key in try withValue(forKey: key) { try body(index, $0) } }
            if found == nil { try body(index, nil) }
        }
    }

    /// Calls `body` with the value under a 4-byte little-endian row key.
    @inlinable
    package func withValue<R>(forRow rowID: UInt32, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try withUnsafeBytes(of: rowID.littleEndian) { try withValue(forKey: $0, body) }
    }

    /// Stores `value` under a 4-byte little-endian row key.
    package func setValue(_ value: UnsafeRawBufferPointer, forRow rowID: UInt32) throws {
        try withUnsafeBytes(of: rowID.littleEndian) { try setValue(value, forKey: $0) }
    }

    /// Stores `value` under `key`, or removes the key when `value` is `nil`.
    package func apply(_ value: UnsafeRawBufferPointer?, forKey key: UnsafeRawBufferPointer) throws {
        if let value { try setValue(value, forKey: key) } else { try removeValue(forKey: key) }
    }
}

/// Runs `body` with a record's key and value (`nil`: removed) as raw bytes, as
/// tables (``StorageTable/apply(_:forKey:)``) and journals take them.
package func withRecordBytes<R>(_ key: [UInt8], _ value: [UInt8]?,
                                _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
    try key.withUnsafeBytes { key in
        guard let value else { return try body(key, nil) }
        return try value.withUnsafeBytes { try body(key, $0) }
    }
}
