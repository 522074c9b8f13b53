import Logging

extension ObjectStore {
    /// Writes every insert, update and delete since the last save, with the
    /// class metadata and named buffers, in one transaction per file.
    ///
    /// ```swift
    /// list.title = "Road trip"
    /// try store.save()
    /// ```
    /// If anything fails (a full disk, an object that refers to one never
    /// inserted), every file's transaction is rolled back, the error is thrown,
    /// and the changes stay pending in memory, so `save()` can be tried again.
    ///
    /// A save that changes several files goes through a journal first, so it is
    /// all-or-nothing even if the process is killed in the middle: the next open
    /// (or save) finishes it. See `docs/FORMAT.md`.
    public func save() throws {
        useDetector.enter("save()")
        defer { useDetector.leave() }
        if isSaving { changeDuringSave("save()") }
        try checkOpen()
        rowReservations?.resume()   // a reservation that failed since the last save may be tried again
        // Another process's save: its rows' objects up to date (or, with changes here, a conflict before anything is written).
        try takeInAnnouncedSaves()
        // Whatever happens, an index a failed write damaged is built again from the records.
        defer { rebuildDamagedIndexes() }
        isSaving = true   // a change from a write(to:) now would be lost: it stops the program
        defer { isSaving = false }
        undoManager.closeImplicitGroup()
        if let error = deferredSaveError {
            deferredSaveError = nil
            throw error
        }
        // A journal left by a save whose files could not all be written: finish it first.
        if journalAwaitsReplay { try recoverInterruptedSave() }
        let entries = entriesByName.values.filter(\.hasChanges).sorted { $0.name < $1.name }
        let touchesNamedBuffers = !pendingNamedBuffers.isEmpty
        if entries.isEmpty && !touchesNamedBuffers { return }
        // In a pool's write block: while no block reads, and announced to the pool's subscribers.
        try writingTables(announcing: entries) {
            for entry in entries where !entry.inserted.isEmpty {
                try entry.table.reserveCapacity(try entry.table.recordCount + entry.inserted.count)
            }
            // Classes that write StoredLists may change the lists' table too.
            let lists = try makeListWriter(for: entries)
            // A pool's write block stages its save in memory: the group's commit takes the journal.
            let indexed = entries.reduce(0) { $0 + ($1.indexes == nil ? 0 : 1) }
            if backend.services.needsJournal && !(context?.stages ?? false)
                && entries.count + indexed + (touchesNamedBuffers ? 1 : 0) + (lists == nil ? 0 : 1) > 1 {
                try saveThroughJournal(entries, lists: lists)
            } else {
                // A staged save that fails leaves the lists its group keeps as they were, as its staging.
                let keptLists = context?.pendingLists?.snapshot()
                do {
                    try saveDirectly(entries, lists: lists)
                } catch {
                    if let keptLists { context?.pendingLists?.restore(keptLists) }
                    throw error
                }
            }
            listNodesCommitted(lists)
            finishSave(entries)
            pendingNamedBuffers.removeAll()
        }
    }

    /// One file's (or an in-memory store's) changes, in one transaction per table.
    private func saveDirectly(_ entries: [ClassEntry], lists: ListWriter?) throws {
        let namedTable = pendingNamedBuffers.isEmpty ? nil : try namedBuffersTable(creating: true)
        let listsTable = lists == nil ? nil : try listsTable(creating: false)
        let indexTables = entries.compactMap { $0.indexes.map(indexView(of:)) }
        var begun: [any StorageTable] = []
        do {
            for table in entries.map(\.table) + indexTables + [namedTable, listsTable].compactMap({ $0 }) {
                try table.beginTransaction()
                begun.append(table)
            }
            for entry in entries {
                let indexTable = entry.indexes.map(indexView(of:))
                try write(entry, lists: lists, records: { rowID, value in
                    try withUnsafeBytes(of: rowID.littleEndian) { try entry.table.apply(value, forKey: $0) }
                }, listRecords: { key, value in
                    try withRecordBytes(key, value) { key, value in try listsTable?.apply(value, forKey: key) }
                }, indexRecords: { key, value in
                    try withRecordBytes(key, value) { key, value in try indexTable?.apply(value, forKey: key) }
                })
            }
            if let namedTable {
                try forEachNamedBufferChange { key, value in try namedTable.apply(value, forKey: key) }
            }
        } catch {
            for table in begun { try? table.abortTransaction() }
            throw error
        }
        try commitTransactions(of: begun) { committed in
            // Some tables committed: make memory match them so a retry does not write twice.
            if committed > 0 { finishSave(entries.filter { entry in begun[..<committed].contains { $0 === entry.table } }) }
        }
    }

