import CabinetStorage

// Written from the seam's documentation only (StorageBackend, StoreServices,
// WriteBatch), without MemoryBackend's code: the fourth backend the store tests
// run on (BackendKind.dictionary), so that a gap in what the documentation
// says shows up as a failing test. Shared with the macro's package.

/// A backend that keeps each table as a Swift dictionary, and its services'
/// values beside them, in a ``Contents`` that outlives each open: closing the
/// backend closes its tables (they throw ``CabinetError/storeClosed(path:)``),
/// and a new `DictionaryBackend` on the same contents opens the store again,
/// as a new `TokyoCabinetBackend` on the same directory does.
///
/// ```swift
/// let contents = DictionaryBackend.Contents(name: "scratch")
/// let store = try ObjectStore(backend: DictionaryBackend(contents))
/// store.close()
/// let again = try ObjectStore(backend: DictionaryBackend(contents))   // the same records
/// ```
final class DictionaryBackend: StorageBackend, StoreServices, ConcurrentReadingBackend {
    /// What the store holds, whichever open reads it: its tables, journal,
    /// format marker and catalog. Nothing of it outlives the process.
    final class Contents {
        let name: String
        var tables: [String: DictionaryRecords] = [:]
        var journal: [UInt8]?
        var formatMarker: String?
        var catalog: StoreCatalog?

        init(name: String = "dictionary") {
            self.name = name
        }
    }

    let contents: Contents
    var path: String { "dictionary:" + contents.name }
    /// The tables this open handed out, by name: opening one again returns the same.
    private var open: [String: DictionaryTable] = [:]
    private var isClosed = false

    /// Opens `contents` (a new, empty store by default).
    init(_ contents: Contents = Contents()) {
        self.contents = contents
    }

    var services: any StoreServices { self }

    private func checkOpen() throws {
        if isClosed { throw CabinetError.storeClosed(path: path) }
    }

    /// `body`'s answer, or ``CabinetError/storeClosed(path:)`` after ``close()``.
    private func whileOpen<R>(_ body: () throws -> R) throws -> R {
        try checkOpen()
        return try body()
    }

    // MARK: Tables

    func openTable(named name: String) throws -> any StorageTable {
        try table(named: name, ordered: false)
    }

    func openOrderedTable(named name: String) throws -> any OrderedStorageTable {
        let table = try table(named: name, ordered: true)
        guard table.records.isOrdered else {
            throw CabinetError.notADatabase(RecordLocation(file: table.path), reason: "a table that keeps no order is in its place")
        }
        return table
    }

    /// The open table `name`, opened (and created, of the kind `ordered` says) if it is not.
    private func table(named name: String, ordered: Bool) throws -> DictionaryTable {
        try checkOpen()
        if let table = open[name] { return table }
        let records = contents.tables[name] ?? DictionaryRecords(ordered: ordered)
        contents.tables[name] = records
        let table = DictionaryTable(path: location(ofTable: name), records: records)
        open[name] = table
        return table
    }

    func removeTable(named name: String) throws {
        try checkOpen()
        open.removeValue(forKey: name)?.close()
        contents.tables[name] = nil
    }

    func tableNames() throws -> [String] { try whileOpen { contents.tables.keys.sorted() } }

    func hasTable(named name: String) throws -> Bool { try whileOpen { contents.tables[name] != nil } }

    func location(ofTable name: String) -> String { path + "/" + name }

    /// Nothing but tables and the services' values can be in a dictionary.
    func storageProblems() throws -> [StorageProblem] { try whileOpen { [] } }

    // MARK: Saves

    /// Checks every table first (the one failure a dictionary has: a table the
    /// catalog lists is gone), then applies each change: nothing can fail between.
    /// `batch.durability` is ignored, as the seam allows a backend with no disk
    /// (`StorageBackend.commit(_:)`): a flushed batch has nothing to flush.
    func commit(_ batch: WriteBatch) throws {
        try checkOpen()
        try batch.forEachTable { name, _ in
            if contents.tables[name] == nil, let tag = contents.catalog?.tables[name] {
                throw CabinetError.missingClassFile(RecordLocation(file: location(ofTable: name), className: name), classID: tag)
            }
        }
        let catalog = try (contents.catalog ?? StoreCatalog()).adding(batch.catalogAdditions) { .saveConflict(path: path, reason: $0) }
        try batch.forEachTable { name, changes in
            let records = try table(named: name, ordered: false).records
            changes.forEach { key, value in
                records.set(Array(key), value.map(Array.init))
                return true
            }
        }
        if !batch.catalogAdditions.isEmpty { contents.catalog = catalog }
    }

