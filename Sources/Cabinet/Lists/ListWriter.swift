import CabinetStorage

/// Writes one save's out-of-line lists: for each list an owner record put out
/// of line, the nodes that are new since the list was read (with fresh IDs)
/// and its root; and deletes the nodes of the list's previous tree that the
/// new one does not keep, found by walking the old tree from its root on disk
/// down to the subtrees the new tree still shares. So an append writes one
/// leaf, the nodes above it and the root, and deletes their old versions: a
/// few KiB, whatever the list's length.
///
/// Nothing is changed in memory until the save commits (``commit()``): a
/// failed save leaves every node as it was, so a retry writes the same nodes again.
final class ListWriter {
    typealias Sink = (_ key: [UInt8], _ value: [UInt8]?) throws -> Void

    private let table: any StorageTable
    private let format: RecordFormat
    /// The backend, to name the table's location in errors (made only then: a
    /// pool's write block makes a writer for every save).
    private let backend: any StorageBackend
    private var location: String { backend.location(ofTable: ObjectStore.listsTableName) }
    /// Nodes written by this save, and where: applied to them once it committed.
    private var written: [(node: ListNode, storage: ListNodeStorage)] = []
    /// The roots of the lists this save wrote, and their trees' root on disk: their base once it committed.
    private var roots: [(node: ListNode, storage: ListNodeStorage)] = []
    /// A pool's decoded nodes (``ListNodeCache``), told once the save committed
    /// what it wrote (with the row IDs and child IDs as written) and what it deleted.
    private let cache: ListNodeCache?
    private var cached: [(storage: ListNodeStorage, content: ListNodeCache.Content)] = []
    private var deleted: [ListNodeStorage] = []
    /// The undo snapshots whose trees may hold nodes this save deletes (``UndoListTrees``).
    private let undoLists: UndoListRegistry?
    /// Nodes of those trees that this save deletes: no longer stored once it committed.
    private var unstored: [ListNode] = []
    /// On a backend other processes write, the roots this store saved (``ListRootsWritten``).
    private let writtenRoots: ListRootsWritten?

    init(table: any StorageTable, format: RecordFormat, backend: any StorageBackend, cache: ListNodeCache? = nil,
         undoLists: UndoListRegistry? = nil, writtenRoots: ListRootsWritten? = nil) {
        self.table = table
        self.format = format
        self.backend = backend
        self.cache = cache
        self.undoLists = undoLists
        self.writtenRoots = writtenRoots
    }

    func commit() {
        for node in unstored { node.forgetStorage() }
        unstored.removeAll()
        for (node, storage) in written { node.stored(as: storage) }
        for (node, storage) in roots {
            node.base = storage
            writtenRoots?.committed(storage.id, of: storage.scope)
        }
        written.removeAll()
        roots.removeAll()
        if let cache {
            for storage in deleted { cache.forget(storage) }
            for (storage, content) in cached { cache.keep(content, as: storage) }
        }
        deleted.removeAll()
        cached.removeAll()
    }

    // MARK: Reading

    static func readRoot(_ scope: ListScope, in table: any StorageTable, format: RecordFormat,
                         owner: RecordLocation) throws -> (count: Int, root: ListNodeID)? {
        try scope.rootKey.withUnsafeBytes { key in
            try table.withValue(forKey: key) { try ListRecords.decodeRoot($0, format: format, location: nodeLocation(table, owner, scope)) }
        }
    }

    static func readNode(_ storage: ListNodeStorage, in table: any StorageTable, format: RecordFormat,
                         owner: RecordLocation) throws -> ListNode? {
        try storage.scope.nodeKey(storage.id).withUnsafeBytes { key in
            try table.withValue(forKey: key) {
                try ListRecords.decodeNode($0, storage: storage, format: format, location: nodeLocation(table, owner, storage.scope, storage.id))
            }
        }
    }

    /// Where a list record is, for errors: the table, the owner's class and row, the list and node.
    private static func nodeLocation(_ table: any StorageTable, _ owner: RecordLocation, _ scope: ListScope,
                                     _ id: ListNodeID? = nil) -> RecordLocation {
        RecordLocation(file: "\(table.path) [list \(scope.slot)\(id.map { ", node \($0)" } ?? "")]", className: owner.className, rowID: owner.rowID)
    }

