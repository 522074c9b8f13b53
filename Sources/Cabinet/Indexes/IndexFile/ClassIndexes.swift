import CabinetStorage

/// A registered class's indexes: its index file (an ordered table named
/// `<storedName>.index`) and the number each declared ``StoredIndex`` has in it.
///
/// A save hands each changed row to an ``IndexWrite``, which compares what the
/// row's last save wrote (its row record) with what the object makes now, and
/// sends the difference to the save's sink, with the class's records: so an
/// index changes in the same all-or-nothing save.
final class ClassIndexes {
    typealias Sink = (_ key: [UInt8], _ value: [UInt8]?) throws -> Void

    /// One declared index and its number in the file.
    struct Declared {
        let index: StoredIndex
        let name: String
        let number: UInt8
        /// How errors name it (``StoredIndex/label(in:at:)``).
        let label: String
    }

    /// The name of class `name`'s index file; no class may be stored under a name that ends so.
    static func tableName(forClass name: String) -> String { name + suffix }
    static let suffix = ".index"

    let tableName: String
    let table: any OrderedStorageTable
    let declared: [Declared]
    let format: RecordFormat
    /// Where errors say the file is.
    let location: String
    /// The class's stored name, for errors.
    let className: String
    private let fullTextNumbers: Set<UInt8>

    init(tableName: String, table: any OrderedStorageTable, declared: [Declared], format: RecordFormat) {
        self.tableName = tableName
        self.table = table
        self.declared = declared
        self.format = format
        location = table.path
        className = String(tableName.dropLast(ClassIndexes.suffix.count))
        fullTextNumbers = Set(declared.filter { $0.index.kind == .fullText }.map(\.number))
    }

    /// The catalog a build of these indexes writes.
    func catalog(classVersion: UInt8) -> IndexCatalog {
        IndexCatalog(declared.map { ($0.name, $0.index.kind) }, classVersion: classVersion)
    }

    /// The declared index of `kind` on `keyPath`, if the class has one.
    func index(on keyPath: AnyKeyPath, kind: StoredIndex.Kind) -> Declared? {
        declared.first { $0.index.keyPath == keyPath && $0.index.kind == kind }
    }

    /// The entries `object` makes in every index, in the order of the declared indexes.
    func entries(of object: StoredObject, location: RecordLocation) throws -> RowEntries {
        var entries: [RowEntries.Entry] = []
        for declared in declared {
            do {
                for entry in try declared.index.entries(object) { entries.append(RowEntries.Entry(index: declared.number, entry: entry)) }
            } catch {
                throw CabinetError.unindexableValue(location, index: declared.label, reason: error.description)
            }
        }
        return RowEntries(entries: entries)
    }

    /// What the last save of `row` wrote into the indexes (`nil`: nothing), read through `view`.
    func recorded(row: UInt32, in view: any StorageTable) throws -> RowEntries? {
        try IndexKeys.rowKey(row).withUnsafeBytes { key in
            try view.withValue(forKey: key) { bytes in
                try RowEntries.decode(bytes, format: format, location: RecordLocation(file: "\(location) [row \(row)]", rowID: row))
            }
        }
    }

    /// Whether index number `number` is a full-text index (its entries live in posting blocks).
    func isFullText(_ number: UInt8) -> Bool { fullTextNumbers.contains(number) }
}
