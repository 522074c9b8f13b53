/// One step of an undo group, and how to take it back.
///
/// Applying an action returns its inverse, so undoing a group yields the redo
/// group and redoing it yields the undo group again.
enum UndoAction {
    /// Put `content` (a record, as saved) back into `object`, in place: undoes an update.
    case restoreContent(StoredObject, UndoSnapshot)
    /// Take `object` out of the store: redoes a delete.
    case remove(StoredObject)
    /// Take the objects of rows out of the store, the live instances or the ones on
    /// disk, last row first: undoes inserts without keeping the inserted objects
    /// alive in the undo history. Consecutive inserts of a class share one action,
    /// so a bulk import of a million objects is one range, not a million entries.
    case removeRows(ClassEntry, ClosedRange<UInt32>)
    /// Put `object` back into the store at its row, with `content`: undoes a delete (or redoes an insert).
    case restore(StoredObject, UndoSnapshot)

    /// The object the action is about; `nil` for a row whose object is not in memory.
    var object: StoredObject? {
        switch self {
        case .restoreContent(let object, _), .remove(let object), .restore(let object, _): return object
        case .removeRows: return nil
        }
    }
}

/// A named list of actions recorded together, undone together.
final class UndoGroup {
    let name: String?
    @exclusivity(unchecked) var actions: [UndoAction] = []

    init(name: String?, actions: [UndoAction] = []) {
        self.name = name
        self.actions = actions
    }
}
