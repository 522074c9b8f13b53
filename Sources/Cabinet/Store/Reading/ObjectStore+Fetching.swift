extension ObjectStore {
    /// The object of `type` at `rowID`: the live instance if there is one
    /// (the very same object, `===`), else a new one with its content loaded;
    /// `nil` if there is no such row (or it was deleted and not yet saved).
    ///
    /// ```swift
    /// let same = try store.fetch(Song.self, rowID: song.rowID)
    /// ```
    public func fetch<T: StoredObject>(_ type: T.Type, rowID: UInt32) throws -> T? {
        useDetector.enter("fetch(_:rowID:)")
        defer { useDetector.leave() }
        let entry = try requireEntry(for: type)
        return try readingCommittedState { try loadedObject(entry, rowID: rowID) }.map { try ObjectStore.typed($0, as: T.self) }
    }

    /// The object of a row with its content: the live instance (loaded if it is a
    /// fault), else a new one read from disk; `nil` if the row does not exist or
    /// its object was deleted and not yet saved.
    func loadedObject(_ entry: ClassEntry, rowID: UInt32) throws -> StoredObject? {
        try loadedObject(entry, rowID: rowID) { try loadContent(of: $0, entry: entry) }
    }

    /// Whether handing over the live object of a row reads the row's record: a
    /// fault loads; in a read-only store a clean object takes the last committed
    /// content; an unsaved insert or delete reads nothing.
    @inline(__always)
    func readsRecord(of live: StoredObject) -> Bool {
        switch live.changeState {
        case .deleted, .inserted: false
        default: !live.hasContent || refreshesLiveObjects(live)
        }
    }

    /// ``loadedObject(_:rowID:)`` whose record, if it needs one, `load` reads into
    /// the object (`false`: the row has no record): from the table, or from a
    /// record read ahead with others (``loadedObjects(_:rows:_:)``).
    @inline(__always)
    func loadedObject(_ entry: ClassEntry, rowID: UInt32, load: (StoredObject) throws -> Bool) throws -> StoredObject? {
        if let live = entry.live.object(at: rowID) {
            switch live.changeState {
            case .deleted: return nil
            case .inserted: return live
            default:
                if readsRecord(of: live), try !load(live) { return nil }
                return live
            }
        }
        guard rowID >= ClassMetadata.firstObjectRowID else { return nil }
        let object = entry.type.init()
        object.rowID = rowID
        object.hasContent = false
        entry.adopt(object)   // before reading, so a record that refers to itself gets this instance
        do {
            guard try load(object) else {
                entry.release(object)
                return nil
            }
        } catch {
            entry.release(object)
            throw error
        }
        return object
    }

    /// The object of `type` at `rowID` without reading its record: the live
    /// instance if there is one, else a fault that loads when a `@Stored`
    /// property is read (BNRPersistence's `objectForClass:rowID:fetchContent:NO`).
    /// Use it to refer to rows whose IDs you already know.
    ///
    /// ```swift
    /// let song = try store.fault(Song.self, rowID: 2)
    /// song.hasContent   // false, unless it was already live
    /// ```
    /// Whether the row exists is found out when the fault loads.
    public func fault<T: StoredObject>(_ type: T.Type, rowID: UInt32) throws -> T {
        useDetector.enter("fault(_:rowID:)")
        defer { useDetector.leave() }
        let entry = try requireEntry(for: type)
        guard rowID >= ClassMetadata.firstObjectRowID else {
            throw CabinetError.missingRecord(entry.location(row: rowID))
        }
        return try ObjectStore.typed(entry.object(at: rowID), as: T.self)
    }

    /// Every object of `type`, each with its content loaded; objects they refer
    /// to are faults. Objects inserted and not yet saved are included, objects
    /// deleted and not yet saved are not. The order is the file's own
    /// (roughly the order rows were first saved), then unsaved inserts.
    ///
    /// ```swift
    /// let lists = try store.fetchAll(Playlist.self)
    /// ```
    /// Throws on the first damaged record, naming it. For classes too large to
    /// hold in memory at once, use ``enumerate(_:_:)``.
    @inlinable
    public func fetchAll<T: StoredObject>(_ type: T.Type) throws -> [T] {
        // Inlined so the loop that collects the objects is specialized for T in the caller.
        var result: [T] = []
        try scan(type, reserve: { result.reserveCapacity($0) }) { object in
            result.append(try ObjectStore.typed(object, as: T.self))
            return true
        }
        return result
    }

    /// Calls `body` with each object of `type`, loading one record at a time:
    /// memory stays bounded whatever the class's size, as long as `body` does
    /// not keep the objects. Set `stop` to `true` to end early.
    ///
    /// ```swift
    /// var total: UInt64 = 0
    /// try store.enumerate(Song.self) { song, stop in
    ///     total += UInt64(song.seconds)
    /// }
    /// ```
    /// Do not save from inside `body`; Tokyo Cabinet's iteration does not allow changes under it.
    @inlinable
    public func enumerate<T: StoredObject>(_ type: T.Type, _ body: (T, inout Bool) throws -> Void) throws {
        var stop = false
        try scan(type, reserve: { _ in }) { object in
            try body(try ObjectStore.typed(object, as: T.self), &stop)
            return !stop
        }
    }

    /// The number of saved objects of `type` (not counting unsaved inserts and deletes).
    public func count<T: StoredObject>(of type: T.Type) throws -> Int {
        useDetector.enter("count(of:)")
        defer { useDetector.leave() }
        let entry = try requireEntry(for: type)
        return try readingCommittedState { max(try entry.table.recordCount - 1, 0) }
    }

    /// Loads a fault's content now, throwing if it cannot be read (a `@Stored`
    /// getter would report the error to ``faultErrorHandler`` instead).
    ///
    /// ```swift
    /// try store.load(list.songs[0])
    /// ```
    /// Does nothing for an object that already has its content; throws
    /// ``/CabinetStorage/CabinetError/storeClosed(path:)`` once the store is closed.
    public func load(_ object: StoredObject) throws {
        useDetector.enter("load(_:)")
        defer { useDetector.leave() }
        try checkOpen()
        guard !object.hasContent, let entry = object.entry, entry.store === self else { return }
        guard try readingCommittedState({ try loadContent(of: object, entry: entry) }) else {
            throw CabinetError.missingRecord(entry.location(row: object.rowID))
        }
        object.contentLoadFailed = false
    }

    /// Loads the content of every fault among `objects` (a playlist's songs,
    /// a page of results) with one read per class: on Redis one round trip
    /// (`HMGET`) for all of a class's faults instead of one per object; on
    /// Tokyo Cabinet lookups in its map whose cache misses overlap.
    ///
    /// ```swift
    /// try store.load(list.songs)          // then reading their titles reads nothing more
    /// for song in list.songs { print(song.title) }
    /// ```
    /// Objects that have their content, or belong to another store, are passed
    /// over. Throws ``/CabinetStorage/CabinetError/missingRecord(_:)`` for the first fault whose
    /// row is gone (the other faults of its class are loaded), and the errors
    /// of loading one object for a record that does not decode.
    public func load<Objects: Sequence>(_ objects: Objects) throws where Objects.Element: StoredObject {
        useDetector.enter("load(_:)")
        defer { useDetector.leave() }
        try checkOpen()
        var order: [ObjectIdentifier] = []
        var faults: [ObjectIdentifier: (entry: ClassEntry, objects: [StoredObject])] = [:]
        for object in objects where !object.hasContent && object.changeState != .inserted {
            guard let entry = object.entry, entry.store === self else { continue }
            let id = ObjectIdentifier(entry)
            if faults[id] == nil { order.append(id); faults[id] = (entry, []) }
            faults[id]!.objects.append(object)
        }
        guard !order.isEmpty else { return }
        try readingCommittedState {
            for id in order {
                let (entry, group) = faults[id]!
                var buffer = takeReadBuffer()   // a read(from:) that touches a fault gets its own
                defer { readBuffer = buffer }
                var missing: StoredObject?
                try entry.table.withValues(forRows: group.map(\.rowID)) { index, bytes in
                    let object = group[index]
                    guard let bytes else { missing = missing ?? object; return }
                    guard !object.hasContent else { return }   // loaded meanwhile, by a read(from:) of another
                    buffer.load(bytes)
                    try decode(&buffer, into: object, entry: entry)
                    object.contentLoadFailed = false
                }
                if let missing {
                    try entry.table.vouchForMisses()   // the damage that hid the row, if that is why
                    throw CabinetError.missingRecord(entry.location(row: missing.rowID))
                }
            }
        }
    }

    /// Loads a fault for a `@Stored` getter or setter, which cannot throw.
    func loadFaultReportingErrors(_ object: StoredObject, entry: ClassEntry) {
        useDetector.enter("reading a fault's @Stored property")
        defer { useDetector.leave() }
        do {
            if try !readingCommittedState({ try loadContent(of: object, entry: entry) }) {
                throw CabinetError.missingRecord(entry.location(row: object.rowID))
            }
        } catch {
            object.contentLoadFailed = true
            faultErrorHandler(error as? CabinetError ?? .malformedRecord(entry.location(row: object.rowID), reason: "\(error)"))
        }
    }

    /// Reads `object`'s record into it; `false` if the row does not exist.
    func loadContent(of object: StoredObject, entry: ClassEntry) throws -> Bool {
        var buffer = takeReadBuffer()
        defer { readBuffer = buffer }
        let found: Void? = try entry.table.withValue(forRow: object.rowID) { bytes in buffer.load(bytes) }
        guard found != nil else {
            // "No such row" only if the table's misses can be believed (a damaged hash index hides rows).
            try entry.table.vouchForMisses()
            return false
        }
        try decode(&buffer, into: object, entry: entry)
        return true
    }

    /// The shared read buffer, moved out so that a nested read (a `read(from:)`
    /// that touches a fault) gets a buffer of its own instead of clobbering this one.
    func takeReadBuffer() -> DataBuffer {
        let buffer = readBuffer
        readBuffer = DataBuffer()
        return buffer
    }

    /// Runs the object's `read(from:)` over a record already in `buffer`.
    @inline(__always)
    func decode(_ buffer: inout DataBuffer, into object: StoredObject, entry: ClassEntry,
                versioned: Bool? = nil, fromDisk: Bool = true) throws {
        buffer.pointContext(at: entry, rowID: object.rowID, resolver: resolver)
        if fromDisk { try buffer.removeTrailer(for: recordFormat) }
        if versioned ?? options.perInstanceVersioning {
            let version = try buffer.readUInt8()
            if version > entry.type.version {
                throw CabinetError.newerVersion(entry.location(row: object.rowID), recordVersion: version, classVersion: entry.type.version)
            }
            buffer.version = version
        } else {
            buffer.version = entry.metadata.version
        }
        let previousState = object.changeState
        object.changeState = .loading
        object.hasContent = true
        do {
            try object.read(from: &buffer)
        } catch {
            object.hasContent = false
            object.changeState = previousState
            throw explainDecodeFailure(error, of: object, entry: entry, version: buffer.version, fromDisk: fromDisk)
        }
        object.changeState = previousState
    }

    /// A record whose checksum matched but which `read(from:)` could not decode
    /// was read as it was saved: the class's `read(from:)` and `write(to:)` most
    /// likely disagree, and the error says so instead of suggesting damage.
    private func explainDecodeFailure(_ error: any Error, of object: StoredObject, entry: ClassEntry, version: UInt8, fromDisk: Bool) -> any Error {
        guard fromDisk, recordFormat == .checksummed, let error = error as? CabinetError,
              error.code == .truncatedRecord || error.code == .malformedRecord,
              error.location?.rowID == object.rowID, error.location?.className == entry.name else { return error }
        let type = String(describing: entry.type)
        let detail = error.code == .malformedRecord ? (error.reason ?? "") + ". " : ""
        return error.replacingReason(with: detail + "Its checksum matches, so these are the bytes that were saved: most likely \(type).read(from:) "
            + "does not read what \(type).write(to:) writes (a field read in another order or as another type) for a record of "
            + "version \(version) (\(type) is version \(entry.type.version)); make the two agree")
    }

    /// The read loop of fetchAll and enumerate: each saved record, then unsaved
    /// inserts. Not generic, so nothing in it looks up type metadata per object.
    @usableFromInline
    func scan(_ type: StoredObject.Type, reserve: (Int) -> Void, _ body: (StoredObject) throws -> Bool) throws {
        useDetector.enter("fetchAll(_:) or enumerate(_:_:)")
        defer { useDetector.leave() }
        let entry = try requireEntry(for: type)
        if (coordinatesReads || otherWriters != nil) && committedReadDepth == 0 {
            // A read-only store: the whole scan is one read of committed saves (it runs this again, nested).
            // A store other processes write: their saves are taken in before the scan, never during it.
            return try readingCommittedState { try scan(type, reserve: reserve, body) }
        }
        let records = try entry.table.recordCount
        reserve(max(records - 1, 0) + entry.inserted.count)
        entry.prepareForScan()
        entry.live.reserve(upTo: min(entry.metadata.lastRowID, entry.denseLimit))
        var buffer = takeReadBuffer()
        defer { readBuffer = buffer }
        var goOn = true
        func visit(_ rowID: UInt32, _ value: UnsafeRawBufferPointer) throws -> Bool {
            let object: StoredObject
            if let live = entry.live.object(at: rowID) {
                if live.changeState == .deleted { return true }
                object = live
                if !object.hasContent || refreshesLiveObjects(object) {
                    buffer.load(value)
                    try decode(&buffer, into: object, entry: entry)
                }
            } else {
                buffer.load(value)
                object = try adoptDecoded(entry, rowID: rowID, from: &buffer)
            }
            goOn = try body(object)
            return goOn
        }
        let last = entry.metadata.lastRowID, first = ClassMetadata.firstObjectRowID
        // A row past the last row ID the class handed out (as the file says it now,
        // read when such a row turns up: a reader's entry may be older) has a damaged
        // key, which no checksum covers: an error, never an object under a row it never had.
        var handedOut: UInt32?
        func checkHandedOut(_ rowID: UInt32) throws {
            if rowID <= last { return }
            if handedOut == nil {
                handedOut = max(last, try ClassRegistrar.readMetadata(of: entry.table, className: entry.name)?.lastRowID ?? 0)
            }
            guard let handedOut, rowID > handedOut else { return }
            throw CabinetError.malformedRecord(entry.location(row: rowID),
                                               reason: "row \(rowID) is beyond the last row ID handed out (\(handedOut)): its key is damaged; run `cabinet verify`, then restore a backup")
        }
        var rowsRead = 0
        if entry.table.prefersRowReads, last >= first, UInt64(records) * 2 >= UInt64(last - first + 1) {
            // A networked table whose rows are mostly there: read by row, in batches (Redis: HMGET),
            // which the server answers faster than a cursor.
            try entry.table.forEachRow(in: first...last) { rowID, value in
                rowsRead += 1
                return try visit(rowID, value)
            }
        }
        // Otherwise a scan in the table's order; after a read by row, only if the table holds
        // more records than it found (rows past the last row ID: damage `cabinet verify` lists).
        if rowsRead == 0 || (goOn && rowsRead < records - 1) {
            let onlyPast: UInt32? = rowsRead == 0 ? nil : last
            try entry.table.forEach { key, value in
                guard let rowID = RowKey.row(key) else {
                    throw CabinetError.malformedRecord(entry.location(), reason: "a key of \(key.count) bytes; row keys are 4 bytes")
                }
                if rowID == ClassMetadata.rowID { return true }
                guard rowID >= ClassMetadata.firstObjectRowID else {
                    throw CabinetError.malformedRecord(entry.location(row: rowID), reason: "row \(rowID) cannot hold an object")
                }
                if let onlyPast, rowID <= onlyPast { return true }
                try checkHandedOut(rowID)
                return try visit(rowID, value)
            }
        }
        guard goOn else { return }
        for object in entry.inserted where object.changeState == .inserted {
            if try !body(object) { return }
        }
    }

    /// A new live object of `entry`'s class for `rowID`, read from the record
    /// already in `buffer`; if the record does not decode, the object is dropped
    /// again and the error thrown.
    @inline(__always)
    func adoptDecoded(_ entry: ClassEntry, rowID: UInt32, from buffer: inout DataBuffer) throws -> StoredObject {
        let object = entry.type.init()
        object.rowID = rowID
        entry.adopt(object)
        do {
            try decode(&buffer, into: object, entry: entry)
        } catch {
            entry.release(object)
            throw error
        }
        return object
    }
}

extension ObjectStore {
    /// `object`, which a read found for a row of class `T`, as a `T`: an object
    /// of another class there is an error naming the row, never memory read as
    /// the wrong type (`unsafeDowncast` checks nothing in a release build).
    /// Inlined: the check is one comparison of classes per object.
    @inlinable @inline(__always)
    static func typed<T: StoredObject>(_ object: StoredObject, as type: T.Type) throws -> T {
        if _fastPath(Swift.type(of: object) == T.self) { return unsafeDowncast(object, to: T.self) }
        return try otherClass(object, as: type)
    }

    /// The slow path of ``typed(_:as:)``: a subclass of `T` passes, anything else throws.
    @usableFromInline
    static func otherClass<T: StoredObject>(_ object: StoredObject, as type: T.Type) throws -> T {
        if let typed = object as? T { return typed }
        let location = object.entry?.location(row: object.rowID) ?? RecordLocation(file: "<\(T.self)>", rowID: object.rowID)
        throw CabinetError.malformedRecord(location, reason: "a read of class \(T.self) found an object of class \(Swift.type(of: object)) for row \(object.rowID); run `cabinet verify`")
    }
}
