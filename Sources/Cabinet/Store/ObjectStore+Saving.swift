import CabinetStorage
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
    /// The save is one ``/CabinetStorage/WriteBatch`` the backend commits all or nothing, even
    /// if the process is killed in the middle (Tokyo Cabinet writes one that
    /// changes several files to a journal first, which the next open or save
    /// finishes). See `docs/ARCHITECTURE.md` and `docs/FORMAT.md`.
    ///
    /// It returns once the save is as durable as the store was opened for:
    /// on Tokyo Cabinet it survives a killed process, and a power loss too with
    /// `TokyoCabinetBackend.Options.syncOnCommit`. For one save that must
    /// survive a power loss on any store, call ``save(durability:)``.
    public func save() throws {
        try save(durability: .asOpened)
    }

    /// ``save()``, returning only once the save is as durable as `durability`
    /// says: ``/CabinetStorage/CommitDurability/flushed`` makes it (and every
    /// save before it) survive a power loss, though the store was opened
    /// without `syncOnCommit`; the saves around it keep their speed.
    ///
    /// ```swift
    /// order.status = .paid
    /// try store.save(durability: .flushed)   // on the disk when it returns
    /// ```
    /// Tokyo Cabinet flushes the journal, every file the save changed, the
    /// catalog and the directory. A Redis store needs a server that fsyncs its
    /// append-only file at every write (`appendonly yes`, `appendfsync always`;
    /// Redis 7.2 and later confirm it with `WAITAOF` whatever `appendfsync`
    /// says): elsewhere the save throws
    /// ``/CabinetStorage/CabinetError/Code-swift.struct/durabilityUnavailable``
    /// with nothing written and the changes still pending. A memory store has
    /// nothing to flush. If the save is committed but its flush cannot be
    /// confirmed, it throws ``/CabinetStorage/CabinetError/Code-swift.struct/durabilityUnconfirmed``:
    /// the objects count as saved. A flushed save with nothing to save still
    /// flushes the saves before it.
    public func save(durability: CommitDurability) throws {
        guard !liveObservers.isEmpty else { return try saveChanges(durability: durability) }
        var committed: WriteBatch?
        defer {
            // Once the save is done (decided, if it threw saveNotFinished): its live queries hear of it.
            runLiveObserversAfterTakeIn(andCommit: committed)
        }
        try saveChanges(durability: durability) { committed = $0 }
    }

    private func saveChanges(durability: CommitDurability, committedBatch: ((WriteBatch) -> Void)? = nil) throws {
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
        // A batch a failed commit left decided: finish it first.
        if journalAwaitsReplay { try recoverInterruptedSave() }
        let entries = entriesByName.values.filter(\.hasChanges).sorted { $0.name < $1.name }
        let touchesNamedBuffers = !pendingNamedBuffers.isEmpty
        if entries.isEmpty && !touchesNamedBuffers {
            // Nothing to write, but a flushed save still returns on every save before it flushed.
            if durability == .flushed { try flushCommitted() }
            return
        }
        // In a pool's write block: while no block reads, and the committed batch announced to the pool's subscribers.
        var committed: WriteBatch?
        defer { if let committed { committedBatch?(committed) } }
        try writingTables(announcing: { committed }) {
            for entry in entries where !entry.inserted.isEmpty {
                try entry.table.reserveCapacity(try entry.table.recordCount + entry.inserted.count)
            }
            // Classes that write StoredLists may change the lists' table too.
            let lists = try makeListWriter(for: entries)
            // Created (and catalogued) before a batch names it, so a commit or replay never creates it.
            if touchesNamedBuffers { _ = try namedBuffersTable(creating: true) }
            // A staged save that fails leaves the lists its group keeps as they were, as its staging.
            let keptLists = link.pendingLists?.snapshot()
            var batch: WriteBatch?
            do {
                // Encoding keeps a pool block's lists for its group: inside, so a failure gives them back.
                var encoded = try self.batch(of: entries, lists: lists)
                encoded.durability = durability
                batch = encoded
                try commit(encoded)
            } catch let error as CabinetError where error.leavesSaveCommitted {
                // Decided: its journal finishes it (or it is in, its flush unconfirmed), so memory counts it as done and a retry does not write it twice.
                committed = batch
                saveCommitted(entries, lists: lists)
                throw error
            } catch {
                if let keptLists { link.pendingLists?.restore(keptLists) }
                throw error
            }
            committed = batch
            saveCommitted(entries, lists: lists)
        }
    }

    /// Every change `entries` and the pending named buffers make, as one batch.
    private func batch(of entries: [ClassEntry], lists: ListWriter?) throws -> WriteBatch {
        var batch = WriteBatch()
        let listsTable = lists == nil ? nil : batch.table(named: ObjectStore.listsTableName)
        // The save's state while encoding (lists collected, notes), one for every class.
        let encoder = RecordEncoder(location: RecordLocation(file: path))
        for entry in entries {
            // The class's rows apart, each once, in a local the list sink (which escapes) does not capture.
            var records = TableChanges(indexed: false)
            records.reserveCapacity(changes: entry.inserted.count + entry.updated.count + entry.deleted.count + 1, bytes: 0)
            // The class's table before its index's: a backend commits tables in the batch's order, and an
            // index whose commit fails after the records' is rebuilt from them (the kill-point harness's save-indexed).
            _ = batch.table(named: entry.name)
            let indexTable = entry.indexes.map { batch.table(named: $0.tableName) }
            try write(entry, lists: lists, encoder: encoder, records: { rowID, value, isNew in
                withUnsafeBytes(of: rowID.littleEndian) { _ = records.set($0, to: value, isNew: isNew) }
            }, listRecords: { key, value in
                guard let listsTable else { return }
                withRecordBytes(key, value) { key, value in batch.set(value, forKey: key, inTable: listsTable) }
            }, indexRecords: { key, value in
                guard let indexTable else { return }
                withRecordBytes(key, value) { key, value in batch.set(value, forKey: key, inTable: indexTable) }
            })
            batch.add(records, toTable: entry.name)
        }
        if !pendingNamedBuffers.isEmpty {
            let namedBuffers = batch.table(named: ObjectStore.namedBuffersTableName)
            try forEachNamedBufferChange { key, value in batch.set(value, forKey: key, inTable: namedBuffers) }
        }
        return batch
    }

    /// Hands `batch` to this store's committer: the backend, or in a pool's
    /// write block the group's staging, which the group's commit hands on.
    private func commit(_ batch: WriteBatch) throws {
        try link.commit(batch, of: self)
    }

    /// A flushed save with nothing to save: an empty batch at
    /// ``/CabinetStorage/CommitDurability/flushed``, which the backend commits
    /// by flushing what earlier commits left unflushed. In a pool's block it
    /// raises the group's level instead (the block's end flushes the rest).
    private func flushCommitted() throws {
        var batch = WriteBatch()
        batch.durability = .flushed
        // As a save (`announcing`): a pool block stages it, leaving the group whole.
        try writingTables(announcing: { nil }) { try commit(batch) }
    }

    /// After the commit (or its decision): saved objects become clean, their lists' nodes known written.
    private func saveCommitted(_ entries: [ClassEntry], lists: ListWriter?) {
        listNodesCommitted(lists)
        finishSave(entries)
        pendingNamedBuffers.removeAll()
    }

    /// Commits `batch` to the backend, remembering a commit it left decided
    /// but unfinished, which the next read or save finishes first.
    func commitToBackend(_ batch: WriteBatch) throws {
        do {
            try backend.commit(batch)
        } catch let error as CabinetError where error.code == .saveNotFinished {
            commitMayBeUnfinished = true
            throw error
        }
    }

    /// Finishes a save a crash (or a failed write) interrupted, from its journal.
    func recoverInterruptedSave() throws {
        var replayed: Int?
        do {
            try writingTables { replayed = try backend.finishUnfinishedCommit() }
        } catch {
            commitMayBeUnfinished = backend.hasUnfinishedCommit
            throw error
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
    private func write(_ entry: ClassEntry, lists: ListWriter?, encoder: RecordEncoder, records sink: (_ row: UInt32, _ record: UnsafeRawBufferPointer?, _ isNew: Bool) throws -> Void,
                       listRecords: @escaping ListWriter.Sink, indexRecords: ClassIndexes.Sink) throws {
        // One local buffer for the whole class: no copy of the store's buffer per record.
        var buffer = writeBuffer
        writeBuffer = DataBuffer()
        defer { writeBuffer = buffer }
        // Long lists of the records go out of line only where the save writes them too.
        let collector = lists != nil && entry.writesLists ? ListCollector() : nil
        encoder.collector = collector
        encoder.location = entry.location()
        buffer.encoder = encoder
        defer { buffer.encoder = nil }
        let pendingLists = link.pendingLists
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
            try encode(object, entry: entry, into: &buffer, with: encoder, version: version)
            try buffer.withUnsafeBytes { try sink(object.rowID, $0, true) }
            try writeLists(of: object, isNew: true)
            try writeIndexes(of: object, record: buffer, isNew: true)
        }
        for object in entry.updated where object.changeState == .updated {
            if object.contentLoadFailed {
                throw CabinetError.unloadedObjectModified(entry.location(row: object.rowID))
            }
            try encode(object, entry: entry, into: &buffer, with: encoder, version: version)
            try buffer.withUnsafeBytes { try sink(object.rowID, $0, false) }
            try writeLists(of: object, isNew: false)
            try writeIndexes(of: object, record: buffer, isNew: false)
        }
        for object in entry.deleted where object.changeState == .deleted {
            try sink(object.rowID, nil, false)
            try indexWrite?.row(object.rowID, entries: nil, isNew: false, sink: indexRecords)
            if collector != nil {
                try lists?.deleteLists(classID: entry.metadata.classID, row: object.rowID, owner: entry.location(row: object.rowID), to: listRecords)
                pendingLists?.drop(classID: entry.metadata.classID, row: object.rowID)
            }
        }
        try indexWrite?.finish(sink: indexRecords)
        if entry.metadataChanged {
            try entry.metadata.bytes.withUnsafeBytes { try sink(ClassMetadata.rowID, $0, false) }
        }
    }

    /// A record as it goes to disk: version byte (if versioned), content, trailer
    /// (if checksummed). `buffer` points to `encoder`, which has no note (a note throws).
    @inline(__always)
    func encode(_ object: StoredObject, entry: ClassEntry, into buffer: inout DataBuffer, with encoder: RecordEncoder,
                version: UInt8?) throws {
        buffer.writerIndex = 0
        buffer.readerIndex = 0
        encoder.collector?.reset()
        if let version { buffer.writeUInt8(version) }
        // The store reading the object for itself is no read an observer made (and makes it no registrar).
        let observable = entry.observesObjects
        if _slowPath(observable) { object.contentState.remove(.observable) }
        object.write(to: &buffer)
        if _slowPath(observable) { object.contentState.insert(.observable) }
        // A write(to:) that replaced the buffer (`buffer = DataBuffer()`) left its notes in the new one's.
        if _slowPath(buffer.encoder !== encoder) { try adoptReplaced(&buffer, encoder: encoder, location: entry.location(row: object.rowID)) }
        if _slowPath(encoder.hasNote), let note = encoder.takeNote(location: entry.location(row: object.rowID)) { throw note }
        // Checked before the trailer: no checksum over bytes that will not be written.
        if buffer.count + recordFormat.trailerSize > StorageLimits.largestValue {
            throw CabinetError.valueTooLarge(entry.location(row: object.rowID), size: buffer.count + recordFormat.trailerSize,
                                             limit: StorageLimits.largestValue)
        }
        buffer.appendTrailer(for: recordFormat)
    }

    /// Takes back a buffer that `write(to:)` replaced with one of its own: throws
    /// the note that one holds (a reference to an uninserted object), and points
    /// it at the loop's encoder again for the records after it.
    @inline(never)
    private func adoptReplaced(_ buffer: inout DataBuffer, encoder: RecordEncoder, location: RecordLocation) throws {
        let replaced = buffer.firstUninsertedReference
        buffer.encoder = encoder
        if let replaced { throw CabinetError.referenceToUninsertedObject(location, targetClass: replaced) }
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

extension CabinetError {
    /// Whether a save that threw this is in the store all the same, so memory
    /// counts it as done: decided, its journal finishing it (`saveNotFinished`),
    /// or committed with its flush not confirmed (`durabilityUnconfirmed`).
    var leavesSaveCommitted: Bool { code == .saveNotFinished || code == .durabilityUnconfirmed }
}
