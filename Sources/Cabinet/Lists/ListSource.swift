/// Which list a stored node belongs to: the owner object's class ID and row,
/// and the list's slot (its place among the owner's out-of-line lists, in the
/// order its `write(to:)` writes them). Every key of the list's nodes starts with it.
struct ListScope: Hashable, CustomStringConvertible {
    /// At most this many lists of one record are kept out of line; further ones stay in the record.
    static let slots: UInt8 = 8

    var classID: UInt8
    var row: UInt32
    var slot: UInt8

    /// The length of a root's key, and of the start of each of its nodes' keys.
    static let rootKeySize = 6

    /// The key of the list's root record: class ID, row (little-endian), slot.
    var rootKey: [UInt8] {
        var key: [UInt8] = [classID]
        withUnsafeBytes(of: row.littleEndian) { key.append(contentsOf: $0) }
        key.append(slot)
        return key
    }

    /// The key of one of its nodes: the root key, then the node's 16-byte ID.
    func nodeKey(_ id: ListNodeID) -> [UInt8] {
        var key = rootKey
        withUnsafeBytes(of: id.high.littleEndian) { key.append(contentsOf: $0) }
        withUnsafeBytes(of: id.low.littleEndian) { key.append(contentsOf: $0) }
        return key
    }

    var description: String { "list \(slot) of row \(row) (class ID \(classID))" }
}

/// Where a node of a list was read from or written to, so that a save can tell
/// which nodes are on disk already in the scope it writes.
struct ListNodeStorage: Hashable {
    var scope: ListScope
    var id: ListNodeID
}

/// Where a list read from a record loads the nodes it has not loaded yet: the
/// store (reached through its resolver, which fences each load as one operation
/// of the store), and the list's scope. Shared by every copy of the list.
final class ListSource {
    let resolver: ReferenceResolver
    /// `nil` for a list read from inside its record, which has nothing to load.
    let scope: ListScope?
    /// The class ID of the list's elements: its entry leads to the store.
    let elementClassID: UInt8
    /// The owner's record, named in errors.
    let location: RecordLocation
    /// The first error loading a node: the list is then only partly known (see ``StoredList``).
    var failure: CabinetError?

    init(resolver: ReferenceResolver, elementClassID: UInt8, scope: ListScope?, location: RecordLocation) {
        self.resolver = resolver
        self.elementClassID = elementClassID
        self.scope = scope
        self.location = location
    }

    /// Reads node `id` of this list from the store.
    func loadNode(_ id: ListNodeID) throws -> ListNode {
        let entered = try resolver.enter()
        defer { resolver.leave(entered) }
        let (store, scope) = try storeAndScope()
        return try store.readListNode(ListNodeStorage(scope: scope, id: id), owner: location)
    }

    /// The root node of this list, whose owner's record counts `count` elements:
    /// the list an earlier block of the pool's commit group saved and kept in
    /// memory, if one did (``PendingLists``), otherwise the stored root's node.
    /// A record reading its list asks here, so the encoding layer never reaches the store or the pool.
    func loadRoot(count: Int) throws -> ListNode {
        let entered = try resolver.enter()
        defer { resolver.leave(entered) }
        let (store, scope) = try storeAndScope()
        if let kept = store.pendingListRoot(scope) {
            guard kept.count == count else {
                throw damaged("the record counts \(count) elements, the list its commit group keeps \(kept.count)")
            }
            return kept
        }
        let root = try store.readListRoot(scope, owner: location)
        guard root.count == count else {
            throw damaged("the record counts \(count) elements, the list's root \(root.count)")
        }
        let node = try store.readListNode(ListNodeStorage(scope: scope, id: root.root), owner: location)
        guard node.count == count else {
            throw damaged("the root node holds \(node.count) elements, the list's root counts \(count)")
        }
        node.base = ListNodeStorage(scope: scope, id: root.root)
        return node
    }

    /// The store the nodes come from, and the list's scope; throws for a list kept in its record.
    private func storeAndScope() throws -> (ObjectStore, ListScope) {
        guard let scope else { throw damaged("a list kept in its record refers to a node") }
        guard let store = resolver.entry(classID: elementClassID)?.store else {
            throw CabinetError.storeClosed(path: location.file)
        }
        return (store, scope)
    }

    /// The error for a node that does not fit the tree it is in.
    func damaged(_ reason: String) -> CabinetError {
        .malformedRecord(location, reason: scope.map { "\($0): \(reason)" } ?? reason)
    }

    /// Tells the store's fault error handler that part of the list could not be loaded.
    func report(_ error: CabinetError) {
        guard let store = resolver.entry(classID: elementClassID)?.store else { return }
        store.faultErrorHandler(error)
    }
}
