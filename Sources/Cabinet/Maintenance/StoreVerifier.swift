import CabinetStorage

/// Reads every record of a store and reports what is damaged: for `cabinet verify`.
///
/// ```swift
/// let problems = try StoreVerifier.verify(path: "/tmp/music")
/// if !problems.isEmpty { problems.forEach { print($0) } }
/// ```
/// Without the app's classes it checks what every store shares: each table
/// opens and reads to the end, its metadata row decodes, every key is a row ID
/// at or below the last row ID handed out, every record has its version byte
/// (and, in checksummed stores, a matching checksum), every record is found
/// again through its key (the index is intact), a pending save journal is
/// whole, and every table the catalog lists is there; and each out-of-line
/// list's tree, root to leaves, with its owner (`StoredListVerifier`), and each
/// class's index file against its records (`IndexVerifier`). It adds what the backend
/// itself finds (``/CabinetStorage/StorageBackend/storageProblems()``): for a Tokyo Cabinet
/// directory, every file that should be a class file and is not (random bytes,
/// an empty file, a link), and Tokyo Cabinet's leftovers (a transaction log of
/// a killed writer, a rebuild's temporary copy) with what to do.
///
/// It writes nothing: ``verify(path:progress:)`` opens the store read-only, alongside
/// other readers and a writer in another process (whose saves wait while it
/// runs), so it runs on a live store and on a store it may only read, and
/// never on a path that is not a store.
public enum StoreVerifier {
    /// One damaged thing, with where it is.
    public typealias Problem = StorageProblem

    /// The problems found in the store at `path` (empty if none). Throws only if
    /// the store cannot be opened at all (not a store, a file in the way).
    ///
    /// `progress`, if given, is called as the records are read (see ``StoreProgress``);
    /// the checks of lists and indexes that follow are reported as one step:
    /// ```swift
    /// let problems = try StoreVerifier.verify(path: "/tmp/music") { print($0) }
    /// ```
    public static func verify(path: String, progress: StoreProgress.Handler? = nil) throws -> [Problem] {
        var reading = TokyoCabinetBackend.Options()
        reading.readOnly = true
        reading.createIfMissing = false
        let backend = try TokyoCabinetBackend(directory: path, options: reading)
        defer { backend.close() }
        return try verify(backend, progress: progress)
    }

    /// The problems found in the store behind `backend`, any backend (empty if
    /// none). A table that waits for a writer's recovery is not read (the
    /// backend's problems say so). `progress` as in ``verify(path:progress:)``.
    ///
    /// ```swift
    /// let problems = try StoreVerifier.verify(MemoryBackend())
    /// ```
    public static func verify(_ backend: any StorageBackend, progress: StoreProgress.Handler? = nil) throws -> [Problem] {
        // One read operation: a writer in another process does not commit while it runs.
        try backend.services.withCommittedState { try check(backend, progress: progress) }
    }

    private static func check(_ backend: any StorageBackend, progress: StoreProgress.Handler?) throws -> [Problem] {
        let services = backend.services
        var problems: [Problem] = []
        let journalLocation = RecordLocation(file: services.journalLocation)
        // Asked once (it reads the journal file and lists the directory): a damaged journal, and the tables not to read.
        let pending = Result { try services.pendingRecovery() }
        do {
            if let damaged = try pending.get().first(where: { $0.table == nil && $0.problem != nil }) {
                // Read-only, the journal's bytes are read, but not why they are no journal: the backend says.
                problems.append(Problem(location: journalLocation, reason: damaged.problem ?? damaged.description))
            } else if let journal = try services.readJournal() {
                _ = try WriteBatch(decoding: journal, location: journalLocation)
            }
        } catch let error as CabinetError {     // damaged, or not a file (a link, a directory)
            problems.append(Problem(location: error.location ?? journalLocation, reason: "\(error)"))
        }
        let format = try recordFormat(of: backend)
        problems += try backend.storageProblems()
        problems += try catalogProblems(backend)
        let awaitingRecovery = Set(try pending.get().compactMap(\.table))
        let tables = try backend.tableNames()
        // The records read one by one: index files are checked below, as a whole.
        let scanned = tables.filter { !awaitingRecovery.contains($0) && !$0.hasSuffix(ClassIndexes.suffix) }
        var counter = ProgressCounter(progress, total: nil)
        if counter.isReporting {
            // A damaged table that cannot open is counted as empty: verify reports it below.
            counter.total = scanned.reduce(0) { $0 + ((try? backend.openTable(named: $1).recordCount) ?? 0) }
        }
        for name in tables where !awaitingRecovery.contains(name) {
            let location = RecordLocation(file: backend.location(ofTable: name), className: name)
            do {
                let table = try backend.openTable(named: name)
                try check(table, name: name, format: format, location: location, counter: &counter, into: &problems)
            } catch let error as CabinetError {
                problems.append(Problem(location: error.location ?? location, reason: "\(error)"))
            }
        }
        counter.begin("lists and indexes")
        // The trees of out-of-line lists and the index files, once every table is readable enough to walk them.
        if !tables.contains(where: awaitingRecovery.contains) {
            do {
                problems += try StoredListVerifier.problems(in: backend, format: format)
            } catch let error as CabinetError {
                let file = backend.location(ofTable: ObjectStore.listsTableName)
                problems.append(Problem(location: error.location ?? RecordLocation(file: file), reason: "\(error)"))
            }
            problems += try IndexVerifier.problems(in: backend, format: format)
        }
        counter.finish()
        return problems
    }

