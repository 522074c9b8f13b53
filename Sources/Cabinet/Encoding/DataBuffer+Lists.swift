// A StoredList is written in the record as BNRPersistence wrote reference
// lists (a count, then row IDs) unless the buffer is one a save encodes records
// into, the store keeps checksums, and the list is longer than its inline
// limit: then the record holds a marker, the list's slot and its count, and
// the save writes the list's changed nodes to the StoredLists table
// (ListRecords, ListWriter). An undo snapshot's buffer keeps each list's tree
// beside its bytes instead (UndoListTrees), reading none of it.

extension DataBuffer {
    /// Writes `list`: inside the record while it is short (as
    /// ``writeReferences(_:)`` writes), or, when a save writes a long one, out
    /// of line, where the save writes only what changed (see ``StoredList``).
    ///
    /// ```swift
    /// override func write(to buffer: inout DataBuffer) {
    ///     buffer.writeString(title)
    ///     buffer.writeList(notes)
    /// }
    /// ```
    public mutating func writeList<Element>(_ list: StoredList<Element>) {
        if let failure = list.failure { noteListFailure(failure) }
        // An undo snapshot keeps the tree itself: it reads and copies no element.
        if let undoLists = context?.undoLists {
            writeUInt32(ListRecords.undoTreeMarker)
            writeUInt32(UInt32(undoLists.take(list.root, source: list.source)))
            writeUInt32(UInt32(list.count))
            return
        }
        context?.listCollector?.sawList = true
        if let collector = context?.listCollector, list.count > StoredList<Element>.inlineLimit,
           let slot = collector.take(list.root!, source: list.source) {
            writeUInt32(ListRecords.outOfLineMarker)
            writeUInt8(slot)
            writeUInt32(UInt32(list.count))
            return
        }
        // A save keeps this list in its record: no stored tree is its base any more (see ListNode.base).
        if context?.listCollector != nil { list.root?.base = nil }
        writeUInt32(UInt32(list.count))
        do {
            try list.forEachLeaf { leaf in
                for (offset, stored) in leaf.rowIDs.enumerated() {
                    let object = leaf.pending[offset]
                    let rowID = object?.rowID ?? stored
                    if rowID == 0, let object { noteUninserted(object) }
                    writeUInt32(rowID)
                }
            }
        } catch {
            list.fail(error)
            noteListFailure(list.failure ?? .malformedRecord(location, reason: "\(error)"))
        }
    }

    /// Reads a list written by ``writeList(_:)`` (or by ``writeReferences(_:)``):
    /// an out-of-line list loads only its root node now, the rest as it is used.
    /// Nil entries (row ID 0) of an inline list are left out, as ``readReferences(to:)`` does.
    ///
    /// ```swift
    /// override func read(from buffer: inout DataBuffer) throws {
    ///     title = try buffer.readString()
    ///     notes = try buffer.readList(of: Note.self)
    /// }
    /// ```
    /// Throws ``/CabinetStorage/CabinetError/malformedRecord(_:reason:)`` if the list's root or
    /// root node is missing or damaged, and what ``readReferences(to:)`` throws.
    public mutating func readList<Element: StoredObject>(of type: Element.Type) throws -> StoredList<Element> {
        let (resolver, entered) = try enterResolver()
        defer { resolver.leave(entered) }
        let entry = try resolver.registeredEntry(for: Element.self)
        let start = readerIndex
        let marker = try readUInt32()
        if marker == ListRecords.undoTreeMarker, let undoLists = context?.undoLists {
            return try readUndoTree(of: entry, from: undoLists)
        }
        if marker == ListRecords.outOfLineMarker {
            let slot = try readUInt8()
            let count = Int(try readUInt32())
            guard let owner = context?.ownerClassID, let row = context?.location.rowID, let store = entry.store else {
                readerIndex = start
                throw malformed("an out-of-line list outside a class's record")
            }
            let scope = ListScope(classID: owner, row: row, slot: slot)
            let source = ListSource(resolver: resolver, elementClassID: entry.metadata.classID, scope: scope, location: location)
            // Saved by an earlier block of the pool's commit group, not written yet: that list, from memory.
            if let kept = store.pendingListRoot(scope) {
                guard kept.count == count else {
                    throw source.damaged("the record counts \(count) elements, the list its commit group keeps \(kept.count)")
                }
                return StoredList(root: kept, source: source)
            }
            let root = try store.readListRoot(scope, owner: location)
            guard root.count == count else {
                throw source.damaged("the record counts \(count) elements, the list's root \(root.count)")
            }
            let node = try source.loadNode(root.root)
            guard node.count == count else {
                throw source.damaged("the root node holds \(node.count) elements, the list's root counts \(count)")
            }
            node.base = ListNodeStorage(scope: scope, id: root.root)
            return StoredList(root: node, source: source)
        }
        readerIndex = start
        let count = try readListCount(bytesPerElement: 4)
        var leaves: [ListNode] = []
        var rowIDs: [UInt32] = []
        rowIDs.reserveCapacity(min(count, ListNode.leafCapacity))
        for _ in 0..<count {
            let rowID = try readUInt32()
            if rowID == 0 { continue }
            try checkReferencedRow(rowID)
            rowIDs.append(rowID)
            if rowIDs.count == ListNode.leafCapacity {
                leaves.append(ListNode(leaf: rowIDs))
                rowIDs.removeAll(keepingCapacity: true)
            }
        }
        if !rowIDs.isEmpty { leaves.append(ListNode(leaf: rowIDs)) }
        let source = ListSource(resolver: resolver, elementClassID: entry.metadata.classID, scope: nil, location: location)
        return StoredList(root: StoredList<Element>.tree(over: leaves), source: source)
    }
}

extension DataBuffer {
    /// A list an undo snapshot kept as its tree, put back: it takes no base (see
    /// ``ListNode/base``), since putting a snapshot back replaces the list as stored now.
    fileprivate mutating func readUndoTree<Element: StoredObject>(of entry: ClassEntry, from undoLists: UndoListTrees) throws -> StoredList<Element> {
        let place = Int(try readUInt32())
        let count = Int(try readUInt32())
        guard place < undoLists.trees.count else { throw malformed("an undo snapshot names list \(place) of \(undoLists.trees.count)") }
        let tree = undoLists.trees[place]
        guard (tree.root?.count ?? 0) == count, tree.source.map({ $0.elementClassID == entry.metadata.classID }) ?? true else {
            throw malformed("an undo snapshot's list \(place) is not the list its record names")
        }
        tree.root?.base = nil
        return StoredList(root: tree.root, source: tree.source)
    }
}

/// What a save's record buffer collects from `writeList`: the lists of the
/// record being encoded that go out of line, each with its slot. The store
/// writes their nodes right after the record (``ObjectStore/writeLists``).
///
/// `@unchecked Sendable` only so that ``RecordContext`` stays `Sendable`: a
/// collector is set on the save's own buffer, which never leaves the save.
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