    // MARK: Writing

    /// Writes the lists `collected` from the record of `owner` (row `row` of class
    /// `classID`), and deletes the trees of the owner's other slots unless the row is new.
    func write(_ collected: [ListCollector.Collected], classID: UInt8, row: UInt32, isNew: Bool,
               owner: RecordLocation, to sink: Sink) throws {
        // A list that moves to another slot of the same row (an upgrade that
        // reorders lists, an owner whose earlier list went inline) is loaded
        // whole before any slot's old tree is deleted, which would take its nodes.
        for list in collected where list.source?.scope != ListScope(classID: classID, row: row, slot: list.slot) {
            try list.root.loadSubtree(source: list.source)
        }
        var used = Set<UInt8>()
        for list in collected {
            used.insert(list.slot)
            try write(list, scope: ListScope(classID: classID, row: row, slot: list.slot), isNew: isNew, owner: owner, to: sink)
        }
        if !isNew { try deleteLists(classID: classID, row: row, except: used, owner: owner, to: sink) }
    }

    /// Deletes every out-of-line list of row `row` but those in `slots`: the
    /// owner was deleted, or writes those lists inline now.
    func deleteLists(classID: UInt8, row: UInt32, except slots: Set<UInt8> = [], owner: RecordLocation, to sink: Sink) throws {
        for slot in 0..<ListScope.slots where !slots.contains(slot) {
            let scope = ListScope(classID: classID, row: row, slot: slot)
            guard let old = try ListWriter.readRoot(scope, in: table, format: format, owner: owner) else { continue }
            var none = KeptNodes()
            var doomed: [ListNodeID] = []
            try deleteTree(old.root, scope: scope, keeping: &none, owner: owner, into: &doomed)
            try delete(doomed, scope: scope, owner: owner, to: sink)
            try sink(scope.rootKey, nil)
        }
    }

    private func write(_ list: ListCollector.Collected, scope: ListScope, isNew: Bool, owner: RecordLocation, to sink: Sink) throws {
        let root = list.root
        // A list read from elsewhere (another owner's, or an inline one) is all new here: load what it has not.
        if list.source?.scope != scope { try root.loadSubtree(source: list.source) }
        let old = isNew ? nil : try ListWriter.readRoot(scope, in: table, format: format, owner: owner)
        // A copy of the list taken before a later save of it: whatever it changed
        // since, saving it would drop that save's changes (see ListNode.base).
        if !isNew, let base = root.base, base.scope == scope, base.id != old?.root,
           !(old.map { writtenRoots?.unconfirmed($0.root, of: scope, from: base.id) ?? false } ?? false) {
            let now = old.map { "its root is node \($0.root) now" } ?? "it is no longer stored out of line"
            if let writtenRoots, let old, !writtenRoots.wrote(old.root, of: scope) {
                // Another process saved the list since this one read it: a conflict, which
                // refresh(discardingConflicts:) settles, as for any record both saves change.
                throw CabinetError.saveConflict(path: backend.path, reason: "both changed the list \(scope) of \(owner) (\(now))")
            }
            throw CabinetError.staleList(owner, reason: "\(scope): the copy comes from the tree under node \(base.id), but a later save replaced it (\(now))")
        }
        if let old, root.storage == ListNodeStorage(scope: scope, id: old.root), root.count == old.count {
            return rooted(list, at: ListNodeStorage(scope: scope, id: old.root))
        }
        var kept = KeptNodes()
        var replaced: [ListNodeID: [ListNodeID]] = [:]
        collectKept(root, scope: scope, into: &kept, replaced: &replaced)
        kept.seal()
        if let old {
            var doomed: [ListNodeID] = []
            try deleteTree(old.root, scope: scope, keeping: &kept, known: replaced, owner: owner, into: &doomed)
            try delete(doomed, scope: scope, owner: owner, to: sink)
        }
        // Every subtree the new tree shares must still be on disk: a copy of the
        // list taken before its last save may share subtrees that save removed.
        if let lost = kept.firstNotFound {
            throw CabinetError.staleList(owner, reason: "\(scope): node \(lost) is no longer stored")
        }
        let rootID = try writeNodes(root, scope: scope, kept: kept, owner: owner, to: sink)
        try sink(scope.rootKey, ListRecords.encodeRoot(count: root.count, root: rootID, format: format))
        writtenRoots?.writing(rootID, of: scope, base: root.base?.id)
        rooted(list, at: ListNodeStorage(scope: scope, id: rootID))
    }

