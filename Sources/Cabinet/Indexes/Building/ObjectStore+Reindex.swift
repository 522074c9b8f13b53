extension ObjectStore {
    /// Rebuilds the indexes of `types` from their saved objects (of every
    /// registered class that declares indexes, when none is named), for an index
    /// that ``verifyIndexes()`` finds wrong.
    ///
    /// ```swift
    /// try store.reindex(Song.self)
    /// ```
    /// Unsaved changes do not count: the indexes are built from the saved records,
    /// all of them or none: records that refer to a class not registered yet
    /// throw ``/CabinetStorage/CabinetError/Code-swift.struct/classNotRegistered`` naming it, and the
    /// indexes are built when it is registered (their queries say so until then).
    public func reindex(_ types: StoredObject.Type...) throws {
        useDetector.enterAlone("reindex(_:)")
        defer { useDetector.leave() }
        try checkOpen()
        let entries = try types.isEmpty ? entriesByName.values.sorted { $0.name < $1.name } : types.map(requireEntry(for:))
        for entry in entries {
            if let awaited = entry.indexesAwait { throw CabinetError.classNotRegistered(className: awaited) }
            guard let indexes = entry.indexes else { continue }
            do {
                try writingTables { try build(indexes, of: entry, catalog: indexes.catalog(classVersion: entry.type.version)) }
            } catch {
                abandonIndexes(of: entry, after: error)
                throw error
            }
        }
    }

    /// Every problem of the registered classes' index files: what `cabinet verify`
    /// finds (missing and extra entries, damage), and entries that do not match
    /// the saved values of their objects (stale). Empty when every index is right.
    ///
    /// ```swift
    /// if !(try store.verifyIndexes()).isEmpty { try store.reindex() }
    /// ```
    /// Each object is checked by its saved record, whatever it holds in memory.
    public func verifyIndexes() throws -> [StorageProblem] {
        try checkOpen()
        var problems: [StorageProblem] = []
        for entry in entriesByName.values.sorted(by: { $0.name < $1.name }) {
            guard let indexes = entry.indexes else { continue }
            problems += try readingCommittedState {
                try IndexVerifier.check(indexes.table, classTable: entry.table, className: entry.name, format: recordFormat)
            }
            try readingCommittedState {
                try forEachRecord(of: entry, indexes) { row, made in
                    let recorded = try indexes.recorded(row: row, in: indexes.table)
                    if recorded ?? RowEntries(entries: []) != made {
                        problems.append(StorageProblem(location: entry.location(row: row),
                                                       reason: "its index entries are not the ones its saved record makes; `store.reindex()` rebuilds them",
                                                       kind: IndexVerifier.staleKind))
                    }
                }
            }
        }
        return problems
    }

    /// Removes the index files of the store (only class `className`'s, if named),
    /// so that the next registration of their classes builds them again from the
    /// records: what `cabinet reindex` does, which has no app classes to build
    /// them with. It also repairs an index file too damaged to open. Returns the
    /// files removed.
    ///
    /// ```swift
    /// let removed = try store.dropIndexes(ofClass: "Song")   // then register Song: it is reindexed
    /// ```
    @discardableResult
    public func dropIndexes(ofClass className: String? = nil) throws -> [String] {
        useDetector.enterAlone("dropIndexes(ofClass:)")
        defer { useDetector.leave() }
        try checkOpen()
        // By name too: a file too damaged to look like a table is still in the index file's place.
        let tables = try backend.tableNames()
        let classes = className.map { [$0] } ?? tables.filter { !$0.hasSuffix(ClassIndexes.suffix) }
        let names = try Set(classes.map(ClassIndexes.tableName(forClass:)).filter(backend.hasTable(named:))
                            + tables.filter { $0.hasSuffix(ClassIndexes.suffix) && className == nil }).sorted()
        for name in names {
            if let entry = entriesByName[String(name.dropLast(ClassIndexes.suffix.count))] {
                entry.indexes = nil
                entry.indexProblem = "index file (it was dropped): register the class again in a new store to build it"
            }
            try writingTables { try backend.removeTable(named: name) }
        }
        return names.map(backend.location(ofTable:))
    }
}
