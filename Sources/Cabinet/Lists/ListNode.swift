/// One node of a ``StoredList``'s tree: a counted B+ tree whose leaves hold row
/// IDs and whose inner nodes hold their children's element counts, so an index
/// finds its leaf in O(log N) and an append or insert changes one leaf and the
/// nodes above it.
///
/// Nodes are shared between copies of a list and changed in place only when a
/// single list holds them (`isKnownUniquelyReferenced`); otherwise the path to
/// the change is copied first. So a list is a value, copying it costs nothing,
/// and an undo snapshot or an object's old state keeps its own tree.
///
/// A node read from disk has its ``id`` (the key it is stored under); a node
/// made or changed in memory has none until the save that writes it. Inner
/// nodes load their children on first use, through the list's ``ListSource``.
final class ListNode {
    /// Leaves hold up to this many row IDs (2 KiB): a save of an append writes one leaf of at most this.
    static let leafCapacity = 512
    /// Inner nodes are written with up to this many children (a node of 650
    /// bytes): 100,000 elements fit in three levels. Narrow, because a pool's
    /// write block that appends copies the inner node above the last leaf, and
    /// copying and freeing 128 children was a visible part of a notebook append
    /// (BENCHMARKS.md, "What the code's shape was chosen against"). A node
    /// read from disk may be wider (versions before wrote up to 128); it is
    /// read and changed as any other.
    static let innerCapacity = 32

    /// No stored tree is deeper than this (leaves of 512 under five levels of
    /// 32 children hold 2^34 elements): a deeper one read from disk is damaged,
    /// perhaps a node that names an ancestor, and reading on would never end.
    static let maximumDepth = 24

    /// `true` for a leaf.
    let isLeaf: Bool
    /// How many loads below the root this node was read (0 for a root or a node
    /// made in memory): what ``maximumDepth`` is checked against.
    var depth = 0
    /// A leaf's row IDs; 0 for an object not inserted when it was added (``pending`` holds it).
    var rowIDs: [UInt32]
    /// A leaf's objects added in memory, by position, held strongly as an array
    /// holds its elements; empty for a leaf read from disk.
    var pending: PendingObjects
    /// An inner node's children, in order.
    var children: [ListChild]
    /// The number of elements below this node.
    private(set) var count: Int
    /// Where this node is stored (its list's scope and its ID), or `nil` if it
    /// changed since it was read or written. Set by the save that writes it,
    /// once that save has committed.
    var storage: ListNodeStorage?
    /// The stored node this one was before it first changed in memory, and that
    /// node's children (their IDs): a save deletes the replaced nodes without
    /// reading them back, since a node's record never changes while it exists.
    /// `nil` for a node made in memory, or a stored one whose children were not all known.
    private(set) var replaced: (storage: ListNodeStorage, childIDs: [ListNodeID])?
    /// For the root of a list: the stored root its tree comes from (the saved
    /// tree a change started from), which a save of it requires to be the
    /// list's root on disk still, or the list is a stale copy
    /// (``CabinetError/Code-swift.struct/staleList``); `nil` for a tree made in
    /// memory, one kept in its owner's record, or one an undo put back. Set
    /// where a tree is read and by the save that writes it; carried to the new
    /// root when the root is copied, splits or gives way to its child. Meaningless below a root.
    var base: ListNodeStorage?

    init(leaf rowIDs: [UInt32], pending: PendingObjects = PendingObjects(), storage: ListNodeStorage? = nil) {
        isLeaf = true
        self.rowIDs = rowIDs
        self.pending = pending
        children = []
        count = rowIDs.count
        self.storage = storage
    }

    init(children: [ListChild], storage: ListNodeStorage? = nil) {
        isLeaf = false
        rowIDs = []
        pending = PendingObjects()
        self.children = children
        count = children.reduce(0) { $0 + $1.count }
        self.storage = storage
    }

    /// An unsaved copy to change in place (children stay shared until they change too).
    func copy() -> ListNode {
        let copy = isLeaf ? ListNode(leaf: rowIDs, pending: pending) : ListNode(children: children)
        copy.replaced = storedForm
        copy.base = base
        return copy
    }

    /// Called before this node changes: it is no longer the stored node it was (if any).
    private func willChange() {
        guard storage != nil else { return }
        replaced = storedForm
        storage = nil
    }

    /// What this node is on disk, if it is stored and its children's IDs are known.
    private var storedForm: (storage: ListNodeStorage, childIDs: [ListNodeID])? {
        guard let storage else { return replaced }
        var ids: [ListNodeID] = []
        ids.reserveCapacity(children.count)
        for child in children {
            guard let id = child.id ?? child.node?.storage?.id else { return nil }
            ids.append(id)
        }
        return (storage, ids)
    }

