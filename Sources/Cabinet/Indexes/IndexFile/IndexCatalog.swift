import CabinetStorage

/// Which indexes a class's index file holds, by name and number, the version
/// of the class whose `read(from:)` made its entries, and the folding that made
/// its full-text words: its catalog record (``IndexKeys/catalogKey``). Written
/// last by a build, so a file whose catalog is missing, names other indexes
/// than the class declares, was made by another version of the class (whose
/// reading of old records may give other values), or whose full-text words
/// another folding made, is built again (a build the process died in included).
///
/// A catalog of an older format (an older Cabinet's layout of the entries)
/// differs from the one wanted, so the file is built again in this layout.
///
/// Layout: format (UInt8, 4; 1 and 2 were earlier layouts of the entries, 3 the
/// same entries without the folding byte), class version (UInt8), folding
/// (UInt8, layout 4 only: ``FullTextTokenizer/foldingVersion``; 1 in layout 3),
/// count (UInt8), then per index its number (UInt8), kind (UInt8: 0 value, 1
/// full text, 2 references) and name (UInt32 length, UTF-8), then the store's
/// record trailer.
struct IndexCatalog: Equatable {
    /// 4: layout 3's entries, and the catalog says which folding made the
    /// full-text words (3: full-text entries in posting blocks, row records with
    /// varint lengths and a value only where an entry has one; 2 had an empty
    /// value's length in every entry; 1 one record per word and row, 4-byte lengths).
    static let format: UInt8 = 4
    /// The first layout whose entries are this Cabinet's (3 and 4 differ in the catalog only).
    static let currentEntries: UInt8 = 3
    var layout = IndexCatalog.format
    var classVersion: UInt8
    /// The folding of the full-text indexes' words; a file without one was made by either.
    var folding = FullTextTokenizer.foldingVersion
    var indexes: [(name: String, number: UInt8, kind: StoredIndex.Kind)]

    /// Whether the entries are in this Cabinet's layout (a catalog of layout 3 or 4).
    var hasCurrentEntries: Bool { layout >= IndexCatalog.currentEntries }

    /// Whether two catalogs describe the same entries: a file of layout 3 whose
    /// indexes are not full text needs no new build to be of layout 4.
    static func == (a: IndexCatalog, b: IndexCatalog) -> Bool {
        let sameEntries = a.layout == b.layout || (a.hasCurrentEntries && b.hasCurrentEntries)
        return sameEntries && a.classVersion == b.classVersion && a.sameIndexes(as: b)
            && (a.folding == b.folding || !a.indexes.contains { $0.kind == .fullText })
    }

    /// Whether both name the same indexes, with the same numbers and kinds.
    func sameIndexes(as other: IndexCatalog) -> Bool {
        indexes.map(\.name) == other.indexes.map(\.name) && indexes.map(\.number) == other.indexes.map(\.number)
            && indexes.map(\.kind) == other.indexes.map(\.kind)
    }

    /// Why a file with this catalog is not the `wanted` one, for an open that cannot build it.
    func difference(from wanted: IndexCatalog) -> String {
        if hasCurrentEntries && classVersion == wanted.classVersion && sameIndexes(as: wanted) && folding != wanted.folding {
            return "its full-text words were folded by an earlier Cabinet"
        }
        return "its indexes changed"
    }

    /// Numbers from 2 up, in the order the class declares its indexes (at most 253).
    init(_ declared: [(name: String, kind: StoredIndex.Kind)], classVersion: UInt8) {
        self.classVersion = classVersion
        indexes = declared.enumerated().map { ($1.name, IndexKeys.firstIndexNumber + UInt8($0), $1.kind) }
    }

    private init(layout: UInt8, classVersion: UInt8, folding: UInt8, indexes: [(name: String, number: UInt8, kind: StoredIndex.Kind)]) {
        self.layout = layout
        self.classVersion = classVersion
        self.folding = folding
        self.indexes = indexes
    }

    func encoded(format: RecordFormat) -> [UInt8] {
        var buffer = DataBuffer(capacity: 64)
        buffer.writeUInt8(layout)
        buffer.writeUInt8(classVersion)
        if layout >= 4 { buffer.writeUInt8(folding) }
        buffer.writeUInt8(UInt8(indexes.count))
        for index in indexes {
            buffer.writeUInt8(index.number)
            buffer.writeUInt8(index.kind.code)
            buffer.writeString(index.name)
        }
        buffer.appendTrailer(for: format)
        return buffer.allBytes
    }

    /// The catalog of `table`, or `nil` if it has none (never built, or a build did not finish).
    static func read(from table: any StorageTable, format: RecordFormat) throws -> IndexCatalog? {
        try IndexKeys.catalogKey.withUnsafeBytes { key in
            try table.withValue(forKey: key) { bytes in
                var buffer = DataBuffer(bytes: bytes)
                buffer.context = RecordContext(location: RecordLocation(file: "\(table.path) [catalog]"))
                try buffer.removeTrailer(for: format)
                let layout = try buffer.readUInt8()
                guard layout >= 1 else { throw buffer.malformed("an index catalog of layout 0") }
                guard layout <= IndexCatalog.format else {
                    throw CabinetError.unsupportedFormat(path: table.path, reason: "its index catalog is of layout \(layout), which a newer Cabinet wrote (this one writes layout \(IndexCatalog.format)): open the store with the newer Cabinet, or `cabinet reindex` it to build its indexes again in this Cabinet's layout")
                }
                let classVersion = try buffer.readUInt8()
                // Layouts before 4 have no folding byte: their words were folded by the first folding.
                let folding = layout >= 4 ? try buffer.readUInt8() : 1
                let count = Int(try buffer.readUInt8())
                var indexes: [(name: String, number: UInt8, kind: StoredIndex.Kind)] = []
                for _ in 0..<count {
                    let number = try buffer.readUInt8()
                    guard number >= IndexKeys.firstIndexNumber else { throw buffer.malformed("an index numbered \(number)") }
                    let code = try buffer.readUInt8()
                    guard let kind = StoredIndex.Kind(code: code) else { throw buffer.malformed("an index of unknown kind \(code)") }
                    indexes.append((try buffer.readString(), number, kind))
                }
                return IndexCatalog(layout: layout, classVersion: classVersion, folding: folding, indexes: indexes)
            }
        }
    }
}

extension StoredIndex.Kind {
    /// Its byte in an index catalog.
    var code: UInt8 {
        switch self {
        case .value: 0
        case .fullText: 1
        case .references: 2
        }
    }

    init?(code: UInt8) {
        switch code {
        case 0: self = .value
        case 1: self = .fullText
        case 2: self = .references
        default: return nil
        }
    }
}
