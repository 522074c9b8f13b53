extension ObjectStore {
    /// Whether table `name` is one of the store's own, not a class's file:
    /// named buffers, out-of-line lists, or a class's index file.
    static func isAuxiliaryTable(_ name: String) -> Bool {
        auxiliaryTableNames.contains(name) || name.hasSuffix(ClassIndexes.suffix)
    }

    /// Opens the index file of `entry`'s class when it declares indexes, and
    /// builds the indexes from the saved objects when the file's catalog does not
    /// name exactly the declared ones (new, removed, renamed, or a build that did
    /// not finish). A class that declares none has its index file emptied.
    ///
    /// A read-only store builds nothing: a query on an index it has not got
    /// throws ``CabinetError/Code-swift.struct/noSuchIndex`` saying to open the store writable once.
    func openIndexes(for entry: ClassEntry) throws {
        let declared = entry.type.indexes
        let name = ClassIndexes.tableName(forClass: entry.name)
        let readOnly = backend.services.isReadOnly
        guard !declared.isEmpty else {
            // No index declared any more: its file goes.
            if !readOnly, try backend.hasTable(named: name) { try changingTables { try backend.removeTable(named: name) } }
            return
        }
        let names = declared.enumerated().map { $1.name(at: $0) }
        guard Set(names).count == names.count, names.count <= Int(UInt8.max - IndexKeys.firstIndexNumber) else {
            throw CabinetError.classConflict(className: String(describing: entry.type),
                                             reason: "its indexes need distinct names, and at most 253 of them (give each a name: .value(\\.x, named: \"x\"))")
        }
        if readOnly, try !backend.hasTable(named: name) {
            entry.indexProblem = "index file (\(backend.location(ofTable: name))): open the store once without readOnly to build it"
            return
        }
        let table: any OrderedStorageTable
        let catalog: IndexCatalog?
        do {
            table = try readingCommittedState { try backend.openOrderedTable(named: name) }
            catalog = try readingCommittedState { try IndexCatalog.read(from: table, format: recordFormat) }
        } catch let error as CabinetError where [.notADatabase, .malformedRecord, .checksumMismatch, .truncatedRecord].contains(error.code) {
            throw CabinetError.malformedRecord(error.location ?? RecordLocation(file: backend.location(ofTable: name), className: entry.name),
                                               reason: "the index file of \(entry.name) is damaged (\(error)); nothing is lost, the records are whole: `cabinet reindex \(path) \(entry.name)` (or `store.dropIndexes(ofClass: \"\(entry.name)\")`) removes it, and the next open builds it again")
        }
        let wanted = IndexCatalog(names: names, classVersion: entry.type.version)
        let indexes = ClassIndexes(tableName: name, table: table, declared: zip(declared, wanted.indexes).map {
            ClassIndexes.Declared(index: $0, name: $1.name, number: $1.number)
        }, format: recordFormat)
        // A failed write left the file in doubt (``OrderedStorageTable/isDamaged``): built again too.
        if catalog != wanted || table.isDamaged {
            guard !readOnly else {
                entry.indexProblem = "up-to-date index file (its indexes changed): open the store once without readOnly to build them"
                return
            }
            try changingTables { try build(indexes, of: entry, catalog: wanted) }
        }
        entry.indexes = indexes
    }

    /// The index file of a class as this store reads and writes it: a pool's
    /// write block sees it with the group's staged saves laid over it.
    func indexView(of indexes: ClassIndexes) -> any OrderedStorageTable {
        guard let context else { return indexes.table }
        return context.orderedView(of: indexes.table, named: indexes.tableName)
    }

    /// How many rows a build writes per transaction: its memory stays bounded.
    static let indexBuildBatch = 5_000

    /// Empties `table`, then writes every saved object's entries and, last, the
    /// catalog, in transactions of ``indexBuildBatch`` rows. A process that dies
    /// part way leaves a file without a catalog, which the next open builds again.
    func build(_ indexes: ClassIndexes, of entry: ClassEntry, catalog: IndexCatalog) throws {
        let table = indexes.table
        try clear(table)
        let total = max(entry.table.recordCount - 1, 0)
        var batch = 0, done = 0
        func report() { indexBuildProgress?(IndexBuildProgress(className: entry.name, rowsDone: done, rowsTotal: max(total, done))) }
        try table.beginTransaction()
        do {
            let sink: ClassIndexes.Sink = { key, value in
                try withRecordBytes(key, value) { key, value in try table.apply(value, forKey: key) }
            }
            try scanSaved(entry) { object in
                let entries = try indexes.entries(of: object, location: entry.location(row: object.rowID))
                try indexes.write(row: object.rowID, entries: entries, isNew: true, view: table, sink: sink)
                batch += 1
                done += 1
                if batch == ObjectStore.indexBuildBatch {
                    try table.commitTransaction()
                    report()
                    try table.beginTransaction()
                    batch = 0
                }
            }
            try catalog.encoded(format: recordFormat).withUnsafeBytes { value in
                try IndexKeys.catalogKey.withUnsafeBytes { try table.setValue(value, forKey: $0) }
            }
            try table.commitTransaction()
        } catch {
            try? table.abortTransaction()
            throw error
        }
        report()
        // A new class's empty index is no news; one built from objects already there is.
        if done > 0 {
            logger.info("Cabinet: built the indexes of \(entry.name) from its \(done) objects",
                        metadata: ["cabinet.path": "\(path)", "cabinet.file": "\(table.path)"])
        }
    }

    /// Calls `body` with each saved object of `entry`'s class, loaded from its record.
    private func scanSaved(_ entry: ClassEntry, _ body: (StoredObject) throws -> Void) throws {
        try scan(entry.type, reserve: { _ in }) { object in
            if object.changeState == .clean { try body(object) }
            return true
        }
    }

    /// Empties `table` (a new empty file for Tokyo Cabinet): a build starts from nothing.
    func clear(_ table: any OrderedStorageTable) throws {
        try table.removeAll()
    }

    /// Rebuilds, from the records, each index file a failed write left damaged
    /// (``OrderedStorageTable/isDamaged``): after a save, once the records are
    /// whole (no journal waits). A rebuild that fails too is tried again after
    /// the next save; it is logged.
    func rebuildDamagedIndexes() {
        guard !journalAwaitsReplay else { return }
        for entry in entriesByName.values.sorted(by: { $0.name < $1.name }) {
            guard let indexes = entry.indexes, indexes.table.isDamaged else { continue }
            do {
                try changingTables { try build(indexes, of: entry, catalog: IndexCatalog(names: indexes.declared.map(\.name), classVersion: entry.type.version)) }
            } catch {
                logger.error("Cabinet: the index file of \(entry.name) was damaged by a failed write and could not be rebuilt yet: \(error)",
                             metadata: ["cabinet.path": "\(path)", "cabinet.file": "\(indexes.table.path)"])
            }
        }
    }
}

/// How far a build of a class's indexes has got (``ObjectStore/indexBuildProgress``).
///
/// ```swift
/// store.indexBuildProgress = { print("\($0.className): \($0.rowsDone) of \($0.rowsTotal)") }
/// try store.register(Song.self)   // builds a newly declared index from the songs there
/// ```
public struct IndexBuildProgress: Sendable, Equatable {
    /// The class whose indexes are built (its stored name).
    public let className: String
    /// The objects indexed so far, and how many there are.
    public let rowsDone: Int
    public let rowsTotal: Int
}
