import CabinetStorage

/// Saves of other processes, on a backend that several processes write at
/// once (``OtherWritersBackend``: Redis). Each is announced to every open of
/// the store; this store takes them in before its next read, its first insert
/// into a class after a save, and its save: a live object they changed that
/// has no unsaved change here becomes a fault again (its next read shows their
/// content), and a class they inserted into hands out row IDs after theirs.
/// An object with unsaved changes here that they changed too keeps its
/// changes, and its save throws ``CabinetError/Code-swift.struct/saveConflict``;
/// ``refresh(discardingConflicts:)`` settles that.
///
/// Out-of-line lists conflict record by record, through their owners: a save
/// that changed one owner's list is no conflict for another owner's. A named
/// buffer set here and not saved conflicts with their save of the same name.
///
/// What the app copied out of the store is not tracked: a named buffer read,
/// changed and set again after another process's save was taken in overwrites
/// theirs (one set before is a conflict), as does a value read from an object
/// and written into another.
extension ObjectStore {
    /// Takes in other processes' saves now, without waiting for their
    /// announcement; with `discardingConflicts`, settles conflicts in their
    /// favour: an object with unsaved changes here that one of their saves
    /// changed too loses those changes (and the undo history is cleared), as
    /// does a named buffer set here under a name one of them saved, so
    /// that a `save()` that threw ``/CabinetStorage/CabinetError/Code-swift.struct/saveConflict``
    /// can be tried again after the app applies its change anew. On a backend
    /// with one writer (Tokyo Cabinet, memory) it does nothing.
    ///
    /// ```swift
    /// do {
    ///     try store.save()
    /// } catch let error as CabinetError where error.code == .saveConflict {
    ///     try store.refresh(discardingConflicts: true)   // their save wins
    ///     note.title = newTitle                           // ours again, on their content
    ///     try store.save()
    /// }
    /// ```
    /// Inserts and deletes are never discarded: a delete of an object another
    /// process changed, or an insert whose row another process took first,
    /// conflicts until it is undone. Delete such a new object (unsaved, it is
    /// simply forgotten) and insert it anew: it takes a row after theirs.
    public func refresh(discardingConflicts: Bool = false) throws {
        useDetector.enter("refresh(discardingConflicts:)")
        defer { useDetector.leave() }
        try checkOpen()
        guard let shared = otherWriters else { return }
        try takeInOthersSaves(from: shared, discardingConflicts: discardingConflicts)
        runLiveObserversAfterTakeIn()
    }

    /// Takes in other processes' saves if one was announced (no I/O otherwise).
    /// Not inside a save (which took them in at its start, and whose index
    /// blocks and records read since would count as up to date), nor inside
    /// another read (``readingCommittedState(_:)`` calls it at depth 0 only).
    @inline(__always)
    func takeInAnnouncedSaves() throws {
        guard let shared = otherWriters, !isTakingInOthersSaves, !isSaving, committedReadDepth == 0,
              shared.othersHaveSaved else { return }
        try takeInOthersSaves(from: shared, discardingConflicts: false)
    }