    /// Set by the save that wrote this node, once it committed.
    func stored(as storage: ListNodeStorage) {
        self.storage = storage
        replaced = nil
    }

    /// Set by a save that deleted this node's record while an undo snapshot
    /// holds it: it is only in memory now, and a save of it writes it anew.
    func forgetStorage() {
        storage = nil
        replaced = nil
    }

    // MARK: Reading

    /// The child at `index`, loaded through `source` if it is not in memory yet.
    func child(_ index: Int, source: ListSource?) throws -> ListNode {
        if let node = children[index].node { return node }
        guard let source, let id = children[index].id else {
            throw CabinetError.malformedRecord(RecordLocation(file: "<StoredList>"), reason: "a list node that was never loaded has no store to load it from")
        }
        guard depth < ListNode.maximumDepth else {
            throw source.damaged("node \(id) lies more than \(ListNode.maximumDepth) levels deep: a node names one above it")
        }
        let node = try source.loadNode(id)
        node.depth = depth + 1
        guard node.count == children[index].count else {
            throw source.damaged("node \(id) holds \(node.count) elements, but its parent counts \(children[index].count)")
        }
        children[index].node = node
        return node
    }

    /// Loads every node below this one not loaded yet.
    func loadSubtree(source: ListSource?) throws {
        guard !isLeaf else { return }
        for index in children.indices { try child(index, source: source).loadSubtree(source: source) }
    }

    /// The child holding element `index`, and the element's index within it.
    func locate(_ index: Int) -> (child: Int, offset: Int) {
        var offset = index
        for (position, child) in children.enumerated() {
            if offset < child.count { return (position, offset) }
            offset -= child.count
        }
        return (children.count - 1, offset + children[children.count - 1].count)
    }

    /// The leaf holding element `index`, and the element's index within it.
    func leaf(containing index: Int, source: ListSource?) throws -> (leaf: ListNode, offset: Int) {
        var node = self
        var offset = index
        while !node.isLeaf {
            let (child, inner) = node.locate(offset)
            node = try node.child(child, source: source)
            offset = inner
        }
        return (node, offset)
    }

    // MARK: Changing (only on a node no other list shares)

    /// Inserts `rowID` (or `object`, if it has no row yet) at `index`; returns a
    /// new right sibling if the node outgrew its capacity.
    func insert(_ rowID: UInt32, object: StoredObject?, at index: Int, source: ListSource?) throws -> ListNode? {
        if isLeaf { return insertInLeaf(rowID, object: object, at: index) }
        willChange()
        count += 1
        let (position, offset) = locate(index)
        let child = try uniqueChild(position, source: source)
        let sibling = try child.insert(rowID, object: object, at: offset, source: source)
        children[position] = ListChild(node: child)
        if let sibling {
            children.insert(ListChild(node: sibling), at: position + 1)
            if children.count > ListNode.innerCapacity { return splitInner(appending: position + 1 == children.count - 1) }
        }
        return nil
    }

    private func insertInLeaf(_ rowID: UInt32, object: StoredObject?, at index: Int) -> ListNode? {
        // A full leaf gets a new one for an element added at its end, so a list
        // that grows by appends has full leaves; otherwise it splits in halves.
        if rowIDs.count == ListNode.leafCapacity && index == rowIDs.count {
            return ListNode(leaf: [rowID], pending: object.map { PendingObjects([$0]) } ?? PendingObjects())
        }
        willChange()
        rowIDs.insert(rowID, at: index)
        count = rowIDs.count
        pending.insert(object, at: index)
        guard rowIDs.count > ListNode.leafCapacity else { return nil }
        let half = rowIDs.count / 2
        let right = ListNode(leaf: Array(rowIDs[half...]), pending: pending.split(at: half))
        rowIDs.removeSubrange(half...)
        count = rowIDs.count
        return right
    }

    private func splitInner(appending: Bool) -> ListNode {
        let cut = appending ? children.count - 1 : children.count / 2
        let right = ListNode(children: Array(children[cut...]))
        children.removeSubrange(cut...)
        count -= right.count
        return right
    }