    /// Notes that the save leaves `list`'s tree on disk under root `storage`:
    /// its base once the save committed (and its pool block's own root's, see ``ListCollector/Collected/origin``).
    private func rooted(_ list: ListCollector.Collected, at storage: ListNodeStorage) {
        roots.append((list.root, storage))
        if let origin = list.origin { roots.append((origin, storage)) }
    }

    /// The IDs of the largest subtrees of `node` already stored in `scope` (those
    /// the save keeps as they are), and the children of the stored nodes of
    /// `scope` that the new tree's changed nodes replace.
    private func collectKept(_ node: ListNode, scope: ListScope, into kept: inout KeptNodes,
                             replaced: inout [ListNodeID: [ListNodeID]]) {
        if let storage = node.storage, storage.scope == scope {
            kept.insert(storage.id)
            return
        }
        if let old = node.replaced, old.storage.scope == scope { replaced[old.storage.id] = old.childIDs }
        for child in node.children {
            if let loaded = child.node {
                collectKept(loaded, scope: scope, into: &kept, replaced: &replaced)
            } else if let id = child.id {
                kept.insert(id)   // not loaded: unchanged since read from this scope
            }
        }
    }

    /// Collects into `doomed` the nodes of the tree under `id` that `kept` does
    /// not keep, and marks the kept ones it meets as found (still on disk). A
    /// node in `known` (one the new tree replaces, whose children the list
    /// read) is not read again: a node's record never changes while it exists.
    private func deleteTree(_ id: ListNodeID, scope: ListScope, keeping kept: inout KeptNodes,
                            known: [ListNodeID: [ListNodeID]] = [:], owner: RecordLocation,
                            depth: Int = 0, into doomed: inout [ListNodeID]) throws {
        if kept.markFound(id) { return }
        guard depth <= ListNode.maximumDepth else {
            throw CabinetError.malformedRecord(owner, reason: "\(scope): node \(id) lies more than \(ListNode.maximumDepth) levels deep: a node names one above it")
        }
        let children: [ListNodeID]
        if let childIDs = known[id] {
            children = childIDs
        } else {
            let storage = ListNodeStorage(scope: scope, id: id)
            guard let node = try ListWriter.readNode(storage, in: table, format: format, owner: owner) else {
                throw CabinetError.malformedRecord(owner, reason: "\(scope): node \(id) is missing from \(location)")
            }
            children = node.children.map { $0.id! }
        }
        doomed.append(id)
        for child in children {
            try deleteTree(child, scope: scope, keeping: &kept, known: known, owner: owner, depth: depth + 1, into: &doomed)
        }
    }

    /// Deletes the nodes `doomed` of `scope`, once the undo snapshots that hold
    /// them have them in memory (``keepForUndo(_:scope:owner:)``).
    private func delete(_ doomed: [ListNodeID], scope: ListScope, owner: RecordLocation, to sink: Sink) throws {
        try keepForUndo(doomed, scope: scope, owner: owner)
        for id in doomed {
            try sink(scope.nodeKey(id), nil)
            if cache != nil { deleted.append(ListNodeStorage(scope: scope, id: id)) }
        }
    }

    /// Writes the nodes of `node`'s tree not stored in `scope` yet, children first; returns `node`'s ID.
    private func writeNodes(_ node: ListNode, scope: ListScope, kept: KeptNodes, owner: RecordLocation,
                            to sink: Sink) throws -> ListNodeID {
        if let storage = node.storage, storage.scope == scope { return storage.id }
        var rowIDs: [UInt32] = []
        var childIDs: [ListNodeID] = []
        if node.isLeaf {
            rowIDs = try node.resolvedRowIDs(owner: owner)
        } else {
            childIDs = try node.children.map { child in
                if let loaded = child.node { return try writeNodes(loaded, scope: scope, kept: kept, owner: owner, to: sink) }
                return child.id!
            }
        }
        let id = try freshID(scope: scope, avoiding: kept, owner: owner)
        try sink(scope.nodeKey(id), ListRecords.encode(node, rowIDs: rowIDs, childIDs: childIDs, format: format))
        let storage = ListNodeStorage(scope: scope, id: id)
        written.append((node, storage))
        if cache != nil {
            cached.append((storage, node.isLeaf ? .leaf(rowIDs) : .inner(zip(node.children, childIDs).map { ($0.count, $1) })))
        }
        return id
    }

