/// Which indexes a class's index file holds, by name and number, and the
/// version of the class whose `read(from:)` made its entries: its catalog
/// record (``IndexKeys/catalogKey``). Written last by a build, so a file whose
/// catalog is missing, names other indexes than the class declares, or was
/// made by another version of the class (whose reading of old records may give
/// other values) is built again (a build the process died in included).
///
/// Layout: format (UInt8, 1), class version (UInt8), count (UInt8), then per
/// index its number (UInt8) and name (UInt32 length, UTF-8), then the store's
/// record trailer.
struct IndexCatalog: Equatable {
    static let format: UInt8 = 1
    var classVersion: UInt8
    var indexes: [(name: String, number: UInt8)]

    static func == (a: IndexCatalog, b: IndexCatalog) -> Bool {
        a.classVersion == b.classVersion && a.indexes.map(\.name) == b.indexes.map(\.name) && a.indexes.map(\.number) == b.indexes.map(\.number)
    }

    /// Numbers from 2 up, in the order the class declares its indexes (at most 253).
    init(names: [String], classVersion: UInt8) {
        self.classVersion = classVersion
        indexes = names.enumerated().map { ($1, IndexKeys.firstIndexNumber + UInt8($0)) }
    }

    private init(classVersion: UInt8, indexes: [(name: String, number: UInt8)]) {
        self.classVersion = classVersion
        self.indexes = indexes
    }

    func encoded(format: RecordFormat) -> [UInt8] {
        var buffer = DataBuffer(capacity: 64)
        buffer.writeUInt8(IndexCatalog.format)
        buffer.writeUInt8(classVersion)
        buffer.writeUInt8(UInt8(indexes.count))
        for index in indexes {
            buffer.writeUInt8(index.number)
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
                guard try buffer.readUInt8() == IndexCatalog.format else { throw buffer.malformed("an index catalog of an unknown format") }
                let classVersion = try buffer.readUInt8()
                let count = Int(try buffer.readUInt8())
                var indexes: [(name: String, number: UInt8)] = []
                for _ in 0..<count {
                    let number = try buffer.readUInt8()
                    guard number >= IndexKeys.firstIndexNumber else { throw buffer.malformed("an index numbered \(number)") }
                    indexes.append((try buffer.readString(), number))
                }
                return IndexCatalog(classVersion: classVersion, indexes: indexes)
            }
        }
    }
}
