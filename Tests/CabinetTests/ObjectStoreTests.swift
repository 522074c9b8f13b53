@testable import Cabinet
import Foundation
import Testing

@Suite struct ObjectStoreTests {
    @Test(arguments: BackendKind.allCases)
    func savedObjectsReadBackInAFreshStore(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        do {
            let store = try fixture.open()
            let songs = (0..<50).map { i -> Song in
                let song = Song(); song.title = "Song \(i) ✓"; song.seconds = UInt32(i * 7); return song
            }
            songs.forEach(store.insert)
            let list = Playlist(); list.title = "Mix"; list.songs = Array(songs.reversed().prefix(10))
            store.insert(list)
            #expect(songs.first?.rowID == 2, "row IDs start at 2")
            try store.save()
            store.close()
        }
        let store = try fixture.open()
        let songs = try store.fetchAll(Song.self).sorted { $0.rowID < $1.rowID }
        #expect(songs.count == 50)
        #expect(songs.map(\.title) == (0..<50).map { "Song \($0) ✓" })
        #expect(songs.map(\.seconds) == (0..<50).map { UInt32($0 * 7) })
        #expect(try store.count(of: Song.self) == 50)
        let list = try #require(try store.fetchAll(Playlist.self).first)
        #expect(list.songs.map(\.title) == (40..<50).reversed().map { "Song \($0) ✓" })
        #expect(list.songs.first === songs.last, "relationship targets are the uniqued instances")
        // New row IDs continue the sequence after a reopen.
        let late = Song(); store.insert(late)
        #expect(kind.reservesRows ? late.rowID > 51 : late.rowID == 52)
        store.close()
    }

    @Test(arguments: BackendKind.allCases)
    func fetchingPlaylistsReadsNoSongUntilAPropertyIsRead(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        do {
            let store = try fixture.open()
            let list = Playlist(); list.title = "Car"
            list.songs = (0..<5).map { i in let s = Song(); s.title = "S\(i)"; store.insert(s); return s }
            store.insert(list)
            try store.save()
            store.close()
        }
        let (store, backend) = try fixture.openCounting()
        backend.resetCounts()
        let lists = try store.fetchAll(Playlist.self)
        #expect(lists[0].songs.count == 5)
        #expect(lists[0].songs.allSatisfy { !$0.hasContent })
        #expect(backend.reads(of: "Song") == 0)
        #expect(backend.scans["Song", default: 0] == 0)
        #expect(lists[0].songs[2].title == "S2")        // reading a property fires the fault...
        #expect(lists[0].songs[2].hasContent)
        #expect(backend.reads(of: "Song") == 1)
        _ = lists[0].songs[2].seconds                    // ...once
        #expect(backend.reads(of: "Song") == 1)
        #expect(!lists[0].songs[3].hasContent)
        store.close()
    }

    @Test(arguments: BackendKind.allCases)
    func oneLiveInstancePerRowAndDroppedObjectsAreFreed(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open()
        var rowID: UInt32 = 0
        do {
            let song = Song(); song.title = "Once"
            store.insert(song)
            rowID = song.rowID
            try store.save()
        }
        weak var weakSong: Song?
        do {
            let first = try #require(try store.fetch(Song.self, rowID: rowID))
            let second = try #require(try store.fetch(Song.self, rowID: rowID))
            #expect(first === second)
            #expect(try store.fetchAll(Song.self).first === first)
            weakSong = first
        }
        store.undoManager.removeAllActions()        // undo history keeps the objects it can restore
        #expect(weakSong == nil, "the store must not keep objects the app dropped")
        let again = try #require(try store.fetch(Song.self, rowID: rowID))
        #expect(again.title == "Once")
        #expect(try store.fetch(Song.self, rowID: 999) == nil)
        #expect(try store.fetch(Song.self, rowID: 1) == nil, "row 1 is metadata, not an object")
        store.close()
    }

