@testable import Cabinet
import CabinetStorage
import Testing

/// Inner nodes are written at most ``ListNode/innerCapacity`` wide, but a
/// reader takes any width: stores written when inner nodes held up to 128
/// children read, grow and verify as they did.
@Suite struct StoredListNodeWidthTests {
    private let owner = RecordLocation(file: "test")

    /// Leaves in the hand-made root: more than this version puts in one inner node.
    private var leaves: Int { ListNode.innerCapacity + 2 }

    private func scope(_ store: ObjectStore) -> ListScope {
        ListScope(classID: store.entry(for: Shelf.self)!.metadata.classID, row: 2, slot: 0)
    }

    /// Saves a shelf (row 2) of `leaves` full leaves of songs, then rewrites its
    /// tree by hand as a root node over all the leaves, as a version with wider
    /// inner nodes wrote it; returns the songs' row IDs in order.
    private func storeWithOneWideRoot(_ fixture: StoreFixture) throws -> [UInt32] {
        let store = try fixture.open(Song.self, Shelf.self)
        defer { store.close() }
        let shelf = Shelf(); store.insert(shelf)
        shelf.songs = StoredList((0..<leaves * ListNode.leafCapacity).map { i in
            let song = Song(); song.title = "S\(i)"; store.insert(song); return song
        })
        try store.save()
        let table = try #require(try store.listsTable(creating: false))
        let format = store.recordFormat
        let root = try #require(try ListWriter.readRoot(scope(store), in: table, format: format, owner: owner))
        let rootNode = try #require(try ListWriter.readNode(ListNodeStorage(scope: scope(store), id: root.root), in: table, format: format, owner: owner))
        #expect(!rootNode.children.isEmpty && rootNode.children.count < leaves, "this version splits the leaves among inner nodes")
        var wide: [ListChild] = []
        for inner in rootNode.children.compactMap(\.id) {
            let node = try #require(try ListWriter.readNode(ListNodeStorage(scope: scope(store), id: inner), in: table, format: format, owner: owner))
            #expect(!node.isLeaf)
            wide += node.children
            try putRecord(table, scope(store).nodeKey(inner), nil)
        }
        #expect(wide.count == leaves)
        let wideRoot = ListNode(children: wide)
        try putRecord(table, scope(store).nodeKey(root.root), ListRecords.encode(wideRoot, rowIDs: [], childIDs: wide.compactMap(\.id), format: format))
        return shelf.songs.map(\.rowID)
    }

    /// What `cabinet verify` finds in the fixture's store (closed).
    private func problems(_ fixture: StoreFixture) throws -> [StoreVerifier.Problem] {
        fixture.kind == .tokyoCabinet ? try StoreVerifier.verify(path: fixture.storePath) : try StoreVerifier.verify(try fixture.backend())
    }

    @Test(arguments: BackendKind.allCases)
    func aTreeWithWiderInnerNodesReadsGrowsAndVerifies(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        var expected = try storeWithOneWideRoot(fixture)
        #expect(try problems(fixture).isEmpty, "the hand-made tree is a sound one")
        do {
            let store = try fixture.open(Song.self, Shelf.self)
            defer { store.close() }
            let shelf = try #require(try store.fetch(Shelf.self, rowID: 2))
            #expect(shelf.songs.map(\.rowID) == expected, "read whole through the wide root")
            #expect(shelf.songs[ListNode.leafCapacity * (leaves - 1) + 5].title == "S\(ListNode.leafCapacity * (leaves - 1) + 5)")
            // An append grows the wide root past this version's width; an insert in the middle splits it.
            let added = (0..<3).map { i in let song = Song(); song.title = "new \(i)"; store.insert(song); return song }
            shelf.songs.append(added[0])
            shelf.songs.insert(added[1], at: 7)
            shelf.songs.insert(added[2], at: ListNode.leafCapacity * 3)
            try store.save()
            expected.append(added[0].rowID)
            expected.insert(added[1].rowID, at: 7)
            expected.insert(added[2].rowID, at: ListNode.leafCapacity * 3)
        }
        #expect(try problems(fixture).isEmpty)
        let store = try fixture.open(Song.self, Shelf.self)
        defer { store.close() }
        let shelf = try #require(try store.fetch(Shelf.self, rowID: 2))
        #expect(shelf.songs.map(\.rowID) == expected)
    }
}
