/// How a backend whose tables have transactions of their own commits a
/// ``WriteBatch`` all or nothing (``StorageBackend/commit(_:)``): each table's
/// changes in one transaction, and, where the backend cannot commit several
/// tables' transactions as one (``StoreServices/needsJournal``: Tokyo Cabinet's
/// files), the batch written whole to the journal first, applied, then removed.
///
/// A backend keeps one and answers ``StorageBackend/commit(_:)``,
/// ``StorageBackend/hasUnfinishedCommit`` and ``StorageBackend/finishUnfinishedCommit()``
/// through it:
/// ```swift
/// let commits = JournaledCommit()
/// public func commit(_ batch: WriteBatch) throws { try commits.commit(batch, to: self) }
/// ```
/// Called by the store's one writer (a pool's writer holds its lock); the
/// flag it keeps may be read from any thread.
package final class JournaledCommit: Sendable {
    /// Set while a journal whose batch is decided has not been applied in full.
    private let unfinished = Locked(false)
    /// Whether a batch's ``WriteBatch/catalogAdditions`` are written here, through
    /// ``StoreServices/writeCatalog(_:)`` after the tables; `false` for a backend
    /// that commits them inside its tables' own commit (Redis's `MULTI`).
    private let writesCatalog: Bool

    package init(writesCatalog: Bool = true) {
        self.writesCatalog = writesCatalog
    }

    /// Whether a batch is decided but not yet applied in full: its journal
    /// finishes it (``finishUnfinished()``) before the next read or write.
    package var hasUnfinished: Bool { unfinished.withLock { $0 } }

    /// Commits `batch`: all of it, or none of it and the error thrown, or,
    /// when the journal holds it but a table could not take it,
    /// ``CabinetError/Code-swift.struct/saveNotFinished``: the batch is
    /// decided and the next commit, read or open finishes it.
    ///
    /// The batch's ``WriteBatch/durability`` goes to each table's transaction
    /// (``TransactionalTable/beginTransaction(durability:)``), and to the
    /// replay of a journal left unfinished before it, so that what it returns
    /// on is flushed in order; the journal and the catalog are the backend's
    /// own to flush (``StoreServices``, which knows the commit under way).
    package func commit(_ batch: WriteBatch, to backend: any StorageBackend) throws {
        let durability = batch.durability
        // An earlier batch decided before this one: flushed with it, or this one would outlive it.
        if hasUnfinished { try finishUnfinished(in: backend, durability: durability) }
        let tableCount = batch.tableNames.count { batch.changes(ofTable: $0) != nil }
        let additions = writesCatalog ? batch.catalogAdditions : [:]
        guard tableCount > 0 || !additions.isEmpty else { return }
        let services = backend.services
        // A clash is found before anything is written: after the tables, the catalog must go in.
        let catalog = try updatedCatalog(adding: additions, in: backend)
        // Readers in other processes hear of a commit that changed tables (see `AnnouncesCommits`), not of one that failed whole.
        let announce = { (services as? any AnnouncesCommits)?.willCommit(tables: batch.tableNames) }
        // The catalog, written whole, is one more part: with a table it needs the journal.
        guard services.needsJournal, tableCount + (additions.isEmpty ? 0 : 1) > 1 else {
            // One table, the catalog alone, or tables the backend commits together (Redis): no journal.
            var committed = 0
            do {
                if tableCount > 0 {
                    try applyInTransactions(batch, to: backend, durability: durability)
                    committed = tableCount
                    announce()
                }
                if let catalog { try services.writeCatalog(catalog) }
            } catch let failure as PartialCommit {
                guard failure.committedTables > 0 else { throw failure.error }
                announce()
                // Only a backend that can neither journal nor commit its tables
                // together gets here: what committed stays, and it says so.
                throw CabinetError.saveNotFinished(path: backend.path, reason: "\(failure.committedTables) of \(tableCount) tables took their part before this failed: \(failure.error)")
            } catch where committed > 0 {
                throw CabinetError.saveNotFinished(path: backend.path, reason: "the tables took their part, the catalog did not: \(error)")
            }
            return
        }
        let bytes = batch.encoded()
        guard bytes.count <= StorageLimits.largestValue else {
            throw CabinetError.valueTooLarge(RecordLocation(file: services.journalLocation), size: bytes.count, limit: StorageLimits.largestValue)
        }
        do {
            try services.writeJournal(bytes)
        } catch {
            // The journal may be in place even so (written whole, then its flush
            // failed): take it back, or this batch would come back at the next open.
            // If it cannot be taken back, the batch is decided and goes on.
            if (try? services.removeJournal()) != nil { throw error }
        }
        // From here the journal is the batch: it is replayed at the next open if need be.
        announce()
        do {
            if tableCount > 0 { try applyInTransactions(batch, to: backend, durability: durability) }
            if let catalog { try services.writeCatalog(catalog) }
        } catch {
            if let failure = error as? PartialCommit, failure.committedTables == 0, (try? services.removeJournal()) != nil {
                throw failure.error
            }
            unfinished.withLock { $0 = true }
            // A failure that passed (a write that failed once): finishing now makes it a plain success.
            if (try? finishUnfinished(in: backend, durability: durability)) != nil { return }
            throw CabinetError.saveNotFinished(path: backend.path, reason: "\((error as? PartialCommit)?.error ?? error)")
        }
        do {
            try services.removeJournal()
        } catch {
            // Every table has the batch: the journal only repeats it. Replaying it
            // is harmless, and the next commit (or open) removes it first.
            unfinished.withLock { $0 = true }
        }
    }

    /// Applies a journal left by a batch a kill (or a failed write) interrupted,
    /// and removes it; returns its size, or `nil` if there was none. Its tables'
    /// transactions are at `durability`: a replay is no new commit, but one
    /// done inside a flushed commit is flushed with it.
    @discardableResult
    package func finishUnfinished(in backend: any StorageBackend, durability: CommitDurability = .asOpened) throws -> Int? {
        let services = backend.services
        guard services.needsJournal, let bytes = try services.readJournal() else {
            unfinished.withLock { $0 = false }
            return nil
        }
        let location = RecordLocation(file: services.journalLocation)
        let announce = { (services as? any AnnouncesCommits)?.willChangeEverything() }
        var additions: [String: UInt8?] = [:]
        do {
            try applyInTransactions(to: backend, durability: durability) { table in
                // Records come table by table: the last table is asked for first.
                var last: (name: String, table: any StorageTable)?
                additions = try WriteBatch.replay(bytes, location: location) { name, key, value in
                    if last?.name != name { last = (name, try table(name)) }
                    try last?.table.apply(value, forKey: key)
                }
            }
        } catch let failure as PartialCommit {
            if failure.committedTables > 0 { announce() }
            unfinished.withLock { $0 = true }
            throw failure.error
        }
        do {
            if let catalog = try updatedCatalog(adding: additions, in: backend, replaying: true) { try services.writeCatalog(catalog) }
        } catch {
            announce()
            unfinished.withLock { $0 = true }
            throw error
        }
        announce()
        try services.removeJournal()
        unfinished.withLock { $0 = false }
        return bytes.count
    }

    /// The store's catalog with `additions` in it, to be written after the
    /// tables took their part (a catalog never lists a table before the batch
    /// that makes it is in); `nil` if there are none. Throws
    /// ``CabinetError/Code-swift.struct/saveConflict`` if they clash with it (a
    /// tag another table holds): the layer above chose them from a catalog it
    /// no longer has. A journal's replay (`replaying`) must finish, so there a
    /// clash is a damaged catalog.
    private func updatedCatalog(adding additions: [String: UInt8?], in backend: any StorageBackend, replaying: Bool = false) throws -> StoreCatalog? {
        guard writesCatalog, !additions.isEmpty else { return nil }
        let catalog = try backend.services.readCatalog() ?? StoreCatalog()
        return try catalog.adding(additions) { clash in
            guard replaying else { return .saveConflict(path: backend.path, reason: clash + "; nothing of the batch was written") }
            return .malformedRecord(RecordLocation(file: backend.services.journalLocation),
                                    reason: "the save journal adds to the catalog what it no longer allows (\(clash)); the catalog was changed after the save was decided: remove the catalog and open the store as a writer to rebuild it from the tables")
        }
    }

    /// Writes `batch`'s changes, each table in one transaction, then commits them all.
    private func applyInTransactions(_ batch: WriteBatch, to backend: any StorageBackend, durability: CommitDurability) throws {
        try applyInTransactions(to: backend, durability: durability) { table in
            try batch.forEachTable { name, changes in
                let table = try table(name)
                try changes.forEach { key, value in
                    try table.apply(value, forKey: key)
                    return true
                }
            }
        }
    }

    /// Runs `records`, which writes records into the tables it asks `table`
    /// for by name (each opened, and its transaction begun, the first time),
    /// then commits them all. On failure throws a ``PartialCommit`` that says
    /// how many tables had committed before it.
    private func applyInTransactions(to backend: any StorageBackend, durability: CommitDurability,
                                     _ records: (_ table: (String) throws -> any StorageTable) throws -> Void) throws {
        var tables: [String: any TransactionalTable] = [:]
        var begun: [any TransactionalTable] = []
        var committed = 0
        var committing = false
        var catalog: StoreCatalog??
        // Files can vanish under a store (a networked store's tables cannot, and asking costs a round trip).
        let checksFiles = backend.services.needsJournal
        do {
            try records { name in
                if let open = tables[name] { return open }
                // A class the catalog lists whose file is gone is not created again with
                // only this batch's records in it.
                if checksFiles, try !backend.hasTable(named: name) {
                    if catalog == nil { catalog = .some(try backend.services.readCatalog()) }
                    if let listed = catalog??.tables[name] {
                        throw CabinetError.missingClassFile(RecordLocation(file: backend.location(ofTable: name), className: name), classID: listed)
                    }
                }
                guard let table = try backend.openTable(named: name) as? any TransactionalTable else {
                    throw CabinetError.tablesWithoutTransactions(RecordLocation(file: backend.location(ofTable: name)))
                }
                try table.beginTransaction(durability: durability)
                begun.append(table)
                tables[name] = table
                return table
            }
            committing = true
            // One commit per table, or one for all of them where the backend can (Redis).
            try commitTransactions(of: begun) { committed = $0 }
        } catch {
            // commitTransactions has aborted the tables it did not commit; before it, none had committed.
            if !committing { for table in begun { try? table.abortTransaction() } }
            throw PartialCommit(error: error, committedTables: committed)
        }
    }
}

/// Applying a batch failed after `committedTables` of its tables had committed their part.
private struct PartialCommit: Error {
    let error: any Error
    let committedTables: Int
}
