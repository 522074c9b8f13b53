/// An ordered to-many relationship that stays fast at any size: an array of
/// objects to your code, a tree of small records in the store.
///
/// ```swift
/// final class Notebook: StoredObject {
///     @Stored var title = ""
///     @Stored var notes = StoredList<Note>()
///
///     override func read(from buffer: inout DataBuffer) throws {
///         title = try buffer.readString()
///         notes = try buffer.readList(of: Note.self)
///     }
///     override func write(to buffer: inout DataBuffer) {
///         buffer.writeString(title)
///         buffer.writeList(notes)
///     }
/// }
/// notebook.notes.append(note)        // a save writes one leaf and the nodes above it
/// for note in notebook.notes.prefix(20) { print(note.title) }
/// ```
/// A `[Note]` written with ``DataBuffer/writeReferences(_:)`` is rewritten
/// whole by every save of its owner: 400 KB for 100,000 notes. A `StoredList`
/// of more than ``inlineLimit`` elements is kept out of the record, as a
/// counted B+ tree in the store's `StoredLists` table, and a save writes only
/// the nodes that changed: for an append, one leaf (at most 2 KiB) and the
/// nodes above it. Reading the owner reads none of it; elements load as they
/// are used, a leaf (512 row IDs) at a time. Small lists, lists in a
/// ``RecordFormat/plain`` store, and lists in buffers that are not records
/// (named buffers) are written as BNRPersistence wrote lists:
/// a count and row IDs, which ``DataBuffer/readList(of:)`` and
/// ``DataBuffer/readReferences(to:)`` both read. So a `[Note]` property becomes
/// a `StoredList<Note>` without converting the store. An undo snapshot keeps
/// the list's tree itself, reading none of it.
///
/// It is a value, like an array: copies are independent (and cost nothing until
/// one changes), and `==` compares elements by identity. Elements are faults
/// until a `@Stored` property of theirs is read, as with `readReferences`.
/// A copy taken before a later save of the same list can't be saved over it
/// (``/CabinetStorage/CabinetError/Code-swift.struct/staleList``): it would drop that save's changes.
///
/// If a part of the list cannot be read (a damaged or missing node), reading an
/// element of it gives a new, empty `Element()` that belongs to no store, the
/// error goes to ``ObjectStore/faultErrorHandler``, and the list remembers it:
/// changes to it are ignored and saving its owner throws the error, so nothing
/// is written from a list only partly known. ``loadAll()`` throws instead.
public struct StoredList<Element: StoredObject> {
    /// Lists up to this long are written inside their owner's record; longer ones out of line.
    public static var inlineLimit: Int { 256 }

    /// The tree; `nil` when empty.
    var root: ListNode?
    /// Where nodes not loaded yet come from; `nil` for a list made in memory.
    var source: ListSource?
    /// The first error loading a part of the list, if any (see the type's description);
    /// kept by the source, so every copy of the list knows it.
    var failure: CabinetError? { source?.failure }

    /// An empty list.
    public init() {}

    init(root: ListNode?, source: ListSource?) {
        self.root = root
        self.source = source
    }

    /// A list of `elements`, in order.
    ///
    /// ```swift
    /// notebook.notes = StoredList(notes)
    /// ```
    public init<Elements: Sequence>(_ elements: Elements) where Elements.Element == Element {
        var leaves: [ListNode] = []
        var rowIDs: [UInt32] = []
        var objects: [StoredObject] = []
        func closeLeaf() {
            guard !rowIDs.isEmpty else { return }
            leaves.append(ListNode(leaf: rowIDs, pending: PendingObjects(objects)))
            rowIDs = []; objects = []
        }
        for element in elements {
            rowIDs.append(element.rowID)
            objects.append(element)
            if rowIDs.count == ListNode.leafCapacity { closeLeaf() }
        }
        closeLeaf()
        root = StoredList.tree(over: leaves)
    }

    /// The tree above `nodes` (one level of them), built with full inner nodes.
    static func tree(over nodes: [ListNode]) -> ListNode? {
        var level = nodes
        while level.count > 1 {
            level = stride(from: 0, to: level.count, by: ListNode.innerCapacity).map { start in
                ListNode(children: level[start..<Swift.min(start + ListNode.innerCapacity, level.count)].map { ListChild(node: $0) })
            }
        }
        return level.first
    }