    @Test(arguments: BackendKind.allCases)
    func dirtyObjectsAreKeptUntilSaved(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open()
        var rowID: UInt32 = 0
        do {
            let song = Song(); store.insert(song); rowID = song.rowID
            try store.save()
        }
        do {
            let song = try #require(try store.fetch(Song.self, rowID: rowID))
            song.title = "Changed"
        }
        // The app dropped it, but its change is pending: the store still holds it.
        #expect(store.hasUnsavedChanges)
        #expect(try store.fetch(Song.self, rowID: rowID)?.title == "Changed")
        try store.save()
        store.close()
        let reopened = try fixture.open()
        #expect(try reopened.fetch(Song.self, rowID: rowID)?.title == "Changed")
        reopened.close()
    }

    @Test(arguments: BackendKind.allCases)
    func aRecordThatRefersToItselfGetsTheSameInstance(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        do {
            let store = try fixture.open()
            let node = Node(); node.label = "loop"
            store.insert(node)
            node.next = node
            try store.save()
            store.close()
        }
        let store = try fixture.open()
        let node = try #require(try store.fetchAll(Node.self).first)
        #expect(node.next === node)
        let fetched = try #require(try store.fetch(Node.self, rowID: node.rowID))
        #expect(fetched === node)
        store.close()
    }

    @Test(arguments: BackendKind.allCases)
    func settersTrackChangesButReadingDoesNot(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open()
        let song = Song(); song.title = "Before insert is not tracked"
        #expect(!store.hasUnsavedChanges)
        store.insert(song)
        try store.save()
        #expect(!store.hasUnsavedChanges)
        _ = try store.fetchAll(Song.self)          // read(from:) sets properties: not a change
        #expect(!store.hasUnsavedChanges)
        song.seconds = 5
        #expect(store.hasUnsavedChanges)
        try store.save()
        let album = Album(); album.name = "A"; store.insert(album)
        try store.save()
        store.willUpdate(album)                      // a plain property
        album.rating = 5
        try store.save()
        store.close()
        let reopened = try fixture.open()
        #expect(try reopened.fetchAll(Song.self).first?.seconds == 5)
        #expect(try reopened.fetchAll(Album.self).first?.rating == 5)
        reopened.close()
    }

    @Test(arguments: BackendKind.allCases)
    func appendingToARelationshipOfAFaultLoadsItFirst(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        var listRow: UInt32 = 0
        do {
            let store = try fixture.open()
            let list = Playlist(); list.title = "Keep me"
            let first = Song(); first.title = "first"
            store.insert(first); list.songs = [first]; store.insert(list)
            let holder = Album(); holder.extras = [list]; store.insert(holder)
            listRow = list.rowID
            try store.save()
            store.close()
        }
        let store = try fixture.open()
        let holder = try #require(try store.fetchAll(Album.self).first)
        let list = try #require(holder.extras.first as? Playlist)
        #expect(!list.hasContent)
        let second = Song(); second.title = "second"; store.insert(second)
        list.songs.append(second)                   // _modify on a fault: load, then change
        try store.save()
        store.close()
        let reopened = try fixture.open()
        let saved = try #require(try reopened.fetch(Playlist.self, rowID: listRow))
        #expect(saved.title == "Keep me")
        #expect(saved.songs.map(\.title) == ["first", "second"])
        reopened.close()
    }

    @Test(arguments: BackendKind.allCases)
    func unsavedInsertsAndDeletesShowInFetches(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open()
        let kept = Song(); kept.title = "kept"
        let gone = Song(); gone.title = "gone"
        store.insert(kept); store.insert(gone)
        try store.save()
        let fresh = Song(); fresh.title = "fresh"; store.insert(fresh)
        store.delete(gone)
        #expect(try store.fetchAll(Song.self).map(\.title).sorted() == ["fresh", "kept"])
        #expect(try store.fetch(Song.self, rowID: gone.rowID) == nil)
        var streamed: [String] = []
        try store.enumerate(Song.self) { song, _ in streamed.append(song.title) }
        #expect(streamed.sorted() == ["fresh", "kept"])
        try store.save()
        #expect(gone.store == nil, "a saved delete detaches the object")
        #expect(try store.count(of: Song.self) == 2)
        store.close()
    }

