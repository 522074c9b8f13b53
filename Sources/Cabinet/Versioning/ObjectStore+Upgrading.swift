import CabinetStorage

extension ObjectStore {
    /// Whether some records of `type` may have been written by an older version
    /// of the class: its metadata row records an older version than the class declares.
    public func needsUpgrade(_ type: StoredObject.Type) throws -> Bool {
        let entry = try requireEntry(for: type)
        return entry.metadata.version < entry.type.version
    }

    /// Rewrites every object of `type` written by an older version of its class
    /// at the current version, then records that version in the class's metadata.
    ///
    /// ```swift
    /// try store.upgradeAll(Person.self)     // every Person now stored at version 2
    /// ```
    /// It streams the file `batchSize` rows at a time, one transaction per batch,
    /// so memory stays bounded whatever the class's size. If it is interrupted,
    /// the batches already committed stay upgraded and running it again finishes
    /// the job (records already at the current version are skipped). Records of
    /// a newer version are left as they are. The class must have no unsaved changes.
    ///
    /// `progress`, if given, is called as the class's records are read (see
    /// ``StoreProgress``; `what` is the class's name):
    /// ```swift
    /// try store.upgradeAll(Person.self) { print("\($0.completed) of \($0.total ?? 0)") }
    /// ```
    /// - Returns: the number of records rewritten.
    @discardableResult
    public func upgradeAll(_ type: StoredObject.Type, batchSize: Int = 1_000, progress: StoreProgress.Handler? = nil) throws -> Int {
        useDetector.enter("upgradeAll(_:batchSize:)")
        defer { useDetector.leave() }
        if isSaving { changeDuringSave("upgradeAll(_:batchSize:)") }
        let entry = try requireEntry(for: type)
        // A metadata row waiting for the next save alone (a layout fingerprint registration added) is no
        // change of objects: the upgrade writes the row itself, with its new version.
        guard entry.inserted.isEmpty && entry.updated.isEmpty && entry.deleted.isEmpty else {
            throw CabinetError.unsavedChanges(className: entry.name)
        }
        // In a pool's write block: while no block reads (a read block cannot upgrade).
        return try writingTables { try upgrade(entry, batchSize: batchSize, progress: progress) }
    }

    private func upgrade(_ entry: ClassEntry, batchSize: Int, progress: StoreProgress.Handler?) throws -> Int {
        // Records read ahead of an upgrade (a query's batch) are stale after it, even one that failed part way.
        defer { entry.recordsChanged() }
        let target = entry.type.version
        var rewritten = 0
        var counter = ProgressCounter(progress, total: max(try entry.table.recordCount - 1, 0))
        counter.begin(entry.name)
        if options.perInstanceVersioning {
            rewritten = try upgradeVersionedRecords(entry, to: target, batchSize: max(1, batchSize), counter: &counter)
        } else if entry.metadata.version < target {
            // Without a version in each record, a half-done upgrade could not be told
            // apart afterwards: rewrite everything, and the new version with it, at once.
            var upgraded = entry.metadata
            upgraded.version = target
            rewritten = try rewriteRows(entry, in: ClassMetadata.firstObjectRowID...max(entry.metadata.lastRowID, 1),
                                        finishing: upgraded) { _ in counter.advance(); return true }
            entry.metadata = upgraded
        }
        if entry.metadata.version < target {
            // Memory takes the new version only once the file has it: a failed write leaves the upgrade to do again.
            var upgraded = entry.metadata
            upgraded.version = target
            try changingTables { try commitToBackend(WriteBatch(upgraded, of: entry.name)) }
            entry.metadata = upgraded
        }
        counter.finish()
        return rewritten
    }

    /// Upgrades every registered class whose metadata records an older version.
    ///
    /// ```swift
    /// try store.register(Person.self, Song.self)
    /// try store.upgradeAllClassesNeedingUpgrade()
    /// ```
    /// `progress` is called for each class as ``upgradeAll(_:batchSize:progress:)`` calls it:
    /// the counts start again at each class (`what` names it).
    public func upgradeAllClassesNeedingUpgrade(progress: StoreProgress.Handler? = nil) throws {
        for entry in entriesByName.values.sorted(by: { $0.name < $1.name }) where entry.metadata.version < entry.type.version {
            try upgradeAll(entry.type, progress: progress)
        }
    }