    /// Loads every part of the list not loaded yet, throwing the first error
    /// instead of reporting it (see the type's description).
    ///
    /// ```swift
    /// try notebook.notes.loadAll()
    /// ```
    public mutating func loadAll() throws {
        if let failure { throw failure }
        try root?.loadSubtree(source: source)
    }

    /// The row IDs of the list, in order (0 for an element not inserted yet), loading every leaf.
    func forEachLeaf(_ body: (ListNode) throws -> Void) throws {
        guard let root else { return }
        try StoredList.visitLeaves(root, source: source, body)
    }

    private static func visitLeaves(_ node: ListNode, source: ListSource?, _ body: (ListNode) throws -> Void) throws {
        if node.isLeaf { return try body(node) }
        for index in node.children.indices { try visitLeaves(node.child(index, source: source), source: source, body) }
    }

    // MARK: Failures

    /// Reports `error` once and remembers it; later changes are ignored and the owner's save throws it.
    func fail(_ error: Error) {
        guard let source, source.failure == nil else { return }
        let cabinetError = error as? CabinetError ?? .malformedRecord(source.location, reason: "\(error)")
        source.failure = cabinetError
        source.report(cabinetError)
    }

    /// The element at a leaf position: the object added in memory, or the
    /// store's live object (or a fault) for a row ID read from disk.
    func object(rowID: UInt32, pending: StoredObject?) -> Element {
        if let pending { return unsafeDowncast(pending, to: Element.self) }
        guard let source, let entry = source.resolver.entry(for: Element.self) else {
            // Only a closed store's list gets here (a list made in memory holds its objects).
            fail(CabinetError.storeClosed(path: source?.location.file ?? "<StoredList>"))
            return Element()
        }
        do {
            return try ObjectStore.typed(entry.object(at: rowID), as: Element.self)
        } catch {
            fail(error)
            return Element()
        }
    }
}

extension StoredList: RandomAccessCollection, MutableCollection {
    public typealias Indices = Range<Int>

    public var startIndex: Int { 0 }
    public var endIndex: Int { root?.count ?? 0 }
    public var indices: Range<Int> { 0..<count }

    /// The number of elements: O(1), kept in the tree's root. Written out so
    /// that a call from inside the generic list (each insert and append checks
    /// its index against it) does not go through the standard library's
    /// unspecialized `distance(from:to:)`, which walks the indices.
    public var count: Int { root?.count ?? 0 }
    public var isEmpty: Bool { count == 0 }

    /// The element at `position`: O(log N), loading its leaf if need be.
    public subscript(position: Int) -> Element {
        get {
            precondition(position >= 0 && position < count, "StoredList index \(position) out of range 0..<\(count)")
            do {
                let (leaf, offset) = try root!.leaf(containing: position, source: source)
                return object(rowID: leaf.rowIDs[offset], pending: leaf.pending[offset])
            } catch {
                fail(error)
                return Element()
            }
        }
        set {
            precondition(position >= 0 && position < count, "StoredList index \(position) out of range 0..<\(count)")
            change { root, source in
                try root.replace(at: position, with: newValue.rowID, object: newValue, source: source)
            }
        }
    }

    /// Runs `body` on a root no other list shares (copying it first if need be),
    /// unless a part of the list failed to load; a failure is reported and remembered.
    private mutating func change(_ body: (ListNode, ListSource?) throws -> Void) {
        guard failure == nil, root != nil else { return }
        if !isKnownUniquelyReferenced(&root!) { root = root!.copy() }
        do {
            try body(root!, source)
        } catch {
            fail(error)
        }
    }
}