    /// Several files' changes: journal first, then the files, then the journal goes.
    private func saveThroughJournal(_ entries: [ClassEntry], lists: ListWriter?) throws {
        var journal = SaveJournal()
        let listsTable = journal.tableIndex(for: ObjectStore.listsTableName)
        for entry in entries {
            let table = journal.tableIndex(for: entry.name)
            let indexTable = entry.indexes.map { journal.tableIndex(for: $0.tableName) }
            try write(entry, lists: lists, records: { rowID, value in
                withUnsafeBytes(of: rowID.littleEndian) { journal.record(table: table, key: $0, value: value) }
            }, listRecords: { key, value in
                withRecordBytes(key, value) { key, value in journal.record(table: listsTable, key: key, value: value) }
            }, indexRecords: { key, value in
                guard let indexTable else { return }
                withRecordBytes(key, value) { key, value in journal.record(table: indexTable, key: key, value: value) }
            })
        }
        // Created (and catalogued) before the journal names it, so a replay never creates it.
        if !pendingNamedBuffers.isEmpty { _ = try namedBuffersTable(creating: true) }
        let namedBuffers = journal.tableIndex(for: ObjectStore.namedBuffersTableName)
        try forEachNamedBufferChange { key, value in
            journal.record(table: namedBuffers, key: key, value: value)
        }
        try commitThroughJournal(journal) {
            listNodesCommitted(lists)
            finishSave(entries)
            pendingNamedBuffers.removeAll()
        }
    }

    /// Writes `journal`, applies it to its tables and removes it: the changes of
    /// several files, all or nothing even if the process is killed. If applying
    /// fails but some file committed its part (or the journal cannot be taken
    /// back), the change is decided: `decided` makes memory count it as done,
    /// the journal is replayed at once, and only if that fails too does this
    /// throw `saveNotFinished`, saying the next save, read or open finishes it.
    /// If no file took any of it, the journal is removed and the error thrown.
    ///
    /// `applying` writes the journal's records to their tables instead of its
    /// replay (``applyJournal(_:)``), as ``applyInTransactions(_:)`` does: a
    /// group commit hands its staged records, rather than decode what it just encoded.
    func commitThroughJournal(_ journal: borrowing SaveJournal, decided: () -> Void,
                              applying: (() throws -> Void)? = nil) throws {
        let bytes = journal.encoded()
        let apply = applying ?? { try self.applyJournal(bytes) }
        guard bytes.count <= StorageLimits.largestValue else {
            throw CabinetError.valueTooLarge(RecordLocation(file: backend.services.journalLocation),
                                             size: bytes.count, limit: StorageLimits.largestValue)
        }
        guard backend.services.needsJournal else {
            // A backend whose tables commit together needs no file: the tables take it directly.
            do {
                try apply()
            } catch let failure as JournalApplyFailure {
                if failure.committedTables > 0 { decided() }
                throw failure.error
            }
            return
        }
        do {
            try backend.services.writeJournal(bytes)
        } catch {
            // The journal may be in place even so (written whole, then its flush
            // failed): take it back, or this save would come back at the next open.
            // If it cannot be taken back, the save is decided and goes on.
            if (try? backend.services.removeJournal()) != nil { throw error }
        }
        // From here the journal is the save: it is replayed at the next open if need be.
        do {
            try apply()
        } catch let failure as JournalApplyFailure {
            if failure.committedTables == 0, (try? backend.services.removeJournal()) != nil {
                throw failure.error
            }
            journalAwaitsReplay = true
            decided()
            // A failure that passed (a write that failed once): finishing now makes it a plain success.
            if (try? recoverInterruptedSave()) != nil { return }
            throw CabinetError.saveNotFinished(path: path, reason: "\(failure.error)")
        }
        do {
            try backend.services.removeJournal()
        } catch {
            // Every file has the save: the journal only repeats it. Replaying it is
            // harmless, and the next save (or open) removes it first.
            journalAwaitsReplay = true
        }
    }

    /// Replays a journal into its tables, one transaction per table. On failure
    /// throws a ``JournalApplyFailure`` that says how many had committed before it.
    func applyJournal(_ bytes: [UInt8]) throws {
        let location = RecordLocation(file: backend.services.journalLocation)
        try applyInTransactions { put in try SaveJournal.replay(bytes, location: location, put) }
    }

