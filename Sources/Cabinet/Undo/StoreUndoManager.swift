/// Undo and redo for everything done to a store's objects.
///
/// Foundation's `UndoManager` does not exist on Linux; this one is the store's
/// own, and it knows what a change is: every insert, delete and update is
/// recorded by the store (the `@Stored` setters and ``ObjectStore/willUpdate(_:)``
/// report updates), as the object's state before its first change in the group.
///
/// ```swift
/// store.undoManager.beginGroup(named: "Rename")
/// list.title = "Road trip"
/// song.title = "New title"
/// store.undoManager.endGroup()
/// store.undoManager.undoName         // "Rename"
/// try store.undoManager.undo()       // both objects back as they were; pending until save()
/// try store.undoManager.redo()
/// ```
/// Changes made outside an explicit group form one implicit group, which
/// closes at the next ``ObjectStore/save()`` or ``beginGroup(named:)``. Groups
/// nest: inner groups fold into the outermost one. Undo and redo work across
/// saves: undoing a saved delete puts the object back at the next save.
public final class StoreUndoManager {
    /// Set by the store as it is created and cleared when it closes (its deinit
    /// closes it too); the store owns this manager, which an app may keep longer.
    /// Safe unowned, not weak: a weak reference would give the store a side
    /// table and slow every retain of it; a read after the store is freed
    /// (which clearing at close rules out) traps instead of reading freed memory.
    unowned var store: ObjectStore? {
        didSet { if let store { storePath = store.path } }
    }
    /// The path of the store, kept after it closes so that an undo then names it.
    private var storePath = ""

    /// Whether changes are recorded. Turn it off around a bulk import: nothing is
    /// recorded (and no memory spent), and existing undo and redo steps are kept.
    @exclusivity(unchecked) public var isEnabled = true {
        didSet {
            if !isEnabled { closeGroup() }
            store?.setUndoStamp(isEnabled ? stamp : 0)
        }
    }

    /// How many groups are kept for undo; the oldest are dropped beyond it. 0 keeps all.
    ///
    /// Undo history keeps the objects it can restore alive, so the default is
    /// bounded (100 groups). A long-running service that never undoes should set
    /// ``isEnabled`` to `false`.
    public var levelsOfUndo = 100 {
        didSet { trim() }
    }

    // Touched on every recorded change; the store is confined to one thread.
    @exclusivity(unchecked) private var undoStack: [UndoGroup] = []
    @exclusivity(unchecked) private var redoStack: [UndoGroup] = []
    /// The group being recorded, explicit or implicit.
    @exclusivity(unchecked) private var openGroup: UndoGroup?
    @exclusivity(unchecked) private var nesting = 0
    @exclusivity(unchecked) private var isApplying = false
    /// Numbers the groups, so an object is snapshotted once per group.
    @exclusivity(unchecked) private(set) var stamp: UndoStamp = 0
    /// The inserts of the open group not yet in its actions: rows first...last of one class.
    @exclusivity(unchecked) private var insertRunEntry: ClassEntry?
    @exclusivity(unchecked) private var insertRunFirst: UInt32 = 0
    @exclusivity(unchecked) private var insertRunLast: UInt32 = 0

    init() {}

    /// Opens a group; every change until the matching ``endGroup()`` is undone in one step.
    /// An implicit group of earlier changes is closed first.
    public func beginGroup(named name: String? = nil) {
        if nesting == 0 {
            closeGroup()
            startGroup(named: name)
        }
        nesting += 1
    }

    /// Closes the group opened by ``beginGroup(named:)``. Unbalanced calls do nothing.
    public func endGroup() {
        guard nesting > 0 else { return }
        nesting -= 1
        if nesting == 0 { closeGroup() }
    }

    /// Whether there is something to undo (including an implicit group still open).
    public var canUndo: Bool {
        !undoStack.isEmpty || !(openGroup?.actions.isEmpty ?? true)
    }

    /// Whether there is something to redo.
    public var canRedo: Bool { !redoStack.isEmpty }

    /// The name of the group ``undo()`` would undo.
    public var undoName: String? {
        if let open = openGroup, !open.actions.isEmpty { return open.name }
        return undoStack.last?.name
    }

    /// The name of the group ``redo()`` would redo.
    public var redoName: String? { redoStack.last?.name }

