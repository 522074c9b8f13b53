/// The list of tables a store holds, kept with the store (``StoreServices/readCatalog()``)
/// and checksummed, so that a table that has gone missing is reported instead
/// of being silently created again empty (and its tag handed to another table).
///
/// Each table may carry a one-byte tag: the layer above records an ID there
/// that must stay taken even while the table is missing. The storage layer
/// keeps the tag without interpreting it.
///
/// Stored as text (see `docs/FORMAT.md`):
/// ```
/// cabinet-catalog 1
/// table 1 Playlist
/// table 0 Song
/// table - NamedBuffers
/// crc32 8d4c7a1e
/// ```
public struct StoreCatalog: Sendable, Equatable {
    /// Each table's name and tag (`nil`: the table has no tag).
    public var tables: [String: UInt8?]

    public init(tables: [String: UInt8?] = [:]) {
        self.tables = tables
    }

    static let header = "cabinet-catalog 1"

    /// The catalog's text, ending with the CRC-32 of everything before that line.
    public var encoded: [UInt8] {
        var text = StoreCatalog.header + "\n"
        for name in tables.keys.sorted() {
            var tag = "-"
            if let entry = tables[name], let value = entry { tag = String(value) }
            text += "table \(tag) \(name)\n"
        }
        let body = Array(text.utf8)
        let crc = body.withUnsafeBytes { CRC32.checksum($0) }
        return body + Array("crc32 \(String(crc, radix: 16))\n".utf8)
    }

    /// Decodes a catalog; throws ``CabinetError/malformedRecord(_:reason:)`` naming `file` if it is damaged.
    public init(encoded bytes: [UInt8], file: String) throws {
        func damaged(_ reason: String) -> CabinetError {
            .malformedRecord(RecordLocation(file: file), reason: "the store's catalog is damaged (\(reason)); remove it and open the store as a writer to rebuild it from the tables")
        }
        guard bytes.last == UInt8(ascii: "\n"), let split = bytes.dropLast().lastIndex(of: UInt8(ascii: "\n")) else {
            throw damaged("it has no checksum line")
        }
        let body = Array(bytes[...split])
        let crcLine = String(decoding: bytes[(split + 1)...].dropLast(), as: UTF8.self)
        guard crcLine.hasPrefix("crc32 "), let stored = UInt32(crcLine.dropFirst(6), radix: 16) else {
            throw damaged("its last line is not its checksum")
        }
        guard body.withUnsafeBytes({ CRC32.checksum($0) }) == stored else { throw damaged("its checksum does not match") }
        let lines = String(decoding: body.dropLast(), as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.first.map(String.init) == StoreCatalog.header else { throw damaged("unknown header") }
        var tables: [String: UInt8?] = [:]
        for line in lines.dropFirst() {
            // "table TAG NAME": the name is the rest of the line, spaces included.
            let words = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard words.count == 3, words[0] == "table", TableName.problem(with: String(words[2])) == nil else {
                throw damaged("the line '\(line)'")
            }
            var tag: UInt8?
            if words[1] != "-" {
                guard let value = UInt8(words[1]) else { throw damaged("the line '\(line)'") }
                tag = value
            }
            tables[String(words[2])] = .some(tag)
        }
        self.tables = tables
    }
}

extension StoreCatalog {
    /// This catalog with `additions` (table name → tag) in it, as a batch's
    /// commit writes it; `refusal` makes the error thrown if they clash with it
    /// (``clash(with:)``), and nothing is changed.
    ///
    /// ```swift
    /// let catalog = try (services.readCatalog() ?? StoreCatalog()).adding(batch.catalogAdditions) {
    ///     .saveConflict(path: path, reason: $0)
    /// }
    /// ```
    public func adding(_ additions: [String: UInt8?], refusal: (_ clash: String) -> CabinetError) throws -> StoreCatalog {
        if let clash = clash(with: additions) { throw refusal(clash) }
        var added = self
        for (name, tag) in additions { added.tables[name] = .some(tag) }
        return added
    }

    /// Why `additions` (table name → tag) cannot join this catalog: a table it
    /// lists with another tag, or a tag another table holds; `nil` if they can.
    /// Two writers that each catalogued a new table join without a clash; two
    /// that gave one tag to different tables (two classes one class ID) clash.
    public func clash(with additions: [String: UInt8?]) -> String? {
        var holders: [UInt8: String] = [:]
        for (name, tag) in tables { if let tag { holders[tag] = name } }
        for name in additions.keys.sorted() {
            let tag = additions[name]!
            if let listed = tables[name], listed != tag {
                return "the catalog lists table '\(name)' with tag \(StoreCatalog.describe(listed)), this save with tag \(StoreCatalog.describe(tag))"
            }
            if let tag, let holder = holders[tag], holder != name {
                return "tag \(tag), which this save gives table '\(name)', is table '\(holder)''s in the catalog"
            }
        }
        return nil
    }

    private static func describe(_ tag: UInt8?) -> String { tag.map(String.init) ?? "-" }
}
