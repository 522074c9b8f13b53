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
            if !readOnly, try backend.hasTable(named: name) {
                let table = try changingTables { try backend.openOrderedTable(named: name) }
                try changingTables { try clear(table) }
            }
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
        let table = try readingCommittedState { try backend.openOrderedTable(named: name) }
        let wanted = IndexCatalog(names: names)
        let catalog = try readingCommittedState { try IndexCatalog.read(from: table, format: recordFormat) }
        let indexes = ClassIndexes(tableName: name, table: table, declared: zip(declared, wanted.indexes).map {
            ClassIndexes.Declared(index: $0, name: $1.name, number: $1.number)
        }, format: recordFormat)
        if catalog != wanted {
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
    private func build(_ indexes: ClassIndexes, of entry: ClassEntry, catalog: IndexCatalog) throws {
        let table = indexes.table
        try clear(table)
        var batch = 0
        try table.beginTransaction()
        do {
            let sink: ClassIndexes.Sink = { key, value in
                try withRecordBytes(key, value) { key, value in try table.apply(value, forKey: key) }
            }
            try scanSaved(entry) { object in
                let entries = try indexes.entries(of: object, location: entry.location(row: object.rowID))
                try indexes.write(row: object.rowID, entries: entries, isNew: true, view: table, sink: sink)
                batch += 1
                if batch == ObjectStore.indexBuildBatch {
                    try table.commitTransaction()
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
        logger.info("Cabinet: built the indexes of \(entry.name)", metadata: ["cabinet.path": "\(path)", "cabinet.file": "\(table.path)"])
    }

    /// Calls `body` with each saved object of `entry`'s class, loaded from its record.
    private func scanSaved(_ entry: ClassEntry, _ body: (StoredObject) throws -> Void) throws {
        try scan(entry.type, reserve: { _ in }) { object in
            if object.changeState == .clean { try body(object) }
            return true
        }
    }

    /// Removes every record of `table`, the catalog first, in transactions of a few thousand.
    func clear(_ table: any StorageTable) throws {
        while table.recordCount > 0 {
            var keys: [[UInt8]] = []
            try table.forEach { key, _ in
                keys.append(Array(key))
                return keys.count < ObjectStore.indexBuildBatch
            }
            if keys.isEmpty { return }
            try table.transaction {
                try IndexKeys.catalogKey.withUnsafeBytes { _ = try table.removeValue(forKey: $0) }
                for key in keys { try key.withUnsafeBytes { _ = try table.removeValue(forKey: $0) } }
            }
        }
    }
}
