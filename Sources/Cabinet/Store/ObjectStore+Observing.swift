/// What changed in a store, and why, as told to observers.
///
/// ```swift
/// let token = store.addObserver { change in
///     if change.cause == .undo { print("undone:", change.updated.count, "objects") }
/// }
/// store.removeObserver(token)
/// ```
public struct StoreChange {
    /// Why the objects changed.
    public enum Cause: Sendable, Equatable {
        /// The app changed them (insert, delete, a property set or `willUpdate`).
        case edit
        /// ``StoreUndoManager/undo()`` put them back.
        case undo
        /// ``StoreUndoManager/redo()`` applied them again.
        case redo
    }

    public let cause: Cause
    /// Objects added to the store (for undo and redo: put back).
    public let inserted: [StoredObject]
    /// Objects whose content changed.
    public let updated: [StoredObject]
    /// Objects taken out of the store.
    public let deleted: [StoredObject]
}

/// Identifies an observer for ``ObjectStore/removeObserver(_:)``.
public struct StoreObserverToken: Hashable, Sendable {
    let id: Int
}

extension ObjectStore {
    /// Calls `handler` after every change: each edit as it happens, and each undo
    /// or redo once, with every object it touched. Keep the token to remove it.
    @discardableResult
    public func addObserver(_ handler: @escaping (StoreChange) -> Void) -> StoreObserverToken {
        nextObserverID += 1
        observers.append((nextObserverID, handler))
        return StoreObserverToken(id: nextObserverID)
    }

    /// Stops calling the observer `token` names.
    public func removeObserver(_ token: StoreObserverToken) {
        observers.removeAll { $0.id == token.id }
    }

    enum ChangeKind { case inserted, updated, deleted }

    /// Tells observers about one object: at once for an edit, gathered for an undo or redo.
    func notify(_ kind: ChangeKind, _ object: StoredObject) {
        guard !observers.isEmpty else { return }
        if let pending = pendingChange {
            switch kind {
            case .inserted: pendingChange = (pending.0 + [object], pending.1, pending.2)
            case .updated: pendingChange = (pending.0, pending.1 + [object], pending.2)
            case .deleted: pendingChange = (pending.0, pending.1, pending.2 + [object])
            }
            return
        }
        let change = StoreChange(cause: .edit, inserted: kind == .inserted ? [object] : [],
                                 updated: kind == .updated ? [object] : [], deleted: kind == .deleted ? [object] : [])
        for observer in observers { observer.handler(change) }
    }

    /// Starts gathering changes for an undo or redo.
    func beginGatheringChanges() {
        if !observers.isEmpty { pendingChange = ([], [], []) }
    }

    /// Posts what an undo or redo changed.
    func postChange(_ cause: StoreChange.Cause) {
        guard let pending = pendingChange else { return }
        pendingChange = nil
        let change = StoreChange(cause: cause, inserted: pending.0, updated: pending.1, deleted: pending.2)
        for observer in observers { observer.handler(change) }
    }
}
