import CabinetStorage

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
        let probe = entry.type.init()
        if let foreign = declared.first(where: { !$0.accepts(probe) }) {
            throw CabinetError.classConflict(className: String(describing: entry.type),
                                             reason: "its indexes name \(foreign.keyPath), a property of another class; index only its own properties")
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
        let wanted = IndexCatalog(zip(names, declared.map(\.kind)).map { ($0, $1) }, classVersion: entry.type.version)
        let indexes = ClassIndexes(tableName: name, table: table, declared: zip(declared, wanted.indexes).enumerated().map { position, pair in
            ClassIndexes.Declared(index: pair.0, name: pair.1.name, number: pair.1.number, label: pair.0.label(in: entry.name, at: position))
        }, format: recordFormat)
        // A failed write left the file in doubt (``OrderedStorageTable/isDamaged``): built again too;
        // so is an index replaced by another under the same name (ObjectStore+IndexSample, in Building).
        var disagreement: String?
        if catalog == wanted && !table.isDamaged {
            disagreement = try readingCommittedState { try indexDisagreement(indexes, of: entry) }
        }
        if catalog != wanted || table.isDamaged || disagreement != nil {
            guard !readOnly else {
                let why = disagreement ?? catalog?.difference(from: wanted) ?? "its build did not finish"
                entry.indexProblem = "up-to-date index file (\(why)): open the store once without readOnly to build them"
                return
            }
            if let disagreement {
                logger.warning("Cabinet: the index file of \(entry.name) is built again: \(disagreement)",
                               metadata: ["cabinet.path": "\(path)", "cabinet.file": "\(table.path)"])
            }
            do {
                try changingTables { try build(indexes, of: entry, catalog: wanted) }
            } catch let error as CabinetError where error.code == .classNotRegistered {
                // Built from every record or not at all: a partial build would answer without the rest.
                abandonIndexes(of: entry, after: error)
                return
            }
        }
        entry.indexes = indexes
    }

    /// The index file of a class as this store reads and writes it: a pool's
    /// write block sees it with the group's staged saves laid over it.
    func indexView(of indexes: ClassIndexes) -> any OrderedStorageTable {
        link.orderedView(of: indexes.table, named: indexes.tableName)
    }

    /// How many rows a build writes per batch: its memory stays bounded.
    static let indexBuildBatch = 5_000

    /// Empties `table`, then writes every saved object's entries and, last, the
    /// catalog, in batches of ``indexBuildBatch`` rows committed by the backend
    /// (so a build needs nothing of a backend but ``StorageBackend/commit(_:)``).
    /// A process that dies part way leaves a file without a catalog, which the
    /// next open builds again.
    func build(_ indexes: ClassIndexes, of entry: ClassEntry, catalog: IndexCatalog) throws {
        let table = indexes.table
        try clear(table)
        let total = max(try entry.table.recordCount - 1, 0)
        var rows = 0, done = 0
        func report() { indexBuildProgress?(IndexBuildProgress(className: entry.name, rowsDone: done, rowsTotal: max(total, done))) }
        var batch = WriteBatch()
        var position = batch.table(named: indexes.tableName)
        // Full-text postings read the blocks earlier batches committed (the view is the
        // committed file), so they are written into each batch just before it commits.
        let write = IndexWrite(indexes, view: table)
        let sink: ClassIndexes.Sink = { key, value in
            withRecordBytes(key, value) { key, value in batch.set(value, forKey: key, inTable: position) }
        }
        func commitBatch() throws {
            try write.finish(sink: sink)
            try commitToBackend(batch)
            batch = WriteBatch()
            position = batch.table(named: indexes.tableName)
            rows = 0
        }
        try forEachRecord(of: entry, indexes) { row, entries in
            try write.row(row, entries: entries, isNew: true, sink: sink)
            rows += 1
            done += 1
            if rows == ObjectStore.indexBuildBatch || write.holdsMany {
                try commitBatch()
                report()
            }
        }
        try write.finish(sink: sink)
        try sink(IndexKeys.catalogKey, catalog.encoded(format: recordFormat))
        try commitBatch()
        report()
        // A new class's empty index is no news; one built from objects already there is.
        if done > 0 {
            logger.info("Cabinet: built the indexes of \(entry.name) from its \(done) objects",
                        metadata: ["cabinet.path": "\(path)", "cabinet.file": "\(table.path)"])
        }
    }

    /// Calls `body` with each saved row of `entry`'s class and the index entries
    /// its record makes (``indexEntries(ofRecord:row:entry:indexes:)``), in the
    /// file's order, whatever the live objects hold. A record that does not decode
    /// is left out and logged: one damaged record does not keep a class from its
    /// indexes (`cabinet verify` names it).
    func forEachRecord(of entry: ClassEntry, _ indexes: ClassIndexes, _ body: (UInt32, RowEntries) throws -> Void) throws {
        var skipped = 0
        try entry.table.forEach { key, value in
            guard key.count == 4 else { return true }
            let row = UInt32(littleEndian: key.loadUnaligned(as: UInt32.self))
            guard row >= ClassMetadata.firstObjectRowID else { return true }
            let entries: RowEntries
            do {
                entries = try indexEntries(ofRecord: value, row: row, entry: entry, indexes: indexes)
            } catch let error as CabinetError where error.code != .unindexableValue {
                // A class the store has but this program has not registered (yet) is not damage: its rows
                // would be missing for good from an index built now.
                if let waited = classNotYetRegistered(error) { throw CabinetError.classNotRegistered(className: waited) }
                skipped += 1
                if skipped <= 10 { log(error, level: .error) }
                return true
            }
            try body(row, entries)
            return true
        }
        if skipped > 0 {
            logger.error("Cabinet: \(skipped) records of \(entry.name) could not be read and are not in its indexes",
                         metadata: ["cabinet.path": "\(path)", "cabinet.class": "\(entry.name)"])
        }
    }

    /// The index entries a record makes: decoded into a scratch object of the
    /// class (never the live one), so an index holds what the record reads back
    /// as, whatever `write(to:)` and `read(from:)` lose between them (a `Date` at
    /// 2001-01-01 00:00:00 UTC is written as "no date" and reads back `nil`).
    func indexEntries(ofRecord bytes: UnsafeRawBufferPointer, row: UInt32, entry: ClassEntry, indexes: ClassIndexes) throws -> RowEntries {
        let scratch = entry.type.init()
        scratch.rowID = row
        var buffer = DataBuffer(bytes: bytes)
        try decode(&buffer, into: scratch, entry: entry)
        return try indexes.entries(of: scratch, location: entry.location(row: row))
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
        // Every save asks: the common answer costs one pass and no allocation.
        guard !journalAwaitsReplay, entriesByName.values.contains(where: { $0.indexes?.table.isDamaged == true }) else { return }
        for entry in entriesByName.values.sorted(by: { $0.name < $1.name }) {
            guard let indexes = entry.indexes, indexes.table.isDamaged else { continue }
            do {
                try changingTables { try build(indexes, of: entry, catalog: indexes.catalog(classVersion: entry.type.version)) }
            } catch {
                if let error = error as? CabinetError, error.code == .classNotRegistered { abandonIndexes(of: entry, after: error) }
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
