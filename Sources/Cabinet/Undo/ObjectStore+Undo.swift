// How the store takes one undo step: snapshots of objects before a change,
// and applying an action (which yields its inverse, for redo).
extension ObjectStore {
    /// The record bytes of `object` as a save would write them, its lists kept
    /// as their trees (``UndoSnapshot``): its state to go back to.
    func snapshot(of object: StoredObject, entry: ClassEntry) -> UndoSnapshot {
        // Encoded in a reused buffer, so a snapshot costs one allocation: its own bytes.
        var buffer = snapshotBuffer
        snapshotBuffer = DataBuffer()
        defer { snapshotBuffer = buffer }
        buffer.removeAll()
        let lists = entry.writesLists ? UndoListTrees() : nil
        // An encoder only for the lists: a snapshot throws for no note (the save will).
        if let lists { buffer.encoder = RecordEncoder(location: entry.location(row: object.rowID), undoLists: lists) }
        defer { buffer.encoder = nil }
        buffer.writeUInt8(entry.type.version)
        let observable = object.contentState.contains(.observable)
        if observable { object.contentState.remove(.observable) }   // not an observer's read (see encode)
        object.write(to: &buffer)
        if observable { object.contentState.insert(.observable) }
        guard let lists, !lists.trees.isEmpty else { return UndoSnapshot(bytes: buffer.allBytes, lists: nil) }
        undoListRegistry.register(lists, classID: entry.metadata.classID, row: object.rowID)
        return UndoSnapshot(bytes: buffer.allBytes, lists: lists)
    }

    /// Applies `action` and appends the actions that take it back to `inverses`
    /// (nothing when there was nothing to do: the row is already gone).
    func apply(_ action: UndoAction, inverses: inout [UndoAction]) throws {
        if case .removeRows(let entry, let rows) = action {
            for rowID in rows.reversed() {
                if let object = try objectForUndo(entry, rowID: rowID), let inverse = try apply(.remove(object), to: object) {
                    inverses.append(inverse)
                }
            }
            return
        }
        guard let object = action.object, let inverse = try apply(action, to: object) else { return }
        inverses.append(inverse)
    }

    /// Applies an action about one object and returns the action that takes it back.
    private func apply(_ action: UndoAction, to recorded: StoredObject) throws -> UndoAction? {
        guard let entry = recorded.entry ?? entry(for: type(of: recorded)) else {
            throw CabinetError.classNotRegistered(className: String(describing: type(of: recorded)))
        }
        let object = liveInstance(of: recorded, entry: entry)
        switch action {
        case .restoreContent(_, let content):
            let inverse = UndoAction.restoreContent(object, snapshot(of: object, entry: entry))
            if object.entry == nil {
                // It left while undo was off. With its row it comes back; an unsaved
                // insert deleted then has no row: only its values go back.
                guard object.rowID >= ClassMetadata.firstObjectRowID else {
                    try restore(content, into: object, entry: entry)
                    return inverse
                }
                entry.adopt(object)
            }
            try restore(content, into: object, entry: entry)
            markRestoredObjectChanged(object, entry: entry)
            return inverse
        case .remove:
            let inverse = UndoAction.restore(object, snapshot(of: object, entry: entry))
            switch object.changeState {
            case .inserted:
                // Never saved: it simply leaves, keeping its row ID for a redo.
                entry.release(object)
            case .deleted:
                break
            default:
                object.changeState = .deleted
                entry.deleted.append(object)
            }
            notify(.deleted, object)
            return inverse
        case .removeRows:
            return nil   // rows, not one object: apply(_:inverses:) takes them one by one
        case .restore(_, let content):
            if object.entry == nil { entry.adopt(object) }
            object.undoStamp = 0   // back from the history with a stale stamp: record its next change
            try restore(content, into: object, entry: entry)
            // Written in full at the next save, whether its row is still on disk or not.
            if object.changeState != .updated {
                object.changeState = .updated
                entry.updated.append(object)
            }
            notify(.inserted, object)
            return .remove(object)
        }
    }

    /// The instance an action recorded for `object` applies to: `object` itself
    /// while it is in the store; once it has left (a saved delete, an undone
    /// insert), the instance made for its row since, if any (a playlist that still
    /// lists a deleted song, read again, made a fault for the song's row). A row
    /// has one live instance; the one others already hold wins.
    private func liveInstance(of object: StoredObject, entry: ClassEntry) -> StoredObject {
        if object.entry != nil || object.rowID == 0 { return object }
        return entry.live.object(at: object.rowID) ?? object
    }

    /// The object of a row for undoing its insert: a pending delete's object as it
    /// is, otherwise the live or stored object with its content.
    private func objectForUndo(_ entry: ClassEntry, rowID: UInt32) throws -> StoredObject? {
        if let live = entry.live.object(at: rowID), live.changeState == .deleted { return live }
        return try loadedObject(entry, rowID: rowID)
    }

    /// Reads `content` into `object`, as if it had been loaded from disk.
    private func restore(_ content: UndoSnapshot, into object: StoredObject, entry: ClassEntry) throws {
        var buffer = DataBuffer()
        content.bytes.withUnsafeBytes { buffer.load($0) }
        if let lists = content.lists {
            // Named before decode does, so that it keeps the context and with it the lists.
            buffer.pointContext(at: entry, rowID: object.rowID, resolver: resolver)
            buffer.context!.undoLists = lists
        }
        let state = object.changeState
        try decode(&buffer, into: object, entry: entry, versioned: true, fromDisk: false)
        object.changeState = state
        object.contentLoadFailed = false
    }

    private func markRestoredObjectChanged(_ object: StoredObject, entry: ClassEntry) {
        if object.changeState == .clean {
            object.changeState = .updated
            entry.updated.append(object)
        }
        notify(.updated, object)
    }
}
