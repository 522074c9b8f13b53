/// The undo snapshots that keep list trees, by the owners whose lists' nodes
/// they may hold: the snapshot's own object, and the owner of each list's
/// stored nodes (a list copied from another owner). A save that deletes nodes
/// of a list asks it for the trees that may hold them (``ListWriter``).
///
/// Weak: a snapshot leaves with its undo step (trimmed, or the history
/// cleared); an owner's entry drops the freed ones when it is next asked or
/// grows, and every so many registrations all entries are swept, so owners
/// whose snapshots are all gone do not pile up in a long-running store.
final class UndoListRegistry {
    private struct Owner: Hashable {
        var classID: UInt8
        var row: UInt32
    }

    private struct Weak {
        weak var lists: UndoListTrees?
    }

    private var byOwner: [Owner: [Weak]] = [:]
    /// Registrations until the next sweep of every entry.
    private var untilSweep = UndoListRegistry.sweepInterval
    private static let sweepInterval = 4_096

    var isEmpty: Bool { byOwner.isEmpty }

    /// Registers the trees of a snapshot of row `row` of class `classID`.
    func register(_ lists: UndoListTrees, classID: UInt8, row: UInt32) {
        untilSweep -= 1
        if untilSweep <= 0 { sweep() }
        var owners: Set<Owner> = [Owner(classID: classID, row: row)]
        for tree in lists.trees {
            if let scope = tree.source?.scope { owners.insert(Owner(classID: scope.classID, row: scope.row)) }
        }
        for owner in owners {
            var entry = byOwner[owner, default: []]
            // Freed snapshots go as the entry grows, so it stays about as long as the history.
            if entry.count >= 16 && entry.count.isMultiple(of: 16) { entry.removeAll { $0.lists == nil } }
            entry.append(Weak(lists: lists))
            byOwner[owner] = entry
        }
    }

    /// The trees of the snapshots still kept that may hold nodes of `scope`.
    func trees(for scope: ListScope) -> [UndoListTrees.Tree] {
        let owner = Owner(classID: scope.classID, row: scope.row)
        guard let entry = byOwner[owner] else { return [] }
        let alive = entry.compactMap(\.lists)
        if alive.count < entry.count {
            byOwner[owner] = alive.isEmpty ? nil : alive.map { Weak(lists: $0) }
        }
        return alive.flatMap(\.trees).filter { $0.root != nil }
    }

    /// Drops every freed snapshot, and the owners left with none.
    private func sweep() {
        untilSweep = Self.sweepInterval
        byOwner = byOwner.compactMapValues { entry in
            let alive = entry.filter { $0.lists != nil }
            return alive.isEmpty ? nil : alive
        }
    }
}
