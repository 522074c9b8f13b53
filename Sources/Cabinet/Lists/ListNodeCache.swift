/// Decoded list nodes kept between a pool's write blocks, by where they are stored.
///
/// Why: every write block is a context of its own, so the first block of a
/// group that appends to a big ``StoredList`` read the root, an inner node and
/// the last leaf anew (2 to 5 KiB each, checksummed and decoded) right after the
/// group before it wrote them. (Within a group the blocks take the list from
/// ``PendingLists``.) A node's record never changes while it exists (a change
/// writes a node under a fresh ID), so what a node ID decoded to stays true for
/// as long as the node is stored.
///
/// Kept true:
/// - a node enters when a block reads it, or when the save or group commit that
///   wrote it is done; a node it deletes leaves then (``ListWriter/commit()``);
/// - a fresh node ID is never one the cache holds (``ListWriter``);
/// - the whole cache is dropped when a group's commit fails (its staged nodes
///   never reach the table) and around a block that writes the tables directly
///   (an upgrade rewrites lists without ``ListWriter``).
///
/// Used by the pool's writer queue only, one block at a time, as the group is.
final class ListNodeCache {
    /// Nodes kept at most: a few lists' right-hand paths and more. Past it the cache starts afresh.
    static let capacity = 4_096

    /// What a node holds as stored: a leaf's row IDs, or an inner node's children (their counts and IDs).
    ///
    /// A struct, not an enum with a case for each: Swift marks which case such
    /// an enum holds in the high bits of its array's pointer, where
    /// LeakSanitizer does not recognize the pointer, so a cache still alive when
    /// a process exited showed every inner node it held as leaked (`make asan`:
    /// now and then, a kill-point child; see docs/CRASHPOINTS.md).
    struct Content {
        /// A leaf's row IDs; empty for an inner node.
        let rowIDs: [UInt32]
        /// An inner node's children; empty for a leaf.
        let children: [(count: Int, id: ListNodeID)]
        let isLeaf: Bool

        static func leaf(_ rowIDs: [UInt32]) -> Content { Content(rowIDs: rowIDs, children: [], isLeaf: true) }
        static func inner(_ children: [(count: Int, id: ListNodeID)]) -> Content { Content(rowIDs: [], children: children, isLeaf: false) }
    }

    private var entries: [ListNodeStorage: Content] = [:]

    var count: Int { entries.count }
    /// Nodes handed out instead of read from their records (for tests).
    private(set) var hits = 0

    /// A new node with the content stored as `storage`, if the cache holds it.
    func node(_ storage: ListNodeStorage) -> ListNode? {
        guard let content = entries[storage] else { return nil }
        hits += 1
        if content.isLeaf { return ListNode(leaf: content.rowIDs, storage: storage) }
        return ListNode(children: content.children.map { ListChild(count: $0.count, id: $0.id) }, storage: storage)
    }

    func contains(_ storage: ListNodeStorage) -> Bool { entries[storage] != nil }

    /// Keeps a node just read from its record.
    func keep(_ node: ListNode, as storage: ListNodeStorage) {
        if node.isLeaf { return keep(.leaf(node.rowIDs), as: storage) }
        var children: [(count: Int, id: ListNodeID)] = []
        children.reserveCapacity(node.children.count)
        for child in node.children {
            guard let id = child.id else { return }   // not as read: not kept
            children.append((child.count, id))
        }
        keep(.inner(children), as: storage)
    }

    /// Keeps what a node holds as stored under `storage`.
    func keep(_ content: Content, as storage: ListNodeStorage) {
        if entries.count >= Self.capacity && entries[storage] == nil { entries.removeAll(keepingCapacity: true) }
        entries[storage] = content
    }

    func forget(_ storage: ListNodeStorage) {
        entries[storage] = nil
    }

    func removeAll() {
        entries.removeAll()
    }
}
