import CabinetStorage

/// Opens a class's table when the class is registered: reads or creates its
/// metadata row, hands out class IDs no other class of the store uses, and
/// keeps the store's catalog, so that a class whose file has gone missing is
/// refused instead of being created again empty.
struct ClassRegistrar {
    unowned let store: ObjectStore

    static func validate(name: String, of type: StoredObject.Type) throws {
        var reason = TableName.problem(with: name)
        if name == ObjectStore.namedBuffersTableName { reason = "is the name of the named buffers' file" }
        if name == ObjectStore.listsTableName { reason = "is the name of the out-of-line lists' file" }
        if name.hasSuffix(ClassIndexes.suffix) { reason = "may not end in '\(ClassIndexes.suffix)', the ending of a class's index file" }
        // Its index file, and the copy Tokyo Cabinet writes of it when it is compacted, must be file names too.
        let longestIndexed = TableName.longestFileName - ClassIndexes.suffix.utf8.count - TableName.optimizeSuffixLength
        if reason == nil && !type.indexes.isEmpty && name.utf8.count > longestIndexed {
            reason = "is \(name.utf8.count) bytes, and a class that declares indexes may have at most \(longestIndexed) (its index file '<name>\(ClassIndexes.suffix)', the copy Tokyo Cabinet writes of it when compacting, '<name>\(ClassIndexes.suffix).tmp.<number>', and that copy's log, '….wal', must be file names of at most \(TableName.longestFileName) bytes)"
        }
        if let reason {
            throw CabinetError.invalidStoredName(className: String(describing: type), name: name, reason: reason)
        }
    }

    /// Refuses a class that declares `@Stored` properties but writes no byte for
    /// a blank instance: its `write(to:)` was not overridden, so every save would
    /// store an empty record and its values would come back as their defaults.
    static func checkWritesContent(_ type: StoredObject.Type, bytesWritten: Int) throws {
        guard bytesWritten == 0 else { return }
        var mirror: Mirror? = Mirror(reflecting: type.init())
        var declared: [String] = []
        while let current = mirror, current.subjectType != StoredObject.self {
            declared += current.children.compactMap { $0.value is any StoredProperty ? $0.label.map { String($0.dropFirst()) } : nil }
            mirror = current.superclassMirror
        }
        guard !declared.isEmpty else { return }
        throw CabinetError.invalidModel(className: String(describing: type),
                                        reason: "it declares @Stored properties (\(declared.joined(separator: ", "))) but its write(to:) writes nothing, so their values would not be saved; override read(from:) and write(to:) to read and write them in the same order (or declare the class with @StoredModel)")
    }

    /// The table and metadata of class `name`. A class the catalog lists must have
    /// its file; a new class gets a new file (created whole) and fresh metadata,
    /// written at once, in one batch with its catalog entry, so that its class ID
    /// is taken before any other class asks for one. Another process that took
    /// the same ID first (a store other processes write) makes the batch a
    /// conflict: the catalog is read again and the ID chosen again.
    /// An existing class's layout fingerprints must match the class's (ClassLayoutCheck.swift).
    func open(_ type: StoredObject.Type, name: String) throws -> (any StorageTable, ClassMetadata) {
        var attempts = 1
        while true {
            do {
                return try openOnce(type, name: name)
            } catch let error as CabinetError where error.code == .saveConflict && attempts < 3 && store.otherWriters != nil {
                attempts += 1
                store.catalog = try store.backend.services.readCatalog()
            }
        }
    }

    private func openOnce(_ type: StoredObject.Type, name: String) throws -> (any StorageTable, ClassMetadata) {
        let backend = store.backend
        if try !backend.hasTable(named: name), let listed = store.catalog?.tables[name] {
            throw CabinetError.missingClassFile(RecordLocation(file: backend.location(ofTable: name), className: name), classID: listed)
        }
        let table = try backend.openTable(named: name)
        var metadata: ClassMetadata
        if let existing = try ClassRegistrar.readMetadata(of: table, className: name) {
            metadata = existing
            try metadata.checkLayouts(of: type)
            try checkLastRowID(metadata, of: table, name: name)
        } else {
            let records = try table.recordCount
            if records > 0 {
                throw CabinetError.malformedMetadata(RecordLocation(file: table.path, className: name, rowID: ClassMetadata.rowID),
                                                     reason: "the file has \(records) records but no metadata row")
            }
            metadata = ClassMetadata.new(version: type.version, classID: try freeClassID(for: name))
            metadata.checksummed = store.recordFormat == .checksummed
            _ = metadata.recordLayout(of: type)   // in the row's first write, so it comes with the first records
            var batch = WriteBatch(metadata, of: name)
            let catalogued = try addCatalogEntry(name, tag: metadata.classID, to: &batch)
            try store.commitToBackend(batch)
            try confirmCatalogued(batch.catalogAdditions)
            store.catalog = catalogued
            return (table, metadata)
        }
        try catalog(name, tag: metadata.classID)
        return (table, metadata)
    }