    /// Removes element `index` and returns its row ID and pending object.
    /// An emptied child is dropped; the caller drops an emptied node.
    func remove(at index: Int, source: ListSource?) throws -> (rowID: UInt32, object: StoredObject?) {
        willChange()
        count -= 1
        if isLeaf {
            let object = pending.remove(at: index)
            return (rowIDs.remove(at: index), object)
        }
        let (position, offset) = locate(index)
        let child = try uniqueChild(position, source: source)
        let removed = try child.remove(at: offset, source: source)
        if child.count == 0 {
            children.remove(at: position)
        } else {
            children[position] = ListChild(node: child)
        }
        return removed
    }

    /// Puts `rowID` (or `object`) in place of element `index`.
    func replace(at index: Int, with rowID: UInt32, object: StoredObject?, source: ListSource?) throws {
        willChange()
        if isLeaf {
            rowIDs[index] = rowID
            pending.set(object, at: index)
            return
        }
        let (position, offset) = locate(index)
        let child = try uniqueChild(position, source: source)
        try child.replace(at: offset, with: rowID, object: object, source: source)
        children[position] = ListChild(node: child)
    }

    // MARK: Kept for a later save

    /// A leaf's row IDs as a save writes them: each object added in memory by
    /// its row ID. Throws for an object never inserted.
    func resolvedRowIDs(owner: RecordLocation) throws -> [UInt32] {
        guard !pending.isEmpty else { return rowIDs }
        var ids = rowIDs
        try pending.forEach { offset, object in
            if object.rowID == 0 {
                throw CabinetError.referenceToUninsertedObject(owner, targetClass: String(describing: type(of: object)))
            }
            // Written only where it differs: an object inserted before it was
            // added has its row ID here already, and the leaf's 2 KiB are then
            // shared, not copied (a pool block appends an inserted note so).
            if ids[offset] != object.rowID { ids[offset] = object.rowID }
        }
        return ids
    }

    /// This node's tree with every object added in memory replaced by its row
    /// ID: what a pool keeps of a block's list until its group's commit writes
    /// it (``PendingLists``), holding no object of the block. Stored nodes, and
    /// changed ones without objects, are shared; the others are copied (the
    /// block's own list keeps its objects). Throws for an object never
    /// inserted, as a save that wrote the node would.
    func resolved(in scope: ListScope, owner: RecordLocation) throws -> ListNode {
        // A stored node has nothing changed below it: a change to a child changes its parent first.
        if storage != nil { return self }
        let copy: ListNode
        if isLeaf {
            guard !pending.isEmpty else { return self }
            copy = ListNode(leaf: try resolvedRowIDs(owner: owner))
        } else {
            var resolvedChildren = children
            var changed = false
            for index in children.indices {
                guard let node = children[index].node else { continue }
                let resolvedNode = try node.resolved(in: scope, owner: owner)
                if resolvedNode !== node {
                    resolvedChildren[index].node = resolvedNode
                    changed = true
                }
            }
            guard changed else { return self }
            copy = ListNode(children: resolvedChildren)
        }
        copy.replaced = replaced
        copy.depth = depth
        copy.base = base
        return copy
    }

    /// The child at `position`, loaded, and copied first if another list shares it.
    private func uniqueChild(_ position: Int, source: ListSource?) throws -> ListNode {
        _ = try child(position, source: source)
        if !isKnownUniquelyReferenced(&children[position].node) {
            children[position].node = children[position].node!.copy()
        }
        return children[position].node!
    }
}

/// An inner node's reference to a child: its element count, its ID (for a
/// child not loaded yet; once loaded, the node's ``ListNode/storage`` counts),
/// and the node itself once loaded (or when made in memory).
struct ListChild {
    var count: Int
    var id: ListNodeID?
    var node: ListNode?

    init(count: Int, id: ListNodeID) {
        self.count = count
        self.id = id
    }

    init(node: ListNode) {
        count = node.count
        id = node.storage?.id
        self.node = node
    }
}

/// The key of a stored list node within its list's scope: 16 random bytes,
/// drawn when a save first writes the node (see `docs/FORMAT.md`).
struct ListNodeID: Hashable, Comparable, CustomStringConvertible {
    var high: UInt64
    var low: UInt64

    static func < (left: ListNodeID, right: ListNodeID) -> Bool {
        (left.high, left.low) < (right.high, right.low)
    }

    /// 16 bytes from the system's generator. Not `inout` a generator: the system's
    /// has size zero, and inout accesses of a zero-sized value from two threads
    /// share one address, which ThreadSanitizer reports as a race.
    static func random() -> ListNodeID {
        ListNodeID(high: UInt64.random(in: .min ... .max), low: UInt64.random(in: .min ... .max))
    }

    var description: String {
        [high, low].map { word in
            let hex = String(word, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }
}