    @Test(arguments: BackendKind.allCases)
    func deletingAnUnsavedInsertForgetsIt(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open()
        let song = Song()
        store.undoManager.beginGroup(named: "Add"); store.insert(song); store.undoManager.endGroup()
        let row = song.rowID
        store.undoManager.beginGroup(named: "Remove"); store.delete(song); store.undoManager.endGroup()
        #expect(song.store == nil)
        #expect(song.rowID == row, "kept while undo can put it back")
        try store.save()
        #expect(try store.count(of: Song.self) == 0)
        try store.undoManager.undo()
        #expect(try store.fetch(Song.self, rowID: row) === song)

        store.undoManager.isEnabled = false
        let other = Song(); store.insert(other)
        store.delete(other)
        #expect(other.rowID == 0, "without undo it has no row at all")
        store.close()
    }

    @Test(arguments: BackendKind.allCases)
    func deleteRulesRunBeforeTheDelete(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open()
        let opener = Song(); opener.title = "Opener"
        let album = Album(); album.name = "Debut"; album.opener = opener
        store.insert(opener); store.insert(album)
        try store.save()
        store.delete(album)                           // Album's rule deletes its opener too
        try store.save()
        #expect(try store.fetchAll(Album.self).isEmpty)
        #expect(try store.fetchAll(Song.self).isEmpty)
        store.close()
    }

    @Test(arguments: BackendKind.allCases)
    func enumerateStopsWhenAsked(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open()
        for i in 0..<20 { let s = Song(); s.seconds = UInt32(i); store.insert(s) }
        try store.save()
        var seen = 0
        try store.enumerate(Song.self) { _, stop in
            seen += 1
            if seen == 3 { stop = true }
        }
        #expect(seen == 3)
        store.close()
    }

    @Test(arguments: BackendKind.allCases)
    func heterogeneousReferencesKeepTheirClasses(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        do {
            let store = try fixture.open()
            let song = Song(); song.title = "s"
            let list = Playlist(); list.title = "p"
            let node = Node(); node.label = "n"
            [song, list, node].forEach(store.insert)
            let album = Album(); album.extras = [node, song, list]; store.insert(album)
            try store.save()
            store.close()
        }
        // Register in another order: class IDs come from the files, not the order.
        let fixtureStore = try fixture.open(Node.self, Album.self, Playlist.self, Song.self)
        let album = try #require(try fixtureStore.fetchAll(Album.self).first)
        #expect(album.extras.count == 3)
        #expect((album.extras[0] as? Node)?.label == "n")
        #expect((album.extras[1] as? Song)?.title == "s")
        #expect((album.extras[2] as? Playlist)?.title == "p")
        fixtureStore.close()
    }

    @Test(arguments: BackendKind.allCases)
    func namedBuffersHoldReferencesAndSaveWithTheStore(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        do {
            let store = try fixture.open()
            let songs = (0..<3).map { i -> Song in let s = Song(); s.title = "fav \(i)"; store.insert(s); return s }
            var favorites = DataBuffer()
            favorites.writeString("My favourites")
            favorites.writeReferences(songs)
            try store.setNamedBuffer(favorites, forName: "Favorite")
            #expect(store.hasUnsavedChanges)
            var pending = try #require(try store.namedBuffer(forName: "Favorite"))
            #expect(try pending.readString() == "My favourites")
            try store.save()
            store.close()
        }
        let store = try fixture.open()
        var favorites = try #require(try store.namedBuffer(forName: "Favorite"))
        #expect(try favorites.readString() == "My favourites")
        let songs = try favorites.readReferences(to: Song.self)
        #expect(songs.map(\.title) == ["fav 0", "fav 1", "fav 2"])
        #expect(try store.namedBuffer(forName: "Missing") == nil)
        try store.removeNamedBuffer(forName: "Favorite")
        try store.save()
        #expect(try store.namedBuffer(forName: "Favorite") == nil)
        #expect(throws: CabinetError.invalidName("")) { try store.setNamedBuffer(DataBuffer(), forName: "") }
        // A set or a removal not saved yet can be dropped: the stored buffer stays.
        var kept = DataBuffer(); kept.writeString("kept")
        try store.setNamedBuffer(kept, forName: "Kept")
        try store.save()
        try store.setNamedBuffer(DataBuffer(), forName: "Kept")
        try store.discardUnsavedNamedBuffer(forName: "Kept")
        try store.removeNamedBuffer(forName: "Kept")
        try store.discardUnsavedNamedBuffer(forName: "Kept")
        #expect(!store.hasUnsavedChanges)
        try store.save()
        #expect(try store.namedBuffer(forName: "Kept").map { var copy = $0; return try copy.readString() } == "kept")
        store.close()
    }