extension StoredList: RangeReplaceableCollection {
    /// Replaces the elements in `range` with `newElements`, one O(log N) step per element.
    public mutating func replaceSubrange<C: Collection>(_ range: Range<Int>, with newElements: C) where C.Element == Element {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "StoredList range \(range) out of range 0..<\(count)")
        guard failure == nil else { return }
        if range.lowerBound == 0 && range.upperBound == count && source == nil {
            self = StoredList(newElements)
            return
        }
        for position in range.reversed() { remove(at: position) }
        var position = range.lowerBound
        for element in newElements {
            insert(element, at: position)
            position += 1
        }
    }

    /// Inserts `element` at `position`: O(log N); writes one leaf and the nodes above it.
    public mutating func insert(_ element: Element, at position: Int) {
        precondition(position >= 0 && position <= count, "StoredList index \(position) out of range 0...\(count)")
        guard failure == nil else { return }
        guard root != nil else {
            root = ListNode(leaf: [element.rowID], pending: PendingObjects([element as StoredObject]))
            return
        }
        if !isKnownUniquelyReferenced(&root!) { root = root!.copy() }
        do {
            if let sibling = try root!.insert(element.rowID, object: element, at: position, source: source) {
                let parent = ListNode(children: [ListChild(node: root!), ListChild(node: sibling)])
                parent.base = root!.base
                root = parent
            }
        } catch {
            fail(error)
        }
    }

    /// Appends `element`: O(log N); writes one leaf and the nodes above it.
    public mutating func append(_ element: Element) {
        insert(element, at: count)
    }

    /// Removes and returns the element at `position`: O(log N).
    @discardableResult
    public mutating func remove(at position: Int) -> Element {
        precondition(position >= 0 && position < count, "StoredList index \(position) out of range 0..<\(count)")
        guard failure == nil else { return Element() }
        if !isKnownUniquelyReferenced(&root!) { root = root!.copy() }
        do {
            let (rowID, pending) = try root!.remove(at: position, source: source)
            // An inner root left with one child gives way to it; an empty list has no tree.
            while let current = root, !current.isLeaf, current.children.count <= 1 {
                root = current.children.isEmpty ? nil : try StoredList.promote(onlyChildOf: current, source: source)
            }
            if root?.count == 0 { root = nil }
            return object(rowID: rowID, pending: pending)
        } catch {
            fail(error)
            return Element()
        }
    }

    /// The one child of `root`, as the new root: it takes the root's base (see
    /// ``ListNode/base``), on a copy if another list shares it.
    private static func promote(onlyChildOf root: ListNode, source: ListSource?) throws -> ListNode {
        var child = try root.child(0, source: source)
        root.children[0].node = nil   // `root` is this list's own and goes: only other lists may still hold the child
        if !isKnownUniquelyReferenced(&child) { child = child.copy() }
        child.base = root.base
        return child
    }

    /// Removes every element, keeping nothing of the tree.
    public mutating func removeAll(keepingCapacity keepCapacity: Bool = false) {
        guard failure == nil else { return }
        root = nil
    }

    /// Removes the elements for which `shouldBeRemoved` is true: reads every
    /// element, and changes only the leaves that lose one.
    public mutating func removeAll(where shouldBeRemoved: (Element) throws -> Bool) rethrows {
        var position = count - 1
        while position >= 0 {
            if try shouldBeRemoved(self[position]) { remove(at: position) }
            position -= 1
        }
    }

    /// The first position of `element` (the same object), reading row IDs only.
    public func firstIndex(of element: Element) -> Int? {
        var base = 0
        var found: Int?
        do {
            try forEachLeaf { leaf in
                guard found == nil else { return }
                // A leaf as read holds row IDs only: found by a scan of them.
                if leaf.pending.isEmpty {
                    if element.rowID != 0, let offset = leaf.rowIDs.firstIndex(of: element.rowID) { found = base + offset }
                    base += leaf.rowIDs.count
                    return
                }
                for offset in leaf.rowIDs.indices {
                    let pending = leaf.pending[offset]
                    if pending.map({ $0 === element }) ?? (element.rowID != 0 && leaf.rowIDs[offset] == element.rowID) {
                        found = base + offset
                        return
                    }
                }
                base += leaf.rowIDs.count
            }
        } catch {
            fail(error)
        }
        return found
    }
}

extension StoredList: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: Element...) {
        self.init(elements)
    }
}

extension StoredList: Equatable {
    /// Whether both hold the same objects, in the same order.
    public static func == (lhs: StoredList, rhs: StoredList) -> Bool {
        if lhs.root === rhs.root { return true }
        return lhs.count == rhs.count && zip(lhs, rhs).allSatisfy { $0 === $1 }
    }
}

extension StoredList: CustomStringConvertible {
    public var description: String {
        "StoredList<\(Element.self)>(\(count) elements)"
    }
}
