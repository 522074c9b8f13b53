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
    /// (Commits of several files are not yet atomic against a crash between them.)
    public func save() throws {
        try checkOpen()
        undoManager.closeImplicitGroup()
        if let error = deferredSaveError {
            deferredSaveError = nil
            throw error
        }
        let entries = entriesByName.values.filter(\.hasChanges).sorted { $0.name < $1.name }
        let namedTable = pendingNamedBuffers.isEmpty ? nil : try backend.openTable(named: ObjectStore.namedBuffersTableName)
        if entries.isEmpty && namedTable == nil { return }

        for entry in entries where !entry.inserted.isEmpty {
            try entry.table.reserveCapacity(entry.table.recordCount + entry.inserted.count)
        }
        var begun: [any StorageTable] = []
        do {
            for table in entries.map(\.table) + (namedTable.map { [$0] } ?? []) {
                try table.beginTransaction()
                begun.append(table)
            }
            for entry in entries { try write(entry) }
            if let namedTable { try writeNamedBuffers(to: namedTable) }
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
            // Some files committed: make memory match them so a retry does not write twice.
            finishSave(entries.filter { entry in begun[..<committed].contains { $0 === entry.table } })
            throw error
        }
        finishSave(entries)
        pendingNamedBuffers.removeAll()
    }

    /// Writes one class's pending changes inside its open transaction.
    private func write(_ entry: ClassEntry) throws {
        // One local buffer for the whole class: no copy of the store's buffer per record.
        var buffer = writeBuffer
        writeBuffer = DataBuffer()
        defer { writeBuffer = buffer }
        let versioned = options.perInstanceVersioning
        let version = entry.type.version
        for object in entry.inserted where object.changeState == .inserted {
            try writeRecord(of: object, entry: entry, buffer: &buffer, version: versioned ? version : nil)
        }
        for object in entry.updated where object.changeState == .updated {
            if object.contentLoadFailed {
                throw CabinetError.unloadedObjectModified(entry.location(row: object.rowID))
            }
            try writeRecord(of: object, entry: entry, buffer: &buffer, version: versioned ? version : nil)
        }
        for object in entry.deleted where object.changeState == .deleted {
            try entry.table.removeValue(forRow: object.rowID)
        }
        if entry.metadataChanged {
            try entry.metadata.bytes.withUnsafeBytes { try entry.table.setValue($0, forRow: ClassMetadata.rowID) }
        }
    }

    @inline(__always)
    private func writeRecord(of object: StoredObject, entry: ClassEntry, buffer: inout DataBuffer, version: UInt8?) throws {
        buffer.removeAll()
        if let version { buffer.writeUInt8(version) }
        object.write(to: &buffer)
        if let target = buffer.firstUninsertedReference {
            throw CabinetError.referenceToUninsertedObject(entry.location(row: object.rowID), targetClass: target)
        }
        try buffer.withUnsafeBytes { try entry.table.setValue($0, forRow: object.rowID) }
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
