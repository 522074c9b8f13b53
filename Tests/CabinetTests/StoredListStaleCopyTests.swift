@testable import Cabinet
import Testing

/// A copy of a `StoredList` taken before a later save of the same list is
/// stale: saving it would put back the tree that save replaced, without the
/// save's changes. It is refused whatever it loaded or changed since, and the
/// owner's own list keeps saving through every change of shape.
@Suite struct StoredListStaleCopyTests {
    private func songs(_ count: Int, in store: ObjectStore, named prefix: String = "S") -> [Song] {
        (0..<count).map { i in let song = Song(); song.title = "\(prefix)\(i)"; store.insert(song); return song }
    }

    @Test(arguments: BackendKind.allCases)
    func aCopyChangedInTheLeafALaterSaveChangedIsRefusedAndLosesNothing(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        do {
            let store = try fixture.open(Song.self, Shelf.self)
            let shelf = Shelf(); store.insert(shelf)
            shelf.songs = StoredList(songs(1_600, in: store))
            try store.save()
            var copy = shelf.songs
            let mine = Song(); mine.title = "on the copy"; store.insert(mine)
            copy.append(mine)                                  // the last leaf, loaded and changed in the copy
            let later = Song(); later.title = "1601"; store.insert(later)
            shelf.songs.append(later)                          // the same leaf, in the owner's list
            try store.save()
            let current = shelf.songs
            shelf.songs = copy
            #expect(errorCode(of: { try store.save() }) == .staleList)
            #expect(store.hasUnsavedChanges, "nothing written; the change is still pending")
            shelf.songs = current
            shelf.songs.append(mine)
            try store.save()
            store.close()
        }
        let store = try fixture.open(Song.self, Shelf.self)
        defer { store.close() }
        let shelf = try #require(try store.fetch(Shelf.self, rowID: 2))
        #expect(shelf.songs.count == 1_602)
        #expect(shelf.songs.suffix(2).map(\.title) == ["1601", "on the copy"])
        #expect(try StoreVerifier.verify(store.backend).isEmpty)
    }

    @Test(arguments: BackendKind.allCases)
    func aCopyLoadedWholeBeforeALaterSaveIsRefusedToo(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open(Song.self, Shelf.self)
        defer { store.close() }
        let shelf = Shelf(); store.insert(shelf)
        shelf.songs = StoredList(songs(2_000, in: store))
        try store.save()
        var copy = shelf.songs
        try copy.loadAll()
        copy.insert(songs(1, in: store, named: "first")[0], at: 0)  // a leaf the later save keeps
        shelf.songs.append(songs(1, in: store, named: "later")[0])
        try store.save()
        let current = shelf.songs
        shelf.songs = copy
        #expect(errorCode(of: { try store.save() }) == .staleList)
        shelf.songs = current
        try store.save()
        #expect(shelf.songs.last?.title == "later0")
    }

    /// The owner's list itself is never stale: not after its root splits or
    /// gives way to its one child, nor after it was kept in its record for a
    /// while; and a copy taken after the last save is as good as the list.
    @Test(arguments: BackendKind.allCases)
    func theOwnersListSavesThroughEveryChangeOfShape(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open(Song.self, Shelf.self)
        defer { store.close() }
        let pool = songs(2_000, in: store)
        let shelf = Shelf(); store.insert(shelf)
        shelf.songs = StoredList(pool[..<ListNode.leafCapacity])  // one full leaf: the root
        try store.save()
        shelf.songs.append(pool[600])                         // a second leaf: a new root above the first
        try store.save()
        shelf.songs.remove(at: ListNode.leafCapacity)         // back to one leaf: the root gives way to it
        try store.save()
        shelf.songs.removeSubrange(100...)                     // into its record
        try store.save()
        shelf.songs.append(contentsOf: pool[1_000..<1_400])   // out of line again
        try store.save()
        let copy = shelf.songs
        shelf.songs = copy
        shelf.songs.append(pool[1_999])
        try store.save()
        let expected = (pool[..<100] + pool[1_000..<1_400] + [pool[1_999]]).map(\.rowID)
        #expect(shelf.songs.map(\.rowID) == expected)
        store.close()
        let reopened = try fixture.open(Song.self, Shelf.self)
        defer { reopened.close() }
        #expect(try #require(try reopened.fetch(Shelf.self, rowID: shelf.rowID)).songs.map(\.rowID) == expected)
        #expect(try StoreVerifier.verify(reopened.backend).isEmpty)
    }
}
