import CabinetStorage

extension ObjectStore {
    /// Stores `buffer` under `name`, written at the next ``save()``, as
    /// BNRPersistence's named buffers: for a favourites list, a last-opened
    /// document, anything that is not an object of a class.
    ///
    /// ```swift
    /// var favorites = DataBuffer()
    /// favorites.writeReferences([song])
    /// try store.setNamedBuffer(favorites, forName: "Favorite")
    /// try store.save()
    /// ```
    /// Throws ``/CabinetStorage/CabinetError/invalidName(_:)`` for an empty or over-long name,
    /// ``/CabinetStorage/CabinetError/valueTooLarge(_:size:limit:)`` for a buffer over 2 GiB, and
    /// ``/CabinetStorage/CabinetError/referenceToUninsertedObject(_:targetClass:)`` if the buffer
    /// refers to an object that was never inserted.
    public func setNamedBuffer(_ buffer: DataBuffer, forName name: String) throws {
        useDetector.enter("setNamedBuffer(_:forName:)")
        defer { useDetector.leave() }
        if isSaving { changeDuringSave("setNamedBuffer(_:forName:)") }
        try checkOpen()
        try ObjectStore.validateBufferName(name)
        if let target = buffer.firstUninsertedReference {
            throw CabinetError.referenceToUninsertedObject(namedBufferLocation(name), targetClass: target)
        }
        var stored = buffer
        stored.appendTrailer(for: recordFormat)
        guard stored.count <= StorageLimits.largestValue else {
            throw CabinetError.valueTooLarge(namedBufferLocation(name), size: stored.count, limit: StorageLimits.largestValue)
        }
        pendingNamedBuffers[name] = .some(stored.allBytes)
    }

    /// The buffer stored under `name` (including one set and not yet saved),
    /// ready to read from the start; `nil` if there is none. References read
    /// from it resolve to this store's objects.
    ///
    /// ```swift
    /// if var favorites = try store.namedBuffer(forName: "Favorite") {
    ///     let songs = try favorites.readReferences(to: Song.self)
    /// }
    /// ```
    public func namedBuffer(forName name: String) throws -> DataBuffer? {
        useDetector.enter("namedBuffer(forName:)")
        defer { useDetector.leave() }
        try checkOpen()
        try ObjectStore.validateBufferName(name)
        let bytes: [UInt8]?
        if let pending = pendingNamedBuffers[name] {
            bytes = pending
        } else {
            bytes = try readingCommittedState {
                guard let table = try namedBuffersTable(creating: false) else { return nil }
                let key = Array(name.utf8)
                let found = try key.withUnsafeBytes { key in try table.withValue(forKey: key) { Array($0) } }
                if found == nil { try confirmAbsent(key, in: table, name: name) }
                return found
            }
        }
        guard let bytes else { return nil }
        var buffer = DataBuffer(bytes: bytes)
        buffer.context = RecordContext(resolver: resolver, location: namedBufferLocation(name))
        try buffer.removeTrailer(for: recordFormat)
        return buffer
    }

    /// Removes the buffer stored under `name` at the next save.
    public func removeNamedBuffer(forName name: String) throws {
        useDetector.enter("removeNamedBuffer(forName:)")
        defer { useDetector.leave() }
        if isSaving { changeDuringSave("removeNamedBuffer(forName:)") }
        try checkOpen()
        try ObjectStore.validateBufferName(name)
        pendingNamedBuffers[name] = .some(nil)
    }

    /// Forgets a ``setNamedBuffer(_:forName:)`` or ``removeNamedBuffer(forName:)``
    /// of `name` not saved yet: the next read gives the stored buffer, and the
    /// next save leaves it as it is. The way out of a conflict on a named buffer
    /// alone, when another process saved the same name first.
    ///
    /// ```swift
    /// do {
    ///     try store.save()
    /// } catch let error as CabinetError where error.code == .saveConflict {
    ///     try store.discardUnsavedNamedBuffer(forName: "Favorite")   // theirs stays
    ///     try store.save()
    /// }
    /// ```
    public func discardUnsavedNamedBuffer(forName name: String) throws {
        useDetector.enter("discardUnsavedNamedBuffer(forName:)")
        defer { useDetector.leave() }
        if isSaving { changeDuringSave("discardUnsavedNamedBuffer(forName:)") }
        try checkOpen()
        try ObjectStore.validateBufferName(name)
        pendingNamedBuffers[name] = nil
    }

    /// The table of named buffers; `nil` if there is none yet and `creating` is
    /// false. Throws ``CabinetError/missingClassFile(_:classID:)`` if the catalog
    /// lists it and its file is gone: reading it as empty, or creating it anew,
    /// would lose every buffer it held. A new one is added to the catalog.
    func namedBuffersTable(creating: Bool) throws -> (any StorageTable)? {
        try auxiliaryTable(named: ObjectStore.namedBuffersTableName, creating: creating)
    }

    /// A table that holds no class (named buffers, out-of-line lists), as
    /// ``namedBuffersTable(creating:)`` describes.
    func auxiliaryTable(named name: String, creating: Bool) throws -> (any StorageTable)? {
        if let table = link.openedAuxiliaryTable(named: name) { return table }
        if try !backend.hasTable(named: name) {
            if catalog?.tables[name] != nil {
                throw CabinetError.missingClassFile(RecordLocation(file: backend.location(ofTable: name)), classID: nil)
            }
            guard creating else { return nil }
        }
        let table = try backend.openTable(named: name)
        try ClassRegistrar(store: self).catalog(name, tag: nil)
        // A pool's write block reads and writes it staged, as its classes' tables.
        return link.view(of: table, named: name)
    }

    /// Throws if the named buffers' file holds `key` after all, or cannot be read
    /// whole: a lookup that misses is not taken for "no such buffer" on its own
    /// word, since a damaged hash index loses records from lookups (never from a
    /// scan, which reads every record). Buffers are few: the scan is short, and
    /// only a miss pays for it.
    private func confirmAbsent(_ key: [UInt8], in table: any StorageTable, name: String) throws {
        try table.forEach { stored, _ in
            guard !stored.elementsEqual(key) else {
                throw CabinetError.malformedRecord(namedBufferLocation(name), reason: "the named buffer is in the file but a lookup of its name does not find it (the file's hash index is damaged); run `cabinet verify`, then `cabinet compact` rebuilds the index")
            }
            return true
        }
    }

    private func namedBufferLocation(_ name: String) -> RecordLocation {
        RecordLocation(file: "\(backend.location(ofTable: ObjectStore.namedBuffersTableName)) [\(name)]")
    }

    private static func validateBufferName(_ name: String) throws {
        guard !name.isEmpty, name.utf8.count <= 4096 else { throw CabinetError.invalidName(name) }
    }
}
