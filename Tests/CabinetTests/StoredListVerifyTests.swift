@testable import Cabinet
import CabinetStorage
import Testing

/// `StoreVerifier` walks every out-of-line list: each damage written here with
/// raw table writes is reported with its kind, owner class, row and slot.
@Suite struct StoredListVerifyTests {
    private let owner = RecordLocation(file: "test")

    /// A store with a shelf (row 2) whose 1,000 songs are out of line in slot 0: a root node over two leaves.
    private func shelfStore(_ kind: BackendKind = .tokyoCabinet) throws -> (StoreFixture, ObjectStore) {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open(Song.self, Shelf.self)
        let shelf = Shelf(); store.insert(shelf)
        shelf.songs = StoredList((0..<1_000).map { _ in let song = Song(); store.insert(song); return song })
        try store.save()
        return (fixture, store)
    }

    private func scope(_ store: ObjectStore, slot: UInt8 = 0) -> ListScope {
        ListScope(classID: store.entry(for: Shelf.self)!.metadata.classID, row: 2, slot: slot)
    }

    private func lists(_ store: ObjectStore) throws -> any StorageTable {
        try #require(try store.listsTable(creating: false))
    }

    /// The root node's ID and its children's IDs.
    private func tree(_ store: ObjectStore) throws -> (root: ListNodeID, leaves: [ListNodeID]) {
        let table = try lists(store)
        let root = try #require(try ListWriter.readRoot(scope(store), in: table, format: store.recordFormat, owner: owner))
        let node = try #require(try ListWriter.readNode(ListNodeStorage(scope: scope(store), id: root.root), in: table,
                                                        format: store.recordFormat, owner: owner))
        return (root.root, node.children.compactMap(\.id))
    }

    /// The list problems of the store, as (kind, class, row).
    private func listProblems(_ store: ObjectStore) throws -> [StoreVerifier.Problem] {
        try StoreVerifier.verify(store.backend).filter { $0.kind?.rawValue.hasPrefix("list") ?? false }
    }

    @Test(arguments: BackendKind.allCases)
    func aCleanStoreWithListsVerifiesClean(_ kind: BackendKind) throws {
        let (fixture, store) = try shelfStore(kind)
        defer { store.close(); withExtendedLifetime(fixture) {} }
        let shelf = try #require(try store.fetch(Shelf.self, rowID: 2))
        shelf.extras = StoredList(Array(shelf.songs.prefix(600)))
        shelf.songs.remove(at: 10)
        try store.save()
        #expect(try StoreVerifier.verify(store.backend).isEmpty)
    }

    @Test func aDeletedNodeIsReportedMissing() throws {
        let (fixture, store) = try shelfStore()
        defer { store.close(); withExtendedLifetime(fixture) {} }
        let leaf = try tree(store).leaves[1]
        try putRecord(lists(store), scope(store).nodeKey(leaf), nil)
        let problems = try listProblems(store)
        #expect(problems.map(\.kind) == [.listNodeMissing])
        #expect(problems.first?.location.className == "Shelf" && problems.first?.location.rowID == 2)
        #expect(problems.first?.location.file.contains("[list 0, node \(leaf)]") == true)
    }

    @Test func aNodeNoRootReachesIsReportedOrphaned() throws {
        let (fixture, store) = try shelfStore()
        defer { store.close(); withExtendedLifetime(fixture) {} }
        // A copy of a leaf under a new ID: a node record that nothing names.
        let table = try lists(store)
        let leaf = try tree(store).leaves[0]
        let bytes = try #require(try scope(store).nodeKey(leaf).withUnsafeBytes { key in try table.withValue(forKey: key) { Array($0) } })
        let stray = ListNodeID(high: 1, low: 2)
        try putRecord(table, scope(store).nodeKey(stray), bytes)
        // And a whole tree of slot 5, which has no root.
        try putRecord(table, scope(store, slot: 5).nodeKey(stray), bytes)
        let problems = try listProblems(store)
        #expect(problems.map(\.kind) == [.listOrphanNodes, .listOrphanNodes])
        #expect(problems.allSatisfy { $0.reason.contains("\(stray)") })
        #expect(problems.map(\.location.file).contains { $0.hasSuffix("[list 5]") })
    }

    @Test func aWrongCountIsReported() throws {
        let (fixture, store) = try shelfStore()
        defer { store.close(); withExtendedLifetime(fixture) {} }
        let table = try lists(store)
        let root = try tree(store).root
        try putRecord(table, scope(store).rootKey, ListRecords.encodeRoot(count: 999, root: root, format: store.recordFormat))
        let problems = try listProblems(store)
        // The root node holds 1,000, and the owner's record counts 1,000: both disagree with the root.
        #expect(problems.map(\.kind) == [.listCountMismatch, .listCountMismatch])
        #expect(problems.allSatisfy { $0.location.rowID == 2 && $0.location.className == "Shelf" })
    }

    @Test func aRootWhoseOwnerIsGoneIsReportedOrphaned() throws {
        let (fixture, store) = try shelfStore()
        defer { store.close(); withExtendedLifetime(fixture) {} }
        try store.entry(for: Shelf.self)!.table.transaction {
            try withUnsafeBytes(of: UInt32(2).littleEndian) { try store.entry(for: Shelf.self)!.table.apply(nil, forKey: $0) }
        }
        let problems = try listProblems(store)
        #expect(problems.map(\.kind) == [.listOrphanRoot])
        #expect(problems.first?.reason.contains("no longer exists") == true)
    }

    @Test func aRootTheOwnerNoLongerNamesIsReportedOrphaned() throws {
        let (fixture, store) = try shelfStore()
        defer { store.close(); withExtendedLifetime(fixture) {} }
        // A root (and tree) in slot 3, which the shelf's record does not name.
        let table = try lists(store)
        let (root, _) = try tree(store)
        let rootNode = try #require(try scope(store).nodeKey(root).withUnsafeBytes { key in try table.withValue(forKey: key) { Array($0) } })
        try putRecord(table, scope(store, slot: 3).rootKey, ListRecords.encodeRoot(count: 1_000, root: root, format: store.recordFormat))
        try putRecord(table, scope(store, slot: 3).nodeKey(root), rootNode)
        let problems = try listProblems(store)
        // The root is an orphan, and its root node names leaves slot 3 does not hold.
        #expect(problems.map(\.kind).contains(.listOrphanRoot))
        #expect(problems.map(\.kind).filter { $0 == .listNodeMissing }.count == 2)
        #expect(problems.allSatisfy { $0.location.file.contains("[list 3") })
    }
}
