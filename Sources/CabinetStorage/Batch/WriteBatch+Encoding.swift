/// A batch's bytes: the save journal's format (docs/FORMAT.md, "Save journal").
///
/// Tokyo Cabinet's transactions are per file: a process killed between two
/// files' commits would leave half a save. So a batch that changes more than
/// one file is first written whole to a journal, which the backend makes
/// visible whole or not at all (`TokyoCabinetJournalFile`), then applied to
/// the files, and then removed. A store that opens with a journal present
/// replays it: the puts and removes are idempotent, so replaying a save that
/// was fully or partly applied completes it.
extension WriteBatch {
    /// The first bytes of an encoded batch.
    public static let magic = Array("CABINETJ".utf8)
    /// The layout's version, after the magic: 1 for a batch that adds nothing to
    /// the catalog (the layout every Cabinet reads), 2 for one that does.
    public static let formatVersion: UInt8 = 1
    /// The version of a batch with ``catalogAdditions``: version 1's layout
    /// with the catalog's new entries after the table names.
    public static let catalogFormatVersion: UInt8 = 2

    private enum Operation: UInt8 {
        case end = 0, put = 1, remove = 2
    }

    /// The batch as bytes: header, table names, operations, end marker, count and CRC-32.
    ///
    /// ```swift
    /// let bytes = batch.encoded()
    /// let same = try WriteBatch(decoding: bytes, location: RecordLocation(file: "batch"))
    /// ```
    public func encoded() -> [UInt8] {
        var file = ByteWriter(capacity: byteCount + 16 * count + 64)
        WriteBatch.magic.withUnsafeBytes { file.append($0) }
        file.append(catalogAdditions.isEmpty ? WriteBatch.formatVersion : WriteBatch.catalogFormatVersion)
        file.append(UInt16(tableNames.count))
        for name in tableNames { Array(name.utf8).withUnsafeBytes { file.appendCounted($0) } }
        if !catalogAdditions.isEmpty {
            file.append(UInt16(catalogAdditions.count))
            for name in catalogAdditions.keys.sorted() {
                Array(name.utf8).withUnsafeBytes { file.appendCounted($0) }
                let tag = catalogAdditions[name]!
                file.append(UInt8(tag == nil ? 0 : 1))
                file.append(tag ?? 0)
            }
        }
        var operations: UInt32 = 0
        for (position, name) in tableNames.enumerated() {
            changes(ofTable: name)?.forEach { key, value in
                file.append(value == nil ? Operation.remove.rawValue : Operation.put.rawValue)
                file.append(UInt16(position))
                file.appendCounted(key)
                if let value { file.appendCounted(value) }
                operations += 1
                return true
            }
        }
        file.append(Operation.end.rawValue)
        file.append(operations)
        let crc = file.withUnsafeBytes { CRC32.checksum($0) }
        file.append(crc)
        return file.bytes
    }

    /// Reads a batch from ``encoded()``'s bytes, checking them whole first.
    ///
    /// Throws ``CabinetError/malformedRecord(_:reason:)`` naming `location` if
    /// they are not a complete batch (damaged, or cut short), or name a table
    /// that cannot be in a store (`../x`, `.cabinet-lock`, `Song.wal`).
    public init(decoding bytes: [UInt8], location: RecordLocation) throws {
        self.init()
        let additions = try WriteBatch.replay(bytes, location: location) { name, key, value in
            set(value, forKey: key, inTable: name)
        }
        for (name, tag) in additions { addToCatalog(table: name, tag: tag) }
    }

    /// Whether `bytes` start with the magic and end with the CRC-32 of
    /// everything before it: a batch written whole, not one a kill cut short.
    public static func isWhole(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= magic.count + 4, bytes.starts(with: magic) else { return false }
        return bytes.withUnsafeBytes { all in
            UInt32(littleEndian: all.loadUnaligned(fromByteOffset: all.count - 4, as: UInt32.self))
                == CRC32.checksum(UnsafeRawBufferPointer(rebasing: all[0..<(all.count - 4)]))
        }
    }

    /// Calls `apply` with each change of an encoded batch, in order, after
    /// checking it whole, without making a batch of it (a journal's replay);
    /// returns the batch's ``catalogAdditions``, which its committer writes after the tables.
    ///
    /// Throws if the bytes are not a complete batch, or if it names a table
    /// that cannot be in a store: every name is checked before the first change is applied.
    @discardableResult
    package static func replay(_ bytes: [UInt8], location: RecordLocation,
                               _ apply: (_ table: String, _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer?) throws -> Void) throws -> [String: UInt8?] {
        func damaged(_ reason: String) -> CabinetError { .malformedRecord(location, reason: "the save journal is damaged: \(reason)") }
        guard bytes.count >= magic.count + 1 + 2 + 1 + 4 + 4, Array(bytes.prefix(magic.count)) == magic else {
            throw damaged("it does not start with the journal's magic")
        }
        guard isWhole(bytes) else { throw damaged("its checksum does not match") }
        var reader = ByteReader(bytes, from: magic.count, damaged: damaged)
        let version = try reader.read(UInt8.self)
        guard version == formatVersion || version == catalogFormatVersion else {
            throw damaged(version > catalogFormatVersion ? "version \(version), newer than this Cabinet reads (1 and 2): open the store with the Cabinet that wrote it"
                                                          : "unknown journal version \(version)")
        }
        // A name from disk becomes a path: one that reaches outside the store, or names
        // a file that is not a table, must stop the replay before anything is written.
        func tableName() throws -> String {
            let name = try reader.readString()
            if let problem = TableName.problem(with: name) { throw damaged("it names a table that cannot exist: '\(name)' \(problem)") }
            return name
        }
        let tableCount = Int(try reader.read(UInt16.self))
        var names: [String] = []
        for _ in 0..<tableCount { names.append(try tableName()) }
        var additions: [String: UInt8?] = [:]
        if version == catalogFormatVersion {
            for _ in 0..<Int(try reader.read(UInt16.self)) {
                let name = try tableName()
                let hasTag = try reader.read(UInt8.self), tag = try reader.read(UInt8.self)
                guard hasTag <= 1, hasTag == 1 || tag == 0 else { throw damaged("catalog entry '\(name)' has tag flag \(hasTag) and tag \(tag)") }
                guard additions[name] == nil else { throw damaged("it adds table '\(name)' to the catalog twice") }
                additions[name] = .some(hasTag == 1 ? tag : nil)
            }
        }
        var applied: UInt32 = 0
        while true {
            guard let operation = Operation(rawValue: try reader.read(UInt8.self)) else { throw damaged("unknown operation") }
            if operation == .end { break }
            let index = Int(try reader.read(UInt16.self))
            guard index < names.count else { throw damaged("operation on table \(index) of \(names.count)") }
            let key = try reader.readCountedRange()
            let value = operation == .put ? try reader.readCountedRange() : nil
            try bytes.withUnsafeBytes { all in
                try apply(names[index], UnsafeRawBufferPointer(rebasing: all[key]), value.map { UnsafeRawBufferPointer(rebasing: all[$0]) })
            }
            applied += 1
        }
        guard try reader.read(UInt32.self) == applied else { throw damaged("operation count does not match") }
        return additions
    }
}