    /// A random node ID no node of `scope` has (on disk, kept, or written by this save).
    private func freshID(scope: ListScope, avoiding kept: KeptNodes, owner: RecordLocation) throws -> ListNodeID {
        // Node IDs are random: nothing a client chooses can make two nodes share one.
        while true {
            let id = ListNodeID.random()
            let storage = ListNodeStorage(scope: scope, id: id)
            // Nor one the pool's cache holds: a node it deleted stays there until this save commits.
            if kept.contains(id) || written.contains(where: { $0.storage == storage }) || cache?.contains(storage) == true { continue }
            let taken = try scope.nodeKey(id).withUnsafeBytes { key in try table.withValue(forKey: key) { _ in true } } ?? false
            if !taken { return id }
        }
    }
}

// MARK: Undo snapshots

extension ListWriter {
    /// Before this save deletes `doomed` of `scope`: reads into every undo
    /// snapshot's tree the doomed nodes it names without holding them (the
    /// path an append replaced, the whole tree of a deleted owner), so that
    /// putting the snapshot back never needs a deleted node; and notes the
    /// doomed nodes the trees hold, which are only in memory once the save
    /// committed (``commit()``). Nodes several snapshots share are walked once.
    fileprivate func keepForUndo(_ doomed: [ListNodeID], scope: ListScope, owner: RecordLocation) throws {
        guard let undoLists, !doomed.isEmpty, !undoLists.isEmpty else { return }
        let trees = undoLists.trees(for: scope)
        guard !trees.isEmpty else { return }
        let doomed = Set(doomed)
        var visited = Set<ObjectIdentifier>()
        for tree in trees {
            guard let root = tree.root else { continue }
            // Nodes not loaded are named in the scope the tree was read from; only that one's can be doomed here.
            try keepForUndo(root, readable: tree.source?.scope == scope, doomed: doomed, scope: scope,
                            owner: owner, visited: &visited)
        }
    }

    private func keepForUndo(_ node: ListNode, readable: Bool, doomed: Set<ListNodeID>, scope: ListScope,
                             owner: RecordLocation, visited: inout Set<ObjectIdentifier>) throws {
        guard visited.insert(ObjectIdentifier(node)).inserted else { return }
        if let storage = node.storage, storage.scope == scope, doomed.contains(storage.id) { unstored.append(node) }
        for index in node.children.indices {
            if node.children[index].node == nil {
                guard readable, let id = node.children[index].id, doomed.contains(id) else { continue }
                node.children[index].node = try readForUndo(id, under: node, at: index, scope: scope, owner: owner)
            }
            try keepForUndo(node.children[index].node!, readable: readable, doomed: doomed, scope: scope,
                            owner: owner, visited: &visited)
        }
    }

    /// Child `index` of `parent`, read now, as a list loads it (checked against the parent's count and depth).
    private func readForUndo(_ id: ListNodeID, under parent: ListNode, at index: Int, scope: ListScope,
                             owner: RecordLocation) throws -> ListNode {
        guard parent.depth < ListNode.maximumDepth else {
            throw CabinetError.malformedRecord(owner, reason: "\(scope): node \(id) lies more than \(ListNode.maximumDepth) levels deep: a node names one above it")
        }
        guard let node = try ListWriter.readNode(ListNodeStorage(scope: scope, id: id), in: table, format: format, owner: owner) else {
            throw CabinetError.malformedRecord(owner, reason: "\(scope): node \(id), kept by an undo step, is missing from \(location)")
        }
        guard node.count == parent.children[index].count else {
            throw CabinetError.malformedRecord(owner, reason: "\(scope): node \(id) holds \(node.count) elements, but its parent counts \(parent.children[index].count)")
        }
        node.depth = parent.depth + 1
        return node
    }
}
