/// The redo log that makes a save touching several files all-or-nothing.
///
/// Tokyo Cabinet's transactions are per file: a process killed between two
/// files' commits would leave half a save. So a save that changes more than one
/// file first writes every change to a journal, which the backend makes visible
/// whole or not at all (`TokyoCabinetJournalFile`), then applies the changes
/// to the files, and then removes the journal. A store that opens with a journal
/// present replays it: the puts and removes are idempotent, so replaying a save
/// that was fully or partly applied completes it. The layout is in `docs/FORMAT.md`.
package struct SaveJournal: ~Copyable {
    package static let magic = Array("CABINETJ".utf8)
    package static let formatVersion: UInt8 = 1

    package enum Operation: UInt8 {
        case end = 0, put = 1, remove = 2
    }

    private var tableIndex: [String: UInt16] = [:]
    package private(set) var tableNames: [String] = []

    package init() {}
    private var operationCount: UInt32 = 0
    private var body = ByteWriter()

    /// The journal's number for `table`, given once per table so recording a
    /// record costs no name lookup.
    package mutating func tableIndex(for table: String) -> UInt16 {
        if let known = tableIndex[table] { return known }
        let index = UInt16(tableNames.count)
        tableIndex[table] = index
        tableNames.append(table)
        return index
    }

    /// Records that `key` of `table` is set to `value` (or removed, when `value` is nil).
    package mutating func record(table: String, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer?) {
        record(table: tableIndex(for: table), key: key, value: value)
    }

    /// Records that `key` of the table numbered `table` is set to `value` (or removed).
    package mutating func record(table index: UInt16, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer?) {
        body.append(value == nil ? Operation.remove.rawValue : Operation.put.rawValue)
        body.append(index)
        body.appendCounted(key)
        if let value { body.appendCounted(value) }
        operationCount += 1
    }

    /// The journal file's bytes: header, table names, operations, end marker, count and CRC-32.
    package func encoded() -> [UInt8] {
        var file = ByteWriter(capacity: body.count + 64)
        SaveJournal.magic.withUnsafeBytes { file.append($0) }
        file.append(SaveJournal.formatVersion)
        file.append(UInt16(tableNames.count))
        for name in tableNames { Array(name.utf8).withUnsafeBytes { file.appendCounted($0) } }
        body.withUnsafeBytes { file.append($0) }
        file.append(Operation.end.rawValue)
        file.append(operationCount)
        let crc = file.withUnsafeBytes { CRC32.checksum($0) }
        file.append(crc)
        return file.bytes
    }

    /// Whether `bytes` start with the journal's magic and end with the CRC-32 of
    /// everything before it: a journal written whole, not one a kill cut short.
    package static func isWhole(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= magic.count + 4, bytes.starts(with: magic) else { return false }
        return bytes.withUnsafeBytes { all in
            UInt32(littleEndian: all.loadUnaligned(fromByteOffset: all.count - 4, as: UInt32.self))
                == CRC32.checksum(UnsafeRawBufferPointer(rebasing: all[0..<(all.count - 4)]))
        }
    }

    /// Calls `apply` with each operation of a journal file, after checking it whole.
    ///
    /// Throws if the bytes are not a complete journal (damaged, or cut short), or
    /// if it names a table that cannot be in a store (`../x`, `.cabinet-lock`, `Song.wal`):
    /// every name is checked before the first operation is applied.
    package static func replay(_ bytes: [UInt8], location: RecordLocation,
                       _ apply: (_ table: String, _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer?) throws -> Void) throws {
        func damaged(_ reason: String) -> CabinetError { .malformedRecord(location, reason: "the save journal is damaged: \(reason)") }
        guard bytes.count >= magic.count + 1 + 2 + 1 + 4 + 4, Array(bytes.prefix(magic.count)) == magic else {
            throw damaged("it does not start with the journal's magic")
        }
        guard isWhole(bytes) else { throw damaged("its checksum does not match") }
        var reader = ByteReader(bytes, from: magic.count, damaged: damaged)
        guard try reader.read(UInt8.self) == formatVersion else { throw damaged("unknown journal version") }
        let tableCount = Int(try reader.read(UInt16.self))
        var names: [String] = []
        for _ in 0..<tableCount {
            // A name from disk becomes a path: one that reaches outside the store, or names
            // a file that is not a table, must stop the replay before anything is written.
            let name = try reader.readString()
            if let problem = TableName.problem(with: name) { throw damaged("it names a table that cannot exist: '\(name)' \(problem)") }
            names.append(name)
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
    }
}