    /// Undoes the last group: the same instances go back to their earlier state
    /// in one pass over the recorded snapshots. The result is pending until the next save.
    public func undo() throws {
        finishRecording()
        guard let group = undoStack.popLast() else { return }
        redoStack.append(try replay(group, cause: .undo))
    }

    /// Redoes the last undone group.
    public func redo() throws {
        finishRecording()
        guard let group = redoStack.popLast() else { return }
        undoStack.append(try replay(group, cause: .redo))
        trim()
    }

    /// Closes any open group, explicit ones included, before an undo or redo.
    private func finishRecording() {
        nesting = 0
        closeGroup()
    }

    /// Forgets every undo and redo step.
    public func removeAllActions() {
        undoStack.removeAll()
        redoStack.removeAll()
        insertRunEntry = nil
        openGroup = nil
        nesting = 0
    }

    // MARK: Recording (called by the store)

    /// Whether the store should record anything now.
    var isRecording: Bool { isEnabled && !isApplying }

    /// The stamp of the group changes go into, opening an implicit group if needed.
    func currentStamp() -> UndoStamp {
        if openGroup == nil { startGroup(named: nil) }
        return stamp
    }

    func record(_ action: UndoAction) {
        guard isRecording else { return }
        if openGroup == nil { startGroup(named: nil) }
        flushInsertRun()
        openGroup?.actions.append(action)
        if !redoStack.isEmpty { redoStack.removeAll() }
    }

    /// Records an insert: undoing it removes the row (see `UndoAction.removeRows`).
    /// Consecutive rows of one class are gathered here as plain numbers and become
    /// one action when something else is recorded or the group closes.
    func recordInsert(of rowID: UInt32, in entry: ClassEntry) {
        guard isRecording else { return }
        if openGroup == nil { startGroup(named: nil) }
        if insertRunEntry === entry && insertRunLast != UInt32.max && insertRunLast + 1 == rowID {
            insertRunLast = rowID
            return
        }
        if !redoStack.isEmpty { redoStack.removeAll() }
        flushInsertRun()
        insertRunEntry = entry
        insertRunFirst = rowID
        insertRunLast = rowID
    }

    private func flushInsertRun() {
        guard let entry = insertRunEntry else { return }
        insertRunEntry = nil
        openGroup?.actions.append(.removeRows(entry, insertRunFirst...insertRunLast))
    }

    /// Closes an implicit group (at a save). An explicit group stays open.
    func closeImplicitGroup() {
        if nesting == 0 { closeGroup() }
    }

    private func startGroup(named name: String?) {
        openGroup = UndoGroup(name: name)
        advanceStamp()
    }

    private func closeGroup() {
        guard let group = openGroup else { return }
        flushInsertRun()
        openGroup = nil
        if !group.actions.isEmpty {
            undoStack.append(group)
            trim()
        }
        // Changes after this start a new group: a new stamp snapshots objects again.
        advanceStamp()
    }

    private func advanceStamp() {
        stamp &+= 1
        if stamp == 0 {
            // 0 means "not recording". Wrapped around: no object may keep an old stamp.
            stamp = 1
            store?.clearUndoStamps()
        }
        store?.setUndoStamp(isEnabled ? stamp : 0)
    }

    /// Applies a group's actions last to first, tells observers, and returns the group that takes them back.
    private func replay(_ group: UndoGroup, cause: StoreChange.Cause) throws -> UndoGroup {
        isApplying = true
        defer { isApplying = false }
        guard let store, !store.isClosed else { throw CabinetError.storeClosed(path: store?.path ?? storePath) }
        store.useDetector.enter("undo() or redo()")
        defer { store.useDetector.leave() }
        store.beginGatheringChanges()
        var inverse: [UndoAction] = []
        inverse.reserveCapacity(group.actions.count)
        for action in group.actions.reversed() {
            try store.apply(action, inverses: &inverse)
        }
        store.postChange(cause)
        return UndoGroup(name: group.name, actions: inverse)
    }

    private func trim() {
        guard levelsOfUndo > 0, undoStack.count > levelsOfUndo else { return }
        undoStack.removeFirst(undoStack.count - levelsOfUndo)
    }
}

/// Numbers undo groups, so a `@Stored` setter can tell with one compare whether
/// its object was already recorded in the current group. Two bytes keep
/// `StoredObject` small; the store clears every live object's stamp when the
/// numbers wrap around.
@usableFromInline
typealias UndoStamp = UInt16
