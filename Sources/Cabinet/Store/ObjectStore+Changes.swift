extension ObjectStore {
    /// Adds a new object to the store. It gets its ``StoredObject/rowID`` at
    /// once and is written at the next ``save()``.
    ///
    /// ```swift
    /// let song = Song(); song.title = "Walking on Sunshine"
    /// store.insert(song)
    /// ```
    /// Inserting an object that is already in this store does nothing (or,
    /// if it was deleted and not yet saved, keeps it). An object of a class not
    /// registered yet registers it, as ``register(_:)-(StoredObject.Type)`` would;
    /// if that fails (a damaged class file, a `StorePool` block, which cannot
    /// register), the object stays out of the store and the next ``save()`` throws
    /// the error. On a store several processes write (Redis), each object takes
    /// a row from a range this process reserved on the server; in a `StorePool`
    /// write block whose reservation fails, the object stays out the same way.
    /// Inserting an object that belongs to another store, into a closed
    /// store or during ``save()`` (from a `write(to:)`), is a programming error
    /// and stops the program.
    public func insert(_ object: StoredObject) {
        useDetector.enter("insert(_:)")
        defer { useDetector.leave() }
        if _slowPath(isClosed || isSaving) { changeDuringSaveOrClosed("insert(_:)") }
        if let current = object.entry {
            if current.store !== self { insertMisuse(object, current) }
            if object.changeState == .deleted {
                object.changeState = .updated
                current.updated.append(object)
            }
            return
        }
        guard let entry = entry(for: type(of: object)) ?? registeredOnInsert(type(of: object)) else { return }
        if _slowPath(rowReservations != nil), let reserved = reservedRowID(for: entry) {
            // Several processes write the store: a row of this process's own range; the metadata row is raised already.
            object.rowID = reserved
        } else if _slowPath(rowReservations != nil && link.isPoolBlock && link.allowsWrites) {
            // A pool's write block takes no row it did not reserve: its save would stage the metadata
            // row, which the group's commit could write below rows reserved after it. The object stays
            // out and the block's save throws why (`deferredSaveError`); the block can run again.
            return
        } else {
            // The first insert since a save: row IDs after those of other processes' saves
            // announced by now (a failure to read them leaves them for the save to find).
            if _slowPath(otherWriters != nil && !entry.metadataChanged) { try? takeInAnnouncedSaves() }   // not inside a read or save
            guard let rowID = entry.takeNextRowID() else {
                // Only a damaged (or truly exhausted) metadata row gets here; insert cannot
                // throw, so the next save reports it and the object stays out of the store.
                deferredSaveError = .malformedMetadata(entry.location(row: ClassMetadata.rowID),
                                                       reason: "every row ID has been used, so no object can be inserted")
                return
            }
            entry.metadataChanged = true
            object.rowID = rowID
        }
        if object.rowID > entry.denseLimit { entry.updateDenseLimit() }
        object.hasContent = true
        object.contentLoadFailed = false
        object.changeState = .inserted
        entry.adopt(object)
        entry.inserted.append(object)
        if undoManager.isRecording {
            object.undoStamp = undoManager.currentStamp()
            undoManager.recordInsert(of: object.rowID, in: entry)
        } else {
            object.undoStamp = 0   // whatever it was is stale: its first change is recorded
        }
        notify(.inserted, object)
    }

    /// Deletes an object at the next save, after calling its
    /// ``StoredObject/prepareForDelete()`` so it can apply delete rules.
    ///
    /// ```swift
    /// store.delete(song)    // song.prepareForDelete() removes it from playlists
    /// try store.save()
    /// ```
    /// Deleting an object that was inserted and never saved simply forgets it.
    /// Deleting an object of no store, or one already deleted, does nothing.
    public func delete(_ object: StoredObject) {
        useDetector.enter("delete(_:)")
        defer { useDetector.leave() }
        guard let entry = object.entry, entry.store === self, object.changeState != .deleted else { return }
        if isSaving { changeDuringSave("delete(_:)") }
        object.prepareForDelete()
        if object.changeState == .deleted { return }   // prepareForDelete deleted it itself
        if undoManager.isRecording {
            // Undo puts the very same instance back, so it must have its content.
            object.loadContentIfNeeded()
            undoManager.record(.restore(object, snapshot(of: object, entry: entry)))
        }
        switch object.changeState {
        case .inserted:
            entry.release(object)
            // Keep the row ID while undo may put the object back; otherwise it has no row.
            if !undoManager.isRecording { object.rowID = 0 }
        default:
            object.changeState = .deleted
            entry.deleted.append(object)
        }
        notify(.deleted, object)
    }

    /// Tells the store an object is about to change, so the next save writes it.
    ///
    /// `@Stored` setters call this for you; call it yourself before changing a
    /// plain property. A fault's content is loaded first, so that your change
    /// is not overwritten by the content loading later.
    /// ```swift
    /// store.willUpdate(list)
    /// list.cachedDuration = 0     // a property that is not @Stored
    /// ```
    public func willUpdate(_ object: StoredObject) {
        useDetector.enter("willUpdate(_:)")
        defer { useDetector.leave() }
        guard let entry = object.entry, entry.store === self else { return }
        let state = object.changeState
        if state == .loading || state == .deleted { return }
        if isSaving && state == .clean { changeDuringSave("a change to \(type(of: object)) row \(object.rowID) (a @Stored setter or willUpdate(_:))") }
        object.loadContentIfNeeded()
        if undoManager.isRecording {
            let stamp = undoManager.currentStamp()
            // An object inserted in this group has this stamp already: undoing the insert covers it.
            if object.undoStamp != stamp {
                object.undoStamp = stamp
                undoManager.record(.restoreContent(object, snapshot(of: object, entry: entry)))
            }
        }
        guard object.changeState == .clean else { return }
        object.changeState = .updated
        entry.updated.append(object)
        notify(.updated, object)
    }

    /// Whether anything was inserted, changed or deleted since the last save.
    public var hasUnsavedChanges: Bool {
        !pendingNamedBuffers.isEmpty || entriesByName.values.contains { $0.hasChanges }
    }
}

extension ObjectStore {
    private func changeDuringSaveOrClosed(_ call: String) -> Never {
        if isSaving { changeDuringSave(call) }
        fatalError("Cabinet: \(call) into the closed store '\(path)'")
    }

    private func insertMisuse(_ object: StoredObject, _ current: ClassEntry) -> Never {
        if current.store == nil {
            fatalError("Cabinet: this \(type(of: object)) (row \(object.rowID)) is a fault of a closed store: its content was never loaded, so there is nothing to insert")
        }
        fatalError("Cabinet: this \(type(of: object)) belongs to another store")
    }

    /// The entry of a class registered by inserting one of its objects. If the
    /// registration fails, insert cannot throw: the next save does.
    private func registeredOnInsert(_ type: StoredObject.Type) -> ClassEntry? {
        do {
            try register(type)
            return entry(for: type)
        } catch let error as CabinetError {
            if deferredSaveError == nil { deferredSaveError = error }
        } catch {
            if deferredSaveError == nil {
                deferredSaveError = .classConflict(className: String(describing: type), reason: "it could not be registered when one of its objects was inserted: \(error)")
            }
        }
        return nil
    }
}