    private func upgradeVersionedRecords(_ entry: ClassEntry, to target: UInt8, batchSize: Int,
                                         counter: inout ProgressCounter) throws -> Int {
        var rewritten = 0
        var seen = 0
        let stored = max(try entry.table.recordCount - 1, 0)
        var start = ClassMetadata.firstObjectRowID
        let last = entry.metadata.lastRowID
        // Walk the row IDs in batches; stop once every stored record was seen, so a
        // damaged last row ID cannot make this run for billions of empty rows.
        while start <= last && seen < stored {
            let end = start &+ UInt32(batchSize - 1) < start ? last : min(last, start &+ UInt32(batchSize - 1))
            rewritten += try rewriteRows(entry, in: start...end) { version in
                seen += 1
                counter.advance()
                return version < target
            }
            if end == last { break }
            start = end + 1
        }
        return rewritten
    }

    /// Reads and rewrites, in one transaction, the rows in `range` whose version
    /// byte `shouldRewrite` accepts, and writes `metadata` (if given) with them.
    /// A class whose records may keep lists out of line goes through
    /// ``rewriteRowsKeepingLists(_:in:lists:finishing:where:)`` instead.
    private func rewriteRows(_ entry: ClassEntry, in range: ClosedRange<UInt32>, finishing metadata: ClassMetadata? = nil,
                             where shouldRewrite: (UInt8) -> Bool) throws -> Int {
        if let lists = try upgradeListWriter(for: entry) {
            return try rewriteRowsKeepingLists(entry, in: range, lists: lists, finishing: metadata, where: shouldRewrite)
        }
        var rewritten = 0
        let encoder = RecordEncoder(location: entry.location())
        var buffer = DataBuffer()
        buffer.encoder = encoder
        var batch = metadata.map { WriteBatch($0, of: entry.name) } ?? WriteBatch()
        let table = batch.table(named: entry.name)
        // One batch is one commit: readers in other processes wait for it, and see it whole.
        try changingTables {
            // Every row is read before any is written: the batch holds them until the commit.
            try forEachRowToRewrite(entry, in: range, into: &buffer, with: encoder, where: shouldRewrite) { rowID, record in
                withUnsafeBytes(of: rowID.littleEndian) { batch.set(record, forKey: $0, inTable: table) }
                rewritten += 1
            }
            try commitToBackend(batch)
        }
        return rewritten
    }

    /// Reads each row in `range` whose version byte `shouldRewrite` accepts,
    /// encodes it at the current version into `buffer` (which points to `encoder`),
    /// and hands its row ID and new record to `body`.
    func forEachRowToRewrite(_ entry: ClassEntry, in range: ClosedRange<UInt32>, into buffer: inout DataBuffer, with encoder: RecordEncoder,
                             where shouldRewrite: (UInt8) -> Bool,
                             _ body: (UInt32, UnsafeRawBufferPointer) throws -> Void) throws {
        var record = DataBuffer()
        let version: UInt8? = options.perInstanceVersioning ? entry.type.version : nil
        for rowID in range {
            guard try entry.table.withValue(forRow: rowID, { record.load($0) }) != nil else { continue }
            let recordVersion = options.perInstanceVersioning ? (record.withUnsafeBytes { $0.first } ?? 0) : entry.metadata.version
            guard shouldRewrite(recordVersion) else { continue }
            let object = try upgradedObject(entry, rowID: rowID, record: &record)
            try encode(object, entry: entry, into: &buffer, with: encoder, version: version)
            try buffer.withUnsafeBytes { try body(rowID, $0) }
        }
    }

    /// The object of a row, with its content read by the current class (which handles the old version).
    private func upgradedObject(_ entry: ClassEntry, rowID: UInt32, record: inout DataBuffer) throws -> StoredObject {
        if let live = entry.live.object(at: rowID), live.hasContent { return live }
        let object = entry.live.object(at: rowID) ?? entry.type.init()
        if object.entry == nil {
            object.rowID = rowID
            object.hasContent = false
            entry.adopt(object)
        }
        do {
            try decode(&record, into: object, entry: entry)
        } catch {
            if object.changeState == .clean && !object.hasContent { entry.release(object) }
            throw error
        }
        return object
    }
}
