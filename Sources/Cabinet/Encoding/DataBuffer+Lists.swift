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
        if let undoLists = encoder?.undoLists {
            writeUInt32(ListRecords.undoTreeMarker)
            writeUInt32(UInt32(undoLists.take(list.root, source: list.source)))
            writeUInt32(UInt32(list.count))
            return
        }
        let collector = encoder?.collector
        collector?.sawList = true
        if let collector, list.count > StoredList<Element>.inlineLimit,
           let slot = collector.take(list.root!, source: list.source) {
            writeUInt32(ListRecords.outOfLineMarker)
            writeUInt8(slot)
            writeUInt32(UInt32(list.count))
            return
        }
        // A save keeps this list in its record: no stored tree is its base any more (see ListNode.base).
        if collector != nil { list.root?.base = nil }
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
            noteListFailure(list.failure ?? .malformedRecord(encoder?.location ?? location, reason: "\(error)"))
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
            guard let owner = context?.ownerClassID, let row = context?.location.rowID else {
                readerIndex = start
                throw malformed("an out-of-line list outside a class's record")
            }
            let scope = ListScope(classID: owner, row: row, slot: slot)
            let source = ListSource(resolver: resolver, elementClassID: entry.metadata.classID, scope: scope, location: location)
            return StoredList(root: try source.loadRoot(count: count), source: source)
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