    private func takeInOthersSaves(from shared: any OtherWritersBackend, discardingConflicts: Bool) throws {
        isTakingInOthersSaves = true
        defer { isTakingInOthersSaves = false }
        let saves = try shared.takeOthersSaves()
        if !liveObservers.isEmpty { keepForLiveObservers(saves) }
        var stale = StaleRows()
        var discarded = false
        var refreshed = false
        /// Observed objects made faults again: told once all is taken in, not from inside.
        var refaulted: [StoredObject] = []

        /// Brings `object` up to date; false if it keeps unsaved changes (a conflict).
        func takeIn(_ object: StoredObject, of entry: ClassEntry) -> Bool {
            switch object.changeState {
            case .clean:
                if object.hasContent {
                    object.hasContent = false
                    if _slowPath(object.contentState.contains(.observed)) { refaulted.append(object) }
                }
                object.contentLoadFailed = false
                refreshed = true
                return true
            case .updated where discardingConflicts:
                entry.updated.removeAll { $0 === object }
                object.changeState = .clean
                object.hasContent = false
                if _slowPath(object.contentState.contains(.observed)) { refaulted.append(object) }
                discarded = true
                return true
            case .loading:
                return false   // being decoded from bytes read before their save: stale
            case .updated, .inserted, .deleted:
                return false
            }
        }
        /// Takes in `keys` (`nil`: every row) of table `name`.
        func takeIn(_ keys: Set<[UInt8]>?, ofTable name: String) throws {
            guard let entry = entriesByName[name] else {
                // Lists and named buffers record by record, as rows; indexes are read at the save.
                if name == ObjectStore.listsTableName {
                    takeIn(listRecords: keys)
                } else if name == ObjectStore.namedBuffersTableName {
                    for buffer in pendingNamedBuffers.keys where keys?.contains(Array(buffer.utf8)) ?? true {
                        if discardingConflicts {
                            pendingNamedBuffers[buffer] = nil
                            discarded = true
                        } else {
                            stale.mark(name, Array(buffer.utf8))
                        }
                    }
                }
                return
            }
            entry.recordsChanged()   // records read ahead of this (a query's batch) are stale
            var metadataChanged = keys == nil
            func row(_ object: StoredObject) {
                if !takeIn(object, of: entry) { stale.mark(name, RowKey.bytes(object.rowID)) }
            }
            if let keys {
                for key in keys {
                    guard let rowID = RowKey.row(key) else { continue }
                    if rowID == ClassMetadata.rowID { metadataChanged = true } else if let object = entry.live.object(at: rowID) { row(object) }
                }
            } else {
                entry.live.forEachObject(row)
            }
            guard metadataChanged, let theirs = try ClassRegistrar.readMetadata(of: entry.table, className: name) else { return }
            if !entry.metadataChanged {
                entry.metadata = theirs   // new objects here take the rows after theirs
            } else if theirs.version == entry.metadata.version && theirs.classID == entry.metadata.classID {
                // Inserts here moved the last row ID too: the later of the two, so that no
                // row is handed out twice from here on. (A row both handed out is a row
                // both saves change: the object inserted here on it stays a conflict.)
                entry.metadata.lastRowID = max(entry.metadata.lastRowID, theirs.lastRowID)
                // And the layout fingerprints of both: theirs of a version this class does not write stay checked.
                entry.metadata.layouts.merge(theirs.layouts) { ours, _ in ours }
            } else {
                // An upgrade on one side: not merged.
                stale.mark(name, RowKey.bytes(ClassMetadata.rowID))
            }
        }

        /// Takes in the list records of `keys` (`nil`: all) through their owners: a
        /// list's records are written only with its owner's row, so an owner
        /// brought up to date (or discarded) reads its lists again, and one
        /// that keeps unsaved changes makes those records (or, for a whole
        /// table, its row) a conflict. Other owners' lists are no conflict.
        func takeIn(listRecords keys: Set<[UInt8]>?) {
            guard let keys else {
                for owner in entriesByName.values where owner.writesLists {
                    owner.live.forEachObject { object in
                        // A new object's row was handed to this process alone: their lists are not its own.
                        if object.changeState != .inserted, !takeIn(object, of: owner) {
                            stale.mark(owner.name, RowKey.bytes(object.rowID))
                        }
                    }
                }
                return
            }
            for key in keys where key.count >= ListScope.rootKeySize {
                let row = UInt32(key[1]) | UInt32(key[2]) << 8 | UInt32(key[3]) << 16 | UInt32(key[4]) << 24
                guard let owner = resolver.entry(classID: key[0]), entriesByName[owner.name] === owner,
                      let object = owner.live.object(at: row) else { continue }
                if !takeIn(object, of: owner) { stale.mark(ObjectStore.listsTableName, key) }
            }
        }

        // What was stale before and still is (its unsaved changes are still here), then what these saves changed.
        for (name, keys) in staleRows { try takeIn(keys, ofTable: name) }
        for save in saves {
            // The store replaced (or more saves missed than the log keeps): its metadata rows may have gone back.
            if save.wholeStore { rowReservations?.discardAll() }
            let tables = save.wholeStore ? Dictionary(uniqueKeysWithValues: try backend.tableNames().map { ($0, Set<[UInt8]>?.none) }) : save.tables
            for (name, keys) in tables { try takeIn(keys, ofTable: name) }
        }
        staleRows = stale.rows
        shared.keepConflicting(stale.rows)
        // An undo would put back what their save replaced, unseen by any conflict check.
        if discarded || refreshed { undoManager.removeAllActions() }
        // Their next read may find other values: the properties observers read were changed, as far as they know.
        for object in refaulted { object.observedContentWillBeReplaced() }
    }
}

/// Rows other processes changed that this store could not bring up to date.
private struct StaleRows {
    var rows: [String: Set<[UInt8]>?] = [:]

    /// Every stale row is named by its key: none marks a whole table.
    mutating func mark(_ table: String, _ key: [UInt8]) {
        var keys = rows[table].flatMap { $0 } ?? []
        keys.insert(key)
        rows[table] = keys
    }
}
