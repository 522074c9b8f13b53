/// Which indexes a class's index file holds, by name and number, and the
/// version of the class whose `read(from:)` made its entries: its catalog
/// record (``IndexKeys/catalogKey``). Written last by a build, so a file whose
/// catalog is missing, names other indexes than the class declares, or was
/// made by another version of the class (whose reading of old records may give
/// other values) is built again (a build the process died in included).
///
/// A catalog of an older format (an older Cabinet's layout of the entries)
/// differs from the one wanted, so the file is built again in this layout.
///
/// Layout: format (UInt8, 3; 1 and 2 were earlier layouts of the entries), class version (UInt8), count (UInt8), then per
/// index its number (UInt8), kind (UInt8: 0 value, 1 full text, 2 references)
/// and name (UInt32 length, UTF-8), then the store's record trailer.
struct IndexCatalog: Equatable {
    /// 3: full-text entries in posting blocks, row records with varint lengths
    /// and a value only where an entry has one (2 had an empty value's length
    /// in every entry; 1 one record per word and row, 4-byte lengths).
    static let format: UInt8 = 3
    var layout = IndexCatalog.format
    var classVersion: UInt8
    var indexes: [(name: String, number: UInt8, kind: StoredIndex.Kind)]

    static func == (a: IndexCatalog, b: IndexCatalog) -> Bool {
        a.layout == b.layout && a.classVersion == b.classVersion && a.indexes.map(\.name) == b.indexes.map(\.name)
            && a.indexes.map(\.number) == b.indexes.map(\.number) && a.indexes.map(\.kind) == b.indexes.map(\.kind)
    }

    /// Numbers from 2 up, in the order the class declares its indexes (at most 253).
    init(_ declared: [(name: String, kind: StoredIndex.Kind)], classVersion: UInt8) {
        self.classVersion = classVersion
        indexes = declared.enumerated().map { ($1.name, IndexKeys.firstIndexNumber + UInt8($0), $1.kind) }
    }

    private init(layout: UInt8, classVersion: UInt8, indexes: [(name: String, number: UInt8, kind: StoredIndex.Kind)]) {
        self.layout = layout
        self.classVersion = classVersion
        self.indexes = indexes
    }

    func encoded(format: RecordFormat) -> [UInt8] {
        var buffer = DataBuffer(capacity: 64)
        buffer.writeUInt8(layout)
        buffer.writeUInt8(classVersion)
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
                let count = Int(try buffer.readUInt8())
                var indexes: [(name: String, number: UInt8, kind: StoredIndex.Kind)] = []
                for _ in 0..<count {
                    let number = try buffer.readUInt8()
                    guard number >= IndexKeys.firstIndexNumber else { throw buffer.malformed("an index numbered \(number)") }
                    let code = try buffer.readUInt8()
                    guard let kind = StoredIndex.Kind(code: code) else { throw buffer.malformed("an index of unknown kind \(code)") }
                    indexes.append((try buffer.readString(), number, kind))
                }
                return IndexCatalog(layout: layout, classVersion: classVersion, indexes: indexes)
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
