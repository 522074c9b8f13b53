import CabinetStorage

/// Registering classes: each class's table opened (or created), its metadata
/// read, and its entry made (uniquing table, index files, reference resolver).
extension ObjectStore {
    /// Registers classes whose objects this store keeps, opening (or creating)
    /// their files. Call it in any order, as often as you like; registering a
    /// class twice does nothing.
    ///
    /// ```swift
    /// try store.register(Song.self, Playlist.self)
    /// ```
    /// Throws if a class file is damaged or not a database, if two classes
    /// claim the same ``StoredObject/storedName``, or if the class's
    /// ``StoredObject/layoutFingerprints`` differ from those its records were
    /// written with (``/CabinetStorage/CabinetError/Code-swift.struct/invalidModel``).
    public func register(_ types: StoredObject.Type...) throws {
        for type in types { try register(type) }
    }

    /// Registers every class of a list, for a model built at run time; see
    /// ``register(_:)-2cr9y``.
    ///
    /// ```swift
    /// let model: [StoredObject.Type] = [Song.self, Playlist.self]
    /// try store.register(model)
    /// ```
    public func register(_ types: [StoredObject.Type]) throws {
        for type in types { try register(type) }
    }

    /// Registers one class; see ``register(_:)-2cr9y``.
    public func register(_ type: StoredObject.Type) throws {
        useDetector.enter("register(_:)")
        defer { useDetector.leave() }
        if isSaving { changeDuringSave("register(_:)") }
        try checkOpen()
        if resolver.entry(for: type) != nil { return }
        let name = type.storedName
        try ClassRegistrar.validate(name: name, of: type)
        if link.isPoolBlock {
            throw CabinetError.readOnly(path: path, reason: "a StorePool's blocks cannot register \(String(describing: type)); list it in the pool's classes")
        }
        if let other = entriesByName[name] {
            throw CabinetError.classConflict(className: String(describing: type),
                                             reason: "\(String(describing: other.type)) is already registered with the stored name '\(name)'")
        }
        let probe = ObjectStore.probeWrite(type)
        try ClassRegistrar.checkWritesContent(type, bytesWritten: probe.bytes)
        // Opening may create the class's file and write its metadata row: a writer does it while readers wait.
        let (table, opened) = try coordinatesReads ? readingCommittedState { try ClassRegistrar(store: self).open(type, name: name) }
                                                     : changingTables { try ClassRegistrar(store: self).open(type, name: name) }
        if let holder = resolver.entry(classID: opened.classID) {
            throw CabinetError.classConflict(className: String(describing: type),
                                             reason: "its file has class ID \(opened.classID), which \(holder.name) also has")
        }
        let writesLists = probe.writesLists
        if writesLists && recordFormat != .plain && !backend.services.isReadOnly {
            // Created (and catalogued) now, so a save's journal never names a table it must create.
            _ = try changingTables { try listsTable(creating: true) }
        }
        // A fingerprint the row lacks (a store written before fingerprints, a raised version) is
        // written by the next save, with the records of that version, never on its own.
        var metadata = opened
        let layoutAdded = metadata.recordLayout(of: type) && !backend.services.isReadOnly
        let entry = add(type, name: name, table: table, metadata: metadata, writesLists: writesLists)
        if layoutAdded { entry.metadataChanged = true }
        do {
            try openIndexes(for: entry)
        } catch {
            remove(entry)
            throw error
        }
        buildWaitingIndexes()
    }

    /// Makes the entry of a class whose table is open and metadata read (also
    /// for a pool's context, from its template).
    @discardableResult
    func add(_ type: StoredObject.Type, name: String, table: any StorageTable, metadata: ClassMetadata, writesLists: Bool) -> ClassEntry {
        var metadata = metadata
        let verified = metadata.checksummed || metadata.lastRowID == ClassMetadata.firstObjectRowID - 1
        let protect = recordFormat == .checksummed && !metadata.checksummed && metadata.salt != nil
        metadata.checksummed = recordFormat == .checksummed
        let entry = ClassEntry(store: self, type: type, name: name, table: table, metadata: metadata, denseOnlyForScans: link.isPoolBlock)
        // A checksummed store's metadata written before rows carried their own checksum gets one at the
        // next save (a pool's root does that save: its contexts start with nothing to save).
        entry.metadataChanged = protect && !backend.services.isReadOnly && !link.isPoolBlock
        entry.metadataVerified = verified
        entry.writesLists = writesLists
        entriesByName[name] = entry
        resolver.add(entry)
        entry.undoStamp = undoStamp
        return entry
    }

    /// Takes back a class whose registration failed after its entry was made.
    func remove(_ entry: ClassEntry) {
        var loaded: [StoredObject] = []
        entry.live.forEachObject { loaded.append($0) }
        for object in loaded { entry.release(object) }
        entriesByName[entry.name] = nil
        resolver.remove(entry)
    }
}