    /// Writes the records `records` hands to `put` (a table's name, a key, a
    /// value or `nil` to delete), each table in one transaction begun at its
    /// first record, then commits them all. On failure throws a
    /// ``JournalApplyFailure`` that says how many tables had committed before it.
    func applyInTransactions(_ records: (_ put: (String, UnsafeRawBufferPointer, UnsafeRawBufferPointer?) throws -> Void) throws -> Void) throws {
        var tables: [String: any StorageTable] = [:]
        var begun: [any StorageTable] = []
        var committed = 0
        var committing = false
        do {
            // Records come table by table: the last table is asked for first.
            var last: (name: String, table: any StorageTable)?
            try records { name, key, value in
                let table: any StorageTable
                if let last, last.name == name {
                    table = last.table
                } else if let open = tables[name] {
                    table = open
                } else {
                    // A class the catalog lists whose file is gone is not created again with
                    // only this save's records in it.
                    if try !backend.hasTable(named: name), let listed = catalog?.tables[name] {
                        throw CabinetError.missingClassFile(RecordLocation(file: backend.location(ofTable: name), className: name), classID: listed)
                    }
                    table = try backend.openTable(named: name)
                    try table.beginTransaction()
                    begun.append(table)
                    tables[name] = table
                }
                last = (name, table)
                try table.apply(value, forKey: key)
            }
            committing = true
            // One commit per table, or one for all of them where the backend can (Redis).
            try commitTransactions(of: begun) { committed = $0 }
        } catch {
            // commitTransactions has aborted the tables it did not commit; before it, none had committed.
            if !committing { for table in begun { try? table.abortTransaction() } }
            throw JournalApplyFailure(error: error, committedTables: committed)
        }
    }

    /// Finishes a save a crash (or a failed write) interrupted, from its journal.
    func recoverInterruptedSave() throws {
        var replayed: Int?
        try writingTables {
            guard backend.services.needsJournal, let bytes = try backend.services.readJournal() else {
                journalAwaitsReplay = false
                return
            }
            replayed = bytes.count
            do {
                try applyJournal(bytes)
            } catch let failure as JournalApplyFailure {
                throw failure.error
            }
            try backend.services.removeJournal()
            journalAwaitsReplay = false
        }
        rebuildDamagedIndexes()
        // A save that a kill (or a failed write) left in the journal is whole now: say so.
        if let replayed { logger.notice("Cabinet: finished a save left in the journal (\(replayed) bytes)",
                                        metadata: ["cabinet.path": "\(path)", "cabinet.file": "\(backend.services.journalLocation)"]) }
    }