    @Test(arguments: BackendKind.allCases)
    func aReferenceToAnUninsertedObjectFailsTheWholeSave(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open()
        let stray = Song(); stray.title = "never inserted"
        let good = Song(); good.title = "good"; store.insert(good)
        let list = Playlist(); list.songs = [good, stray]; store.insert(list)
        let error = expectCabinetError({ try store.save() }) {
            guard $0.code == .referenceToUninsertedObject, let location = $0.location, let target = $0.targetClass else { return false }
            return location.className == "Playlist" && location.rowID == list.rowID && target == "Song"
        }
        #expect(error != nil)
        #expect(error.map { "\($0)".contains("refers to a Song that was never inserted") } == true)
        #expect(CabinetError.referenceToUninsertedObject(RecordLocation(file: "f", className: "Book", rowID: 2), targetClass: "Author")
            .description.contains("refers to an Author that"))
        #expect(store.hasUnsavedChanges, "changes stay pending after a failed save")
        #expect(try store.count(of: Song.self) == 0, "nothing of the failed save is on disk")
        store.insert(stray)
        try store.save()
        #expect(try store.count(of: Song.self) == 2)
        store.close()
        let reopened = try fixture.open()
        #expect(try reopened.fetchAll(Playlist.self).first?.songs.map(\.title) == ["good", "never inserted"])
        reopened.close()
    }

    @Test(arguments: BackendKind.allCases)
    func closeDissolvesRelationshipsSoCyclesAreFreed(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open()
        weak var weakA: Node?
        weak var weakB: Node?
        do {
            let a = Node(), b = Node()
            store.insert(a); store.insert(b)
            a.next = b; b.next = a
            try store.save()
            weakA = a; weakB = b
        }
        #expect(weakA != nil, "a cycle keeps both alive while the store is open")
        store.close()
        #expect(weakA == nil && weakB == nil)
    }

    @Test(arguments: BackendKind.allCases)
    func aClosedStoreRefusesWork(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open()
        let song = Song(); store.insert(song)
        try store.save()
        store.close()
        #expect(song.store == nil)
        #expect(throws: CabinetError.self) { try store.save() }
        #expect(throws: CabinetError.self) { _ = try store.fetchAll(Song.self) }
        #expect(throws: CabinetError.self) { try store.register(Song.self) }
        song.title = "still usable as a plain object"
        #expect(song.title == "still usable as a plain object")
    }

    @Test(arguments: BackendKind.allCases)
    func dumpingAStoreAndItsObjectsIsSafe(_ kind: BackendKind) throws {
        // Swift Testing reflects values to describe failures: reflection must not crash.
        let fixture = try StoreFixture(kind)
        let store = try fixture.open()
        let song = Song(); song.title = "dumped"; store.insert(song)
        try store.save()
        _ = try store.fetchAll(Song.self)
        var text = ""
        dump(store, to: &text, maxDepth: 12)
        dump(song, to: &text, maxDepth: 12)
        #expect(text.contains("dumped"))
        store.close()
    }
}
