/// The out-of-line lists a pool's write blocks saved and the group has not
/// written yet: each owner's lists as its latest save collected them, kept in
/// memory until the group's commit writes them all at once (``flush(_:to:)``).
///
/// Why: blocks that append to one big ``StoredList`` one after another (a
/// service's `POST /notebooks/:id/notes`) each rewrote the list's last leaf,
/// the inner nodes above it and its root, encoded and checksummed, and the next
/// block replaced them all: most of an append's work, for records no commit
/// ever wrote. Now a block's save stages its owner's record
/// and hands its lists here, and the group's commit writes each changed list
/// once, in the same journal as everything else the group staged. So a group
/// is still one save, all or nothing.
///
/// Kept true:
/// - a later block reads such a list from here (``root(_:)``), never from the
///   table, whose root and nodes are still the committed ones;
/// - what the commit will write for them counts towards the group's size (``bytes``);
/// - a block in which the group was committed (before an upgrade or a
///   compaction, or at the group's size) writes its lists into the staging from
///   then on, as a save outside a pool does: a list it read before that commit
///   may name nodes the commit replaced, which its own save must refuse
///   (``CabinetError/Code-swift.struct/staleList``), not the group's commit;
/// - a save that fails puts back what it changed here (``snapshot()``, ``restore(_:)``);
/// - an owner deleted takes its entry with it (its save deletes its committed
///   trees, as always); one whose lists went back into its record keeps an
///   entry with none, and the commit deletes its committed trees;
/// - a commit that fails drops everything (its blocks fail with it), and one
///   inside a block (before an upgrade or a compaction) flushes first.
///
/// A leaf here holds row IDs only (``ListNode/resolved(in:owner:)``): no object
/// of a finished block is kept alive, and an object added without being
/// inserted fails its own block's save, not the group. What only the commit can
/// find (a node of the committed tree that is damaged) fails the group, as a
/// failed write does: every block in it is told, and nothing of it is written.
///
/// Used by the pool's writer queue only, one block at a time, as the group is.
final class PendingLists {
    struct Owner: Hashable, Comparable {
        var classID: UInt8
        var row: UInt32

        static func < (left: Owner, right: Owner) -> Bool { (left.classID, left.row) < (right.classID, right.row) }
    }

    struct Entry {
        /// The owner's out-of-line lists, by slot, as its latest save wrote its record.
        var lists: [ListCollector.Collected]
        /// The owner's record, named in errors.
        var location: RecordLocation
        /// Whether the owner was inserted in this group (no list of it is committed).
        var isNew: Bool
        /// About what the commit will write for these lists: their nodes not stored yet.
        var bytes: Int
    }

    private var entries: [Owner: Entry] = [:]
    /// Owners' lists written by commits (tests count them).
    private(set) var written = 0
    /// About what the commit will write for the kept lists: counted with the
    /// group's staged bytes against ``WriteGroup/maxBytes``, so a group of blocks
    /// that copy big lists still commits before its journal and memory grow past it.
    private(set) var bytes = 0

    var isEmpty: Bool { entries.isEmpty }

    /// Keeps `lists` as the owner's lists until the group's commit (replacing what an earlier block kept).
    func keep(_ lists: [ListCollector.Collected], classID: UInt8, row: UInt32, isNew: Bool, location: RecordLocation) {
        let owner = Owner(classID: classID, row: row)
        let size = lists.reduce(0) { $0 + Self.unstoredBytes($1.root, in: ListScope(classID: classID, row: row, slot: $1.slot)) }
        let earlier = entries.updateValue(Entry(lists: lists, location: location, isNew: entries[owner]?.isNew ?? isNew, bytes: size),
                                          forKey: owner)
        bytes += size - (earlier?.bytes ?? 0)
    }

    /// Forgets the owner's lists: it was deleted (its save deletes its committed trees).
    func drop(classID: UInt8, row: UInt32) {
        bytes -= entries.removeValue(forKey: Owner(classID: classID, row: row))?.bytes ?? 0
    }

    /// The encoded size of the nodes under `node` not stored in `scope` yet (changed
    /// in memory, or stored under another owner's list), as ``ListRecords`` writes them.
    private static func unstoredBytes(_ node: ListNode, in scope: ListScope) -> Int {
        if let storage = node.storage, storage.scope == scope { return 0 }
        if node.isLeaf { return 5 + 4 * node.rowIDs.count }
        return node.children.reduce(5 + 20 * node.children.count) { total, child in
            total + (child.node.map { unstoredBytes($0, in: scope) } ?? 0)
        }
    }

    /// The root node of the list in `scope` as an earlier block saved it, if one did.
    func root(_ scope: ListScope) -> ListNode? {
        entries[Owner(classID: scope.classID, row: scope.row)]?.lists.first { $0.slot == scope.slot }?.root
    }

    /// What a save may change, to put back if it fails.
    func snapshot() -> (entries: [Owner: Entry], bytes: Int) { (entries, bytes) }

    func restore(_ snapshot: (entries: [Owner: Entry], bytes: Int)) { (entries, bytes) = snapshot }

    func removeAll() {
        entries.removeAll()
        bytes = 0
    }

    /// Writes every kept list through `writer` (the group's staged view of the
    /// lists table), owners in order so that every run writes the same, and
    /// empties itself. Thrown errors fail the group's commit.
    func flush(_ writer: ListWriter, to sink: ListWriter.Sink) throws {
        defer { removeAll() }
        for (owner, entry) in entries.sorted(by: { $0.key < $1.key }) {
            try writer.write(entry.lists, classID: owner.classID, row: owner.row, isNew: entry.isNew, owner: entry.location, to: sink)
            written += 1
        }
    }
}
