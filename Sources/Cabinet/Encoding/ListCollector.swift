/// What a save's record buffer collects from `writeList`: the lists of the
/// record being encoded that go out of line, each with its slot. The store
/// writes their nodes right after the record (``ObjectStore/writeLists``).
///
/// `@unchecked Sendable` only so that ``RecordEncoder`` is: a collector
/// belongs to the encoder of a save's own buffer, which never leaves the save.
final class ListCollector: @unchecked Sendable {
    struct Collected {
        let slot: UInt8
        let root: ListNode
        let source: ListSource?
        /// The block's own root, where ``resolved(classID:row:owner:)`` made a
        /// copy: the commit that writes the copy gives it its new base too, so
        /// that the block's list, saved again after a commit inside the block,
        /// is not taken for a stale copy. Weak: a kept list holds no object of a finished block.
        weak var origin: ListNode?

        /// This list as a pool keeps it for its group's commit (``PendingLists``):
        /// whole in memory if it comes from another list's nodes (which the
        /// commit may no longer reach through this block), with row IDs for objects.
        func resolved(classID: UInt8, row: UInt32, owner: RecordLocation) throws -> Collected {
            let scope = ListScope(classID: classID, row: row, slot: slot)
            if source?.scope != scope { try root.loadSubtree(source: source) }
            let resolved = try root.resolved(in: scope, owner: owner)
            return Collected(slot: slot, root: resolved, source: source, origin: resolved === root ? nil : root)
        }
    }

    private(set) var lists: [Collected] = []
    /// Whether `writeList` was called at all (see ``ObjectStore/writesLists(_:)``).
    var sawList = false

    /// Takes a list for the next free slot; `nil` once every slot is taken (the list then stays inline).
    func take(_ root: ListNode, source: ListSource?) -> UInt8? {
        guard lists.count < Int(ListScope.slots) else { return nil }
        let slot = UInt8(lists.count)
        lists.append(Collected(slot: slot, root: root, source: source))
        return slot
    }

    /// Forgets the lists of the previous record.
    func reset() {
        lists.removeAll(keepingCapacity: true)
    }
}