    /// Each table the store's catalog lists that is missing, or the catalog's damage.
    static func catalogProblems(_ backend: any StorageBackend) throws -> [Problem] {
        let catalog: StoreCatalog?
        do {
            catalog = try backend.services.readCatalog()
        } catch let error as CabinetError {
            return [Problem(location: error.location ?? RecordLocation(file: backend.path), reason: "\(error)")]
        }
        return try (catalog?.tables ?? [:]).keys.sorted().compactMap { name in
            guard try !backend.hasTable(named: name) else { return nil }
            return Problem(location: RecordLocation(file: backend.location(ofTable: name), className: name),
                           reason: "the store's catalog lists this table but it is missing; restore it from a backup (`cabinet restore`)")
        }
    }

    /// The store's record format, read from its marker without writing one.
    static func recordFormat(of backend: any StorageBackend) throws -> RecordFormat {
        try RecordFormat.stored(in: backend) ?? .plain
    }

    /// A problem if `value` does not carry a valid checksum in a checksummed store.
    private static func checksumProblem(_ value: UnsafeRawBufferPointer, format: RecordFormat, at location: RecordLocation) -> Problem? {
        var record = DataBuffer(bytes: value)
        record.context = RecordContext(location: location)
        do {
            try record.removeTrailer(for: format)
            return nil
        } catch {
            return Problem(location: location, reason: "the checksum does not match the record's bytes")
        }
    }

    /// A problem if the table's own count of its records (a Tokyo Cabinet file's
    /// header keeps it apart from them) is not the number a scan read: a damaged
    /// count makes `count(of:)` lie, and one of 2^63 or more once stopped the program.
    private static func countProblem(_ table: any StorageTable, holds records: Int, at location: RecordLocation) throws -> Problem? {
        let counted = try table.recordCount
        guard counted != records else { return nil }
        return Problem(location: location, reason: "the file counts \(counted) records (or more) but holds \(records); `cabinet compact` writes the count again")
    }

    private static func check(_ table: any StorageTable, name: String, format: RecordFormat, location: RecordLocation,
                              counter: inout ProgressCounter, into problems: inout [Problem]) throws {
        // An index file holds entries without trailers: IndexVerifier checks it, below.
        if name.hasSuffix(ClassIndexes.suffix) { return }
        counter.begin(name)
        defer { counter.report() }
        guard !ObjectStore.isAuxiliaryTable(name) else {
            var records = 0
            try table.forEach { key, value in
                counter.advance()
                records += 1
                var here = location
                here.className = nil
                here.file += " [\(String(decoding: key, as: UTF8.self))]"
                if let problem = checksumProblem(value, format: format, at: here) { problems.append(problem) }
                return true
            }
            if let problem = try countProblem(table, holds: records, at: location) { problems.append(problem) }
            return
        }
        let metadata = try ClassRegistrar.readMetadata(of: table, className: name)
        if try metadata == nil && table.recordCount > 0 {
            problems.append(Problem(location: location, reason: "the file has records but no metadata row"))
        }
        var rows: [UInt32] = []
        var records = 0
        try table.forEach { key, value in
            counter.advance()
            records += 1
            guard key.count == 4 else {
                problems.append(Problem(location: location, reason: "a key of \(key.count) bytes; row keys are 4 bytes"))
                return true
            }
            let rowID = UInt32(littleEndian: key.loadUnaligned(as: UInt32.self))
            rows.append(rowID)
            var here = location
            here.rowID = rowID
            if rowID == ClassMetadata.rowID { return true }
            if rowID == 0 {
                problems.append(Problem(location: here, reason: "row 0 cannot hold an object"))
            } else if let last = metadata?.lastRowID, rowID > last {
                problems.append(Problem(location: here, reason: "row \(rowID) is beyond the last row ID handed out (\(last))"))
            }
            if value.count <= format.trailerSize {
                problems.append(Problem(location: here, reason: "the record is empty (no version byte)"))
            } else if let problem = checksumProblem(value, format: format, at: here) {
                problems.append(problem)
            }
            return true
        }
        if let problem = try countProblem(table, holds: records, at: location) { problems.append(problem) }
        // The scan reads records in file order; the app finds them through the hash
        // index. A damaged bucket array leaves records the scan sees but a lookup misses.
        for rowID in rows {
            var here = location
            here.rowID = rowID
            do {
                if try table.withValue(forRow: rowID, { _ in true }) == nil {
                    problems.append(Problem(location: here, reason: "the record is in the file but its key does not find it (the hash index is damaged; `cabinet compact` rebuilds it)"))
                }
            } catch let error as CabinetError {
                problems.append(Problem(location: here, reason: "looking the record up by its key failed: \(error)"))
            }
        }
    }
}
