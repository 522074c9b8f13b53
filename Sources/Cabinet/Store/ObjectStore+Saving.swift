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

        for entry in entries where !entry.inserted.isEmpty {
            try entry.table.reserveCapacity(entry.table.recordCount + entry.inserted.count)
        }
        if backend.needsJournal && entries.count + (touchesNamedBuffers ? 1 : 0) > 1 {
            try saveThroughJournal(entries)
        } else {
            try saveDirectly(entries)
        }
        finishSave(entries)
        pendingNamedBuffers.removeAll()
    }

    /// One file's (or an in-memory store's) changes, in one transaction per table.
    private func saveDirectly(_ entries: [ClassEntry]) throws {
        let namedTable = pendingNamedBuffers.isEmpty ? nil : try backend.openTable(named: ObjectStore.namedBuffersTableName)
        var begun: [any StorageTable] = []
        do {
            for table in entries.map(\.table) + (namedTable.map { [$0] } ?? []) {
                try table.beginTransaction()
                begun.append(table)
            }
            for entry in entries {
                try write(entry) { rowID, value in
                    try withUnsafeBytes(of: rowID.littleEndian) { try entry.table.apply(value, forKey: $0) }
                }
            }
            if let namedTable {
                try forEachNamedBufferChange { key, value in try namedTable.apply(value, forKey: key) }
            }
        } catch {
            for table in begun { try? table.abortTransaction() }
            throw error
        }
        var committed = 0
        do {
            for table in begun {
                try table.commitTransaction()
                committed += 1
            }
        } catch {
            for table in begun[(committed + 1)...] { try? table.abortTransaction() }
            if committed == 0 { throw error }
            // Some tables committed: make memory match them so a retry does not write twice.
            finishSave(entries.filter { entry in begun[..<committed].contains { $0 === entry.table } })
            throw error
        }
    }

    /// Several files' changes: journal first, then the files, then the journal goes.
    private func saveThroughJournal(_ entries: [ClassEntry]) throws {
        var journal = SaveJournal()
        for entry in entries {
            let table = journal.tableIndex(for: entry.name)
            try write(entry) { rowID, value in
                withUnsafeBytes(of: rowID.littleEndian) { journal.record(table: table, key: $0, value: value) }
            }
        }
        let namedBuffers = journal.tableIndex(for: ObjectStore.namedBuffersTableName)
        try forEachNamedBufferChange { key, value in
            journal.record(table: namedBuffers, key: key, value: value)
        }
        let bytes = journal.encoded()
        try backend.writeJournal(bytes)
        // From here the save is decided: if applying fails, the journal stays and
        // the next save or the next open finishes it.
        journalAwaitsReplay = true
        try applyJournal(bytes)
        try backend.removeJournal()
        journalAwaitsReplay = false
    }

    /// Replays a journal into its tables, one transaction per table.
    func applyJournal(_ bytes: [UInt8]) throws {
        var tables: [String: any StorageTable] = [:]
        var begun: [any StorageTable] = []
        do {
            let location = RecordLocation(file: path + "/" + TokyoCabinetBackend.journalFileName)
            try SaveJournal.replay(bytes, location: location) { name, key, value in
                let table: any StorageTable
                if let open = tables[name] {
                    table = open
                } else {
                    table = try backend.openTable(named: name)
                    try table.beginTransaction()
                    begun.append(table)
                    tables[name] = table
                }
                try table.apply(value, forKey: key)
            }
            for table in begun { try table.commitTransaction() }
        } catch {
            for table in begun { try? table.abortTransaction() }
            throw error
        }
    }

    /// Finishes a save a crash (or a failed write) interrupted, from its journal.
    func recoverInterruptedSave() throws {
        guard backend.needsJournal, let bytes = try backend.readJournal() else {
            journalAwaitsReplay = false
            return
        }
        try applyJournal(bytes)
        try backend.removeJournal()
        journalAwaitsReplay = false
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

    /// Hands one class's pending changes to `sink`: each record to write, or `nil` to delete it.
    private func write(_ entry: ClassEntry, to sink: (UInt32, UnsafeRawBufferPointer?) throws -> Void) throws {
        // One local buffer for the whole class: no copy of the store's buffer per record.
        var buffer = writeBuffer
        writeBuffer = DataBuffer()
        defer { writeBuffer = buffer }
        let version: UInt8? = options.perInstanceVersioning ? entry.type.version : nil
        for object in entry.inserted where object.changeState == .inserted {
            try encode(object, entry: entry, into: &buffer, version: version)
            try buffer.withUnsafeBytes { try sink(object.rowID, $0) }
        }
        for object in entry.updated where object.changeState == .updated {
            if object.contentLoadFailed {
                throw CabinetError.unloadedObjectModified(entry.location(row: object.rowID))
            }
            try encode(object, entry: entry, into: &buffer, version: version)
            try buffer.withUnsafeBytes { try sink(object.rowID, $0) }
        }
        for object in entry.deleted where object.changeState == .deleted {
            try sink(object.rowID, nil)
        }
        if entry.metadataChanged {
            try entry.metadata.bytes.withUnsafeBytes { try sink(ClassMetadata.rowID, $0) }
        }
    }

    /// A record as it goes to disk: version byte (if versioned), content, trailer (if checksummed).
    @inline(__always)
    func encode(_ object: StoredObject, entry: ClassEntry, into buffer: inout DataBuffer, version: UInt8?) throws {
        buffer.removeAll()
        if let version { buffer.writeUInt8(version) }
        object.write(to: &buffer)
        if let target = buffer.firstUninsertedReference {
            throw CabinetError.referenceToUninsertedObject(entry.location(row: object.rowID), targetClass: target)
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
