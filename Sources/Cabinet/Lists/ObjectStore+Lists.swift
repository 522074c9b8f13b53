import CabinetStorage

// The store's side of StoredList: reading out-of-line lists' roots and nodes,
// and, in a save, writing the nodes a list changed and deleting the ones it
// dropped (ListWriter). Everything goes into the save's own transaction or
// journal, with the records, so a list and its owner are saved all or nothing.

extension ObjectStore {
    /// The name of the table that holds out-of-line lists (``StoredList``).
    public static let listsTableName = ListRecords.tableName

    /// The table of out-of-line lists; `nil` if there is none yet and `creating`
    /// is false (a missing one the catalog lists throws, as for named buffers).
    func listsTable(creating: Bool) throws -> (any StorageTable)? {
        try auxiliaryTable(named: ObjectStore.listsTableName, creating: creating)
    }

    /// The root of the list in `scope`: its element count and root node ID.
    func readListRoot(_ scope: ListScope, owner: RecordLocation) throws -> (count: Int, root: ListNodeID) {
        let root = try readingCommittedState {
            try listsTable(creating: false).flatMap { try ListWriter.readRoot(scope, in: $0, format: recordFormat, owner: owner) }
        }
        guard let root else {
            throw CabinetError.malformedRecord(owner, reason: "\(scope) is stored out of line, but its root is missing from \(backend.location(ofTable: ObjectStore.listsTableName))")
        }
        return root
    }

    /// The root node of the list in `scope` as an earlier write block of this
    /// context's commit group saved it, if one did (``PendingLists``).
    func pendingListRoot(_ scope: ListScope) -> ListNode? {
        link.pendingLists?.root(scope)
    }

    /// Node `storage.id` of the list in `storage.scope`.
    func readListNode(_ storage: ListNodeStorage, owner: RecordLocation) throws -> ListNode {
        try checkOpen()
        // A pool's write block: the node as an earlier block read or wrote it (ListNodeCache).
        let cache = link.listNodes
        if let node = cache?.node(storage) { return node }
        let node = try readingCommittedState {
            try listsTable(creating: false).flatMap { try ListWriter.readNode(storage, in: $0, format: recordFormat, owner: owner) }
        }
        guard let node else {
            throw CabinetError.malformedRecord(owner, reason: "\(storage.scope): node \(storage.id) is missing from \(backend.location(ofTable: ObjectStore.listsTableName))")
        }
        cache?.keep(node, as: storage)
        return node
    }

    /// Whether objects of `type` write lists with `writeList` (asked once, at
    /// registration, of a new instance's `write(to:)`). Only such classes' saves
    /// and deletes look for out-of-line lists.
    static func writesLists(_ type: StoredObject.Type) -> Bool {
        probeWrite(type).writesLists
    }

    /// What `write(to:)` of a blank instance of `type` does: whether it writes a
    /// list, and how many bytes it writes.
    static func probeWrite(_ type: StoredObject.Type) -> (writesLists: Bool, bytes: Int) {
        var probe = DataBuffer()
        let collector = ListCollector()
        probe.encoder = RecordEncoder(location: RecordLocation(file: RecordContext.unknownFile), collector: collector)
        type.init().write(to: &probe)
        return (collector.sawList, probe.count)
    }

    /// A writer for this save's lists, if any class being saved writes lists.
    func makeListWriter(for entries: [ClassEntry]) throws -> ListWriter? {
        guard recordFormat != .plain, entries.contains(where: \.writesLists), let table = try listsTable(creating: false) else { return nil }
        return ListWriter(table: table, format: recordFormat, backend: backend,
                          cache: link.listNodes, undoLists: undoListRegistry.isEmpty ? nil : undoListRegistry,
                          writtenRoots: listRootsWritten)
    }

    /// After a save committed: the nodes it wrote are stored from now on.
    func listNodesCommitted(_ writer: ListWriter?) {
        writer?.commit()
    }
}