    /// Adds table `name` to the store's catalog if it is not there with `tag`,
    /// in a batch of its own. A store without a catalog gets one listing every table it has.
    func catalog(_ name: String, tag: UInt8?) throws {
        var batch = WriteBatch()
        let catalogued = try addCatalogEntry(name, tag: tag, to: &batch)
        guard !batch.isEmpty else { return }
        try store.commitToBackend(batch)
        try confirmCatalogued(batch.catalogAdditions)
        store.catalog = catalogued
    }

    /// A backend written before batches carried catalog entries commits a
    /// batch's records and drops its entries: then they are written as such a
    /// backend expects, through ``StoreServices/writeCatalog(_:)``, and the
    /// store logs a warning. One read of the catalog per new table.
    private func confirmCatalogued(_ additions: [String: UInt8?]) throws {
        guard !additions.isEmpty else { return }
        let services = store.backend.services
        let stored = try services.readCatalog() ?? StoreCatalog()
        guard additions.contains(where: { stored.tables[$0.key] != .some($0.value) }) else { return }
        store.logger.warning("Cabinet: the backend's commit(_:) did not add the batch's catalog entries (\(additions.keys.sorted().joined(separator: ", "))); they are written on their own. Its commit(_:) should add WriteBatch.catalogAdditions to the catalog",
                             metadata: ["cabinet.path": "\(store.path)"])
        try services.writeCatalog(stored.adding(additions) { .saveConflict(path: store.path, reason: $0) })
    }

    /// Adds to `batch` what the catalog needs for table `name` with `tag` (with
    /// every table the store has, if it has no catalog yet), and returns the
    /// catalog as it will be once the batch commits. A read-only store adds nothing.
    private func addCatalogEntry(_ name: String, tag: UInt8?, to batch: inout WriteBatch) throws -> StoreCatalog? {
        guard !store.backend.services.isReadOnly, store.catalog?.tables[name] != .some(tag) else { return store.catalog }
        var catalog = try store.catalog ?? wholeCatalog()
        catalog.tables[name] = .some(tag)
        // A batch says what it adds: the whole catalog of a store that had none, else the one entry.
        if store.catalog == nil {
            for (listed, listedTag) in catalog.tables { batch.addToCatalog(table: listed, tag: listedTag) }
        } else {
            batch.addToCatalog(table: name, tag: tag)
        }
        return catalog
    }

    /// A catalog of every table the store has, with each class file's class ID.
    private func wholeCatalog() throws -> StoreCatalog {
        var catalog = StoreCatalog()
        // Index files are left out: one that goes missing is built again from the records.
        for name in try store.backend.tableNames() where !name.hasSuffix(ClassIndexes.suffix) {
            if ObjectStore.isAuxiliaryTable(name) {
                catalog.tables[name] = .some(nil)
            } else if let metadata = try? ClassRegistrar.readMetadata(of: store.backend.openTable(named: name), className: name) {
                catalog.tables[name] = .some(metadata.classID)
            }
        }
        return catalog
    }

    /// The next row ID must be free: a last row ID damaged downwards would make
    /// the next insert overwrite an object. (Checksummed metadata catches any
    /// damage; this one lookup catches the harmful kind in plain stores too.)
    private func checkLastRowID(_ metadata: ClassMetadata, of table: any StorageTable, name: String) throws {
        let next = metadata.lastRowID &+ 1
        let location = RecordLocation(file: table.path, className: name, rowID: ClassMetadata.rowID)
        if next > metadata.lastRowID, try table.withValue(forRow: next, { _ in true }) != nil {
            throw CabinetError.malformedMetadata(location, reason: "row \(next) exists though the last row ID handed out is \(metadata.lastRowID); `cabinet verify` lists the rows beyond it")
        }
    }

    static func readMetadata(of table: any StorageTable, className: String?) throws -> ClassMetadata? {
        let location = RecordLocation(file: table.path, className: className, rowID: ClassMetadata.rowID)
        return try table.withValue(forRow: ClassMetadata.rowID) { try ClassMetadata(bytes: $0, location: location) }
    }

    /// The class ID the catalog lists for `name` if no other class has it (a
    /// class file emptied or restored without its metadata keeps its ID); else
    /// the lowest class ID not used by a registered class, by any other class
    /// file in the store, nor by a class the catalog lists (even if its file is missing).
    private func freeClassID(for name: String) throws -> UInt8 {
        var used = Set(store.entriesByName.values.map(\.metadata.classID))
        for (other, tag) in store.catalog?.tables ?? [:] where other != name {
            if let tag { used.insert(tag) }
        }
        for other in try store.backend.tableNames()
        where other != name && !ObjectStore.isAuxiliaryTable(other) && store.entriesByName[other] == nil {
            // An unregistered class's file: its ID is taken even though this program does not use the class.
            if let metadata = try? ClassRegistrar.readMetadata(of: store.backend.openTable(named: other), className: other) {
                used.insert(metadata.classID)
            }
        }
        if let listed = store.catalog?.tables[name] ?? nil, !used.contains(listed) { return listed }
        guard let free = (0...UInt8.max).first(where: { !used.contains($0) }) else {
            throw CabinetError.tooManyClasses(className: name, limit: 256)
        }
        return free
    }
}
