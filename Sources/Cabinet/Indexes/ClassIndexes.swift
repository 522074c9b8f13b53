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
                throw CabinetError.unindexableValue(location, index: declared.name, reason: error.description)
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

/// One save's writes into a class's index file (or one part of a build's):
/// each changed row's entries go to the sink as they come, full-text entries
/// into posting blocks (``PostingChanges``) when the save calls ``finish(sink:)``.
///
/// ```swift
/// let write = IndexWrite(indexes, view: indexView(of: indexes))
/// try write.row(object.rowID, entries: entries, isNew: true, sink: indexRecords)
/// try write.finish(sink: indexRecords)
/// ```
final class IndexWrite {
    let indexes: ClassIndexes
    let view: any OrderedStorageTable
    private var postings = PostingChanges()
    /// Full-text changes held before ``finishIfLarge(sink:)`` writes them: bounds a build's memory.
    static let postingsHeld = 1 << 20

    init(_ indexes: ClassIndexes, view: any OrderedStorageTable) {
        self.indexes = indexes
        self.view = view
    }

    /// Takes row `row`'s entries from what its last save wrote (read through the
    /// view; none when `isNew`) to `new` (`nil`: the row is deleted).
    func row(_ row: UInt32, entries new: RowEntries?, isNew: Bool, sink: ClassIndexes.Sink) throws {
        let old = isNew ? nil : try indexes.recorded(row: row, in: view)
        if old == new { return }
        let oldEntries = old?.entries ?? [], newEntries = new?.entries ?? []
        // An entry whose key stays but whose value changes (a word's positions) is only put again.
        for old in oldEntries where !newEntries.contains(where: { $0.index == old.index && $0.entry.key == old.entry.key }) {
            if indexes.isFullText(old.index) {
                postings.remove(index: old.index, word: old.entry.key, row: row)
            } else {
                try sink(IndexKeys.entryKey(index: old.index, value: old.entry.key, row: row), nil)
            }
        }
        for new in newEntries where !oldEntries.contains(new) {
            if indexes.isFullText(new.index) {
                postings.set(index: new.index, word: new.entry.key, row: row, positions: new.entry.value)
            } else {
                try sink(IndexKeys.entryKey(index: new.index, value: new.entry.key, row: row), new.entry.value)
            }
        }
        if let new, !new.entries.isEmpty {
            try sink(IndexKeys.rowKey(row), new.encoded(format: indexes.format))
        } else if old != nil {
            try sink(IndexKeys.rowKey(row), nil)
        }
    }

    /// Writes the full-text changes held so far; a save calls it once, after its last row.
    func finish(sink: ClassIndexes.Sink) throws {
        try postings.flush(view: view, sink: sink, className: indexes.className)
    }

    /// ``finish(sink:)`` once many changes are held (a build calls it between rows).
    func finishIfLarge(sink: ClassIndexes.Sink) throws {
        if postings.count >= IndexWrite.postingsHeld { try finish(sink: sink) }
    }
}
