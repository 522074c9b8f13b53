@testable import Cabinet
import Testing

/// Undo snapshots keep a `StoredList` as its tree: taking one reads nothing,
/// putting it back gives the list exactly, however many saves came between,
/// and the save after an undo writes only the nodes that differ.
@Suite struct StoredListUndoTests {
    private func songs(_ count: Int, in store: ObjectStore, named prefix: String = "S") -> [Song] {
        (0..<count).map { i in let song = Song(); song.title = "\(prefix)\(i)"; store.insert(song); return song }
    }

    private func rows(_ list: StoredList<Song>) -> [UInt32] { list.map(\.rowID) }

    /// A store of one shelf (row 2) with `count` songs in its list, saved and closed.
    private func savedShelf(_ fixture: StoreFixture, count: Int) throws {
        let store = try fixture.open(Song.self, Shelf.self)
        defer { store.close() }
        let shelf = Shelf(); store.insert(shelf)
        shelf.songs = StoredList(songs(count, in: store))
        try store.save()
    }

    @Test(arguments: BackendKind.allCases)
    func renamingTheOwnerOfABigListReadsNoNodeOfIt(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        try savedShelf(fixture, count: 5_000)
        let counting = CountingBackend(try fixture.backend())
        let store = try ObjectStore(backend: counting)
        defer { store.close() }
        try store.register(Song.self, Shelf.self)
        #expect(store.undoManager.isEnabled)
        let shelf = try #require(try store.fetch(Shelf.self, rowID: 2))
        #expect(shelf.songs.count == 5_000)
        counting.resetCounts()
        shelf.name = "renamed"                                 // the undo snapshot is taken here
        #expect(counting.reads(of: ObjectStore.listsTableName) == 0, "the snapshot keeps the tree, not its elements")
        try store.save()
        #expect(counting.reads(of: ObjectStore.listsTableName) <= Int(ListScope.slots), "the save reads list roots only")
        try store.undoManager.undo()
        try store.save()
        #expect(counting.reads(of: ObjectStore.listsTableName) <= 2 * Int(ListScope.slots))
        #expect(shelf.name == "" && shelf.songs.count == 5_000)
    }

    @Test func aDamagedLeafElsewhereDoesNotStopARenameWithUndoOn() throws {
        let fixture = try StoreFixture(.tokyoCabinet)
        try savedShelf(fixture, count: 3_000)
        do {
            let backend = try fixture.backend()
            defer { backend.close() }
            try damageOneLeaf(of: try backend.openTable(named: ObjectStore.listsTableName))
        }
        let store = try fixture.open(Song.self, Shelf.self)
        defer { store.close() }
        #expect(store.undoManager.isEnabled)
        let shelf = try #require(try store.fetch(Shelf.self, rowID: 2))
        shelf.name = "renamed"
        try store.save()
        try store.undoManager.undo()
        try store.save()
        #expect(shelf.name == "")
    }

    /// Each undone step's nodes were deleted by the saves after it: the first
    /// changed the right-hand path, the second a left-hand path the snapshot of
    /// the first had never loaded, the third deleted the owner.
    @Test(arguments: BackendKind.allCases)
    func undoPutsTheListBackExactlyAcrossSaves(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        try savedShelf(fixture, count: 20_000)                  // a root, inner nodes, leaves
        let store = try fixture.open(Song.self, Shelf.self)
        let extra = songs(3, in: store, named: "new")
        try store.save()
        store.undoManager.removeAllActions()
        let shelf = try #require(try store.fetch(Shelf.self, rowID: 2))
        var states = [rows(shelf.songs)]
        shelf.songs.append(extra[0])
        shelf.name = "appended"
        try store.save()
        states.append(rows(shelf.songs))
        shelf.songs.insert(extra[1], at: 0)
        shelf.songs.remove(at: 19_000)
        try store.save()
        states.append(rows(shelf.songs))
        store.delete(shelf)
        try store.save()
        for state in states.reversed() {
            try store.undoManager.undo()
            try store.save()
            #expect(rows(shelf.songs) == state)
        }
        #expect(shelf.name == "")
        try store.undoManager.redo()
        try store.undoManager.redo()
        try store.save()
        #expect(rows(shelf.songs) == states[2])
        #expect(try StoreVerifier.verify(store.backend).isEmpty)
        store.close()
        let reopened = try fixture.open(Song.self, Shelf.self)
        defer { reopened.close() }
        #expect(rows(try #require(try reopened.fetch(Shelf.self, rowID: 2)).songs) == states[2])
        #expect(try StoreVerifier.verify(reopened.backend).isEmpty)
    }

    /// The saves in between deleted the whole tree the snapshot names (a list
    /// replaced whole, a list gone back into its record): undo still puts it back.
    @Test(arguments: BackendKind.allCases)
    func undoPutsBackAListThatWasReplacedOrKeptInItsRecord(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        try savedShelf(fixture, count: 3_000)
        let store = try fixture.open(Song.self, Shelf.self)
        defer { store.close() }
        let others = songs(600, in: store, named: "other")
        try store.save()
        store.undoManager.removeAllActions()
        let shelf = try #require(try store.fetch(Shelf.self, rowID: 2))
        let original = rows(shelf.songs)
        shelf.songs = StoredList(others)                        // the whole tree goes
        try store.save()
        shelf.songs.removeSubrange(100...)                      // into the record: the new tree goes too
        try store.save()
        try store.undoManager.undo()
        try store.save()
        #expect(rows(shelf.songs) == others.map(\.rowID))
        try store.undoManager.undo()
        try store.save()
        #expect(rows(shelf.songs) == original)
        #expect(try StoreVerifier.verify(store.backend).isEmpty)
    }

    @Test func anUndoThenSaveWritesTheChangedNodesNotTheList() throws {
        let directory = try TemporaryDirectory()
        let backend = JournalMeasuringBackend(try TokyoCabinetBackend(directory: directory.path + "/store"))
        let store = try ObjectStore(backend: backend)
        defer { store.close() }
        try store.register(Song.self, Shelf.self)
        let shelf = Shelf(); store.insert(shelf)
        shelf.songs = StoredList(songs(50_000, in: store))
        try store.save()
        let song = Song(); store.insert(song)
        try store.save()
        store.undoManager.removeAllActions()
        shelf.songs.append(song)
        shelf.name = "appended"
        try store.save()
        try store.undoManager.undo()
        try store.save()
        let size = try #require(backend.journalSizes.last)
        #expect(size < 12_000, "the undo's save wrote \(size) bytes")
        #expect(shelf.songs.count == 50_000 && shelf.name == "")
        try store.undoManager.redo()
        try store.save()
        #expect(try #require(backend.journalSizes.last) < 12_000)
        #expect(shelf.songs.last === song)
        #expect(try StoreVerifier.verify(store.backend).isEmpty)
    }
}