    /// Never: a batch is applied in one call that cannot stop half way.
    var hasUnfinishedCommit: Bool { false }

    func finishUnfinishedCommit() throws -> Int? { nil }

    func replaceContents(with source: any StorageBackend, formatMarker: String) throws {
        try replaceContents(with: source, formatMarker: formatMarker, progress: nil)
    }

    /// Copies `source` into new records, then takes them in one step: a copy
    /// that fails part way leaves this store as it was.
    func replaceContents(with source: any StorageBackend, formatMarker: String, progress: StoreProgress.Handler?) throws {
        try checkOpen()
        let (tables, catalog) = try source.services.withCommittedState {
            let pending = try source.services.pendingRecovery()
            if !pending.isEmpty {
                throw CabinetError.recoveryPending(path: source.path, reason: pending.map(\.description).joined(separator: "; "))
            }
            return (try copyTables(of: source, progress: progress), try source.services.readCatalog())
        }
        for table in open.values { table.close() }
        open = [:]
        contents.tables = tables
        contents.catalog = catalog
        contents.formatMarker = formatMarker
        contents.journal = nil
    }

    /// Every table of `source`, of the same kind (an ordered table is an ``OrderedStorageTable``
    /// however it was opened), reporting as ``StoreProgress`` asks.
    private func copyTables(of source: any StorageBackend, progress: StoreProgress.Handler?) throws -> [String: DictionaryRecords] {
        let sources = try source.tableNames().map { ($0, try source.openTable(named: $0)) }
        var total = progress == nil ? nil : try sources.reduce(0) { $0 + (try $1.1.recordCount) }
        var copied = 0
        func report(_ name: String) {
            if let known = total, copied > known { total = copied }
            progress?(StoreProgress(what: name, completed: copied, total: total))
        }
        var tables: [String: DictionaryRecords] = [:]
        for (name, from) in sources {
            report(name)
            let records = DictionaryRecords(ordered: from is any OrderedStorageTable)
            try from.forEach { key, value in
                records.set(Array(key), Array(value))
                copied += 1
                if copied % StoreProgress.reportingInterval == 0 { report(name) }
                return true
            }
            tables[name] = records
            report(name)
        }
        total = copied
        if let last = sources.last { report(last.0) }
        return tables
    }

    /// Closes the tables handed out; ``contents`` keeps the records for the next open.
    func close() {
        isClosed = true
        for table in open.values { table.close() }
        open = [:]
    }

    // MARK: StoreServices

    /// Always: reads change nothing but the ordered keys a scan makes, under a lock.
    var allowsConcurrentReads: Bool { true }

    /// Never: one process reaches the contents, so there is no lock to share.
    var isReadOnly: Bool { false }

    /// Runs `body`: no other process writes the contents.
    func withCommittedState<R>(_ body: () throws -> R) throws -> R { try body() }

    /// Runs `body`: no other process reads the contents.
    func withExclusiveCommit<R>(_ body: () throws -> R) throws -> R { try body() }

    /// `false`: a commit cannot stop half way, and nothing outlives the process.
    var needsJournal: Bool { false }

    var journalLocation: String { path + "/journal" }

    func writeJournal(_ bytes: [UInt8]) throws { try whileOpen { contents.journal = bytes } }

    func readJournal() throws -> [UInt8]? { try whileOpen { contents.journal } }

    func removeJournal() throws { try whileOpen { contents.journal = nil } }

    var formatMarkerLocation: String { path + "/format" }

    func readFormatMarker() throws -> String? { try whileOpen { contents.formatMarker } }

    func writeFormatMarker(_ text: String) throws { try whileOpen { contents.formatMarker = text } }

    func readCatalog() throws -> StoreCatalog? { try whileOpen { contents.catalog } }

    func writeCatalog(_ catalog: StoreCatalog) throws { try whileOpen { contents.catalog = catalog } }

    /// Always empty: nothing is ever left half done.
    func pendingRecovery() throws -> [PendingRecovery] { try whileOpen { [] } }
}
