/// An object's state to go back to, as an undo step keeps it: its record bytes
/// as a save writes them, except that each ``StoredList`` is kept as its tree
/// (``UndoListTrees``), not written element by element.
///
/// Why: a snapshot wrote the owner's whole list inline, so the first rename of
/// a notebook of 500,000 notes read every leaf of its list (a damaged leaf
/// anywhere then failed the rename's save), each snapshot held 2 MB of row IDs,
/// and an undo then save rewrote the whole tree. Kept as a tree, a snapshot
/// reads nothing and holds the nodes it shares with the list, and putting it
/// back gives the list the nodes it had, so a save writes only what differs.
struct UndoSnapshot {
    /// The record, with each list replaced by the place of its tree in ``lists``.
    let bytes: [UInt8]
    /// The object's lists, in the order its `write(to:)` wrote them; `nil` if it wrote none.
    let lists: UndoListTrees?
}

/// The lists of one undo snapshot, by the order `write(to:)` wrote them: each
/// list's root and where its nodes not loaded yet come from.
///
/// A node of such a tree may be one a later save deletes (the list changed
/// and was saved). So that the snapshot can always be put back, a save that
/// deletes nodes of a list first reads into each snapshot's tree the deleted
/// nodes it holds only by ID (the path an append replaced, or the whole tree of
/// a deleted owner), and once it committed marks the ones it holds in memory
/// as no longer stored (``ListWriter``, ``UndoListRegistry``).
///
/// `@unchecked Sendable` only so that ``RecordEncoder`` and ``RecordContext``
/// stay `Sendable`: it is set on the store's snapshot buffer (through its
/// encoder) and restore buffer, which never leave the store's thread.
final class UndoListTrees: @unchecked Sendable {
    struct Tree {
        let root: ListNode?
        let source: ListSource?
    }

    private(set) var trees: [Tree] = []

    /// Keeps a list and returns its place.
    func take(_ root: ListNode?, source: ListSource?) -> Int {
        trees.append(Tree(root: root, source: source))
        return trees.count - 1
    }
}