    private func forEachNamedBufferChange(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer?) throws -> Void) throws {
        for (name, bytes) in pendingNamedBuffers {
            try Array(name.utf8).withUnsafeBytes { key in
                if let bytes {
                    try bytes.withUnsafeBytes { try body(key, $0) }
                } else {
                    try body(key, nil)
                }
            }
        }
    }

    /// Hands one class's pending changes to `sink`: each record to write, or `nil`
    /// to delete it; and the changes to its out-of-line lists to `listRecords`.
    private func write(_ entry: ClassEntry, lists: ListWriter?, records sink: (UInt32, UnsafeRawBufferPointer?) throws -> Void,
                       listRecords: @escaping ListWriter.Sink, indexRecords: ClassIndexes.Sink) throws {
        // One local buffer for the whole class: no copy of the store's buffer per record.
        var buffer = writeBuffer
        writeBuffer = DataBuffer()
        defer { writeBuffer = buffer }
        // Long lists of the records go out of line only where the save writes them too.
        let collector = lists != nil && entry.writesLists ? ListCollector() : nil
        if collector != nil && buffer.context == nil { buffer.context = RecordContext(location: entry.location()) }
        buffer.context?.listCollector = collector
        defer { buffer.context?.listCollector = nil }
        let pendingLists = context?.pendingLists
        func writeLists(of object: StoredObject, isNew: Bool) throws {
            guard let collector, let lists else { return }
            let classID = entry.metadata.classID, owner = entry.location(row: object.rowID)
            // A pool's write block: kept for the group's commit, which writes each list once.
            if let pendingLists {
                let kept = try collector.lists.map { try $0.resolved(classID: classID, row: object.rowID, owner: owner) }
                return pendingLists.keep(kept, classID: classID, row: object.rowID, isNew: isNew, location: owner)
            }
            try lists.write(collector.lists, classID: classID, row: object.rowID, isNew: isNew, owner: owner, to: listRecords)
        }
        let indexWrite = entry.indexes.map { IndexWrite($0, view: indexView(of: $0)) }
        func writeIndexes(of object: StoredObject, record: DataBuffer, isNew: Bool) throws {
            guard let indexWrite, let indexes = entry.indexes else { return }
            // From the record as it will read back (a scratch decode), so the index never
            // disagrees with the file; a class that writes lists is indexed from the object,
            // as its record names list nodes this save has not written yet.
            let entries = entry.writesLists ? try indexes.entries(of: object, location: entry.location(row: object.rowID))
                : try record.withUnsafeBytes { try indexEntries(ofRecord: $0, row: object.rowID, entry: entry, indexes: indexes) }
            try indexWrite.row(object.rowID, entries: entries, isNew: isNew, sink: indexRecords)
        }
        let version: UInt8? = options.perInstanceVersioning ? entry.type.version : nil
        let unprotected = !entry.metadataVerified
        for object in entry.inserted where object.changeState == .inserted {
            // A last row ID no checksum vouches for may have been damaged downwards:
            // never let an insert overwrite a row that is there.
            if unprotected, try entry.table.withValue(forRow: object.rowID, { _ in true }) != nil {
                throw CabinetError.malformedMetadata(entry.location(row: ClassMetadata.rowID),
                                                     reason: "row \(object.rowID), handed out to a new object, already holds one: the last row ID is damaged; nothing was written. `cabinet verify` lists the rows beyond it")
            }
            try encode(object, entry: entry, into: &buffer, version: version)
            try buffer.withUnsafeBytes { try sink(object.rowID, $0) }
            try writeLists(of: object, isNew: true)
            try writeIndexes(of: object, record: buffer, isNew: true)
        }
        for object in entry.updated where object.changeState == .updated {
            if object.contentLoadFailed {
                throw CabinetError.unloadedObjectModified(entry.location(row: object.rowID))
            }
            try encode(object, entry: entry, into: &buffer, version: version)
            try buffer.withUnsafeBytes { try sink(object.rowID, $0) }
            try writeLists(of: object, isNew: false)
            try writeIndexes(of: object, record: buffer, isNew: false)
        }
        for object in entry.deleted where object.changeState == .deleted {
            try sink(object.rowID, nil)
            try indexWrite?.row(object.rowID, entries: nil, isNew: false, sink: indexRecords)
            if collector != nil {
                try lists?.deleteLists(classID: entry.metadata.classID, row: object.rowID, owner: entry.location(row: object.rowID), to: listRecords)
                pendingLists?.drop(classID: entry.metadata.classID, row: object.rowID)
            }
        }
        try indexWrite?.finish(sink: indexRecords)
        if entry.metadataChanged {
            try entry.metadata.bytes.withUnsafeBytes { try sink(ClassMetadata.rowID, $0) }
        }
    }

    /// A record as it goes to disk: version byte (if versioned), content, trailer (if checksummed).
    @inline(__always)
    func encode(_ object: StoredObject, entry: ClassEntry, into buffer: inout DataBuffer, version: UInt8?) throws {
        buffer.removeAll()
        buffer.context?.listCollector?.reset()
        if let version { buffer.writeUInt8(version) }
        object.write(to: &buffer)
        if let target = buffer.firstUninsertedReference {
            throw CabinetError.referenceToUninsertedObject(entry.location(row: object.rowID), targetClass: target)
        }
        if let failure = buffer.listFailure { throw failure }
        // Checked before the trailer: no checksum over bytes that will not be written.
        if buffer.count + recordFormat.trailerSize > StorageLimits.largestValue {
            throw CabinetError.valueTooLarge(entry.location(row: object.rowID), size: buffer.count + recordFormat.trailerSize,
                                             limit: StorageLimits.largestValue)
        }
        buffer.appendTrailer(for: recordFormat)
    }

    /// After a commit: saved objects become clean, deleted ones leave the store.
    private func finishSave(_ entries: [ClassEntry]) {
        for entry in entries {
            for object in entry.inserted where object.changeState == .inserted { object.changeState = .clean }
            for object in entry.updated where object.changeState == .updated { object.changeState = .clean }
            for object in entry.deleted where object.changeState == .deleted { entry.release(object) }
            entry.discardChanges()
        }
    }
}

/// Applying a journal failed after `committedTables` of its tables had committed their part.
struct JournalApplyFailure: Error {
    let error: any Error
    let committedTables: Int
}
