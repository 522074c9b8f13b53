import Cabinet
import Foundation
import Testing

@Suite struct UndoTests {
    @Test(arguments: BackendKind.allCases)
    func aNamedGroupUndoesAndRedoesTogether(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open()
        let song = Song(); song.title = "Old title"
        let list = Playlist(); list.title = "Car"; list.songs = [song]
        store.insert(song); store.insert(list)
        try store.save()

        store.undoManager.beginGroup(named: "Rename")
        list.title = "Road trip"
        list.title = "Road trip 2"          // recorded once: the state before the first change
        song.title = "New title"
        store.undoManager.endGroup()
        #expect(store.undoManager.canUndo)
        #expect(store.undoManager.undoName == "Rename")

        try store.undoManager.undo()
        #expect(list.title == "Car")
        #expect(song.title == "Old title")
        #expect(store.hasUnsavedChanges, "the undo is pending until save")
        #expect(store.undoManager.canRedo)
        #expect(store.undoManager.redoName == "Rename")

        try store.undoManager.redo()
        #expect(list.title == "Road trip 2")
        #expect(song.title == "New title")
        try store.undoManager.undo()
        try store.save()
        store.close()
        let reopened = try fixture.open()
        #expect(try reopened.fetch(Playlist.self, rowID: list.rowID)?.title == "Car")
        reopened.close()
    }

    @Test(arguments: BackendKind.allCases)
    func undoingADeleteAndARelationshipChangePutsBothBackAsTheSameInstances(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open()
        let keep = Song(); keep.title = "keep"
        let doomed = Song(); doomed.title = "doomed"; doomed.seconds = 42
        let list = Playlist(); list.title = "L"; list.songs = [keep, doomed]
        [keep, doomed, list].forEach(store.insert)
        try store.save()
        let doomedRow = doomed.rowID

        store.undoManager.beginGroup(named: "Remove song")
        list.songs.removeAll { $0 === doomed }
        store.delete(doomed)
        store.undoManager.endGroup()
        try store.save()                                  // the delete reaches the disk
        #expect(try store.fetch(Song.self, rowID: doomedRow) == nil)

        try store.undoManager.undo()                      // across the save
        #expect(list.songs.count == 2)
        #expect(list.songs[1] === doomed, "the same instance is back in the relationship")
        #expect(doomed.rowID == doomedRow)
        #expect(try store.fetch(Song.self, rowID: doomedRow) === doomed)
        try store.save()
        store.close()

        let reopened = try fixture.open()
        let saved = try #require(try reopened.fetch(Playlist.self, rowID: list.rowID))
        #expect(saved.songs.map(\.title) == ["keep", "doomed"])
        #expect(saved.songs[1].seconds == 42)
        reopened.close()
    }

    @Test(arguments: BackendKind.allCases)
    func undoingAnInsertRemovesItAndRedoPutsItBackAtTheSameRow(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open()
        let song = Song(); song.title = "new"
        store.insert(song)
        let row = song.rowID
        try store.save()                                  // closes the implicit group
        try store.undoManager.undo()
        #expect(try store.fetch(Song.self, rowID: row) == nil)
        try store.save()
        #expect(try store.count(of: Song.self) == 0)
        try store.undoManager.redo()
        #expect(song.rowID == row)
        try store.save()
        #expect(try store.count(of: Song.self) == 1)
        #expect(try store.fetch(Song.self, rowID: row) === song)

        // An unsaved insert, undone, never reaches the disk.
        let fleeting = Song(); store.insert(fleeting)
        try store.undoManager.undo()
        try store.save()
        #expect(try store.count(of: Song.self) == 1)
        store.close()
    }

    @Test(arguments: BackendKind.allCases)
    func implicitGroupsCloseAtSaveAndAtAnExplicitGroup(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open()
        let song = Song(); song.title = "v1"; store.insert(song)
        try store.save()
        song.title = "v2"
        song.seconds = 2
        try store.save()                       // implicit group 1: v1 → v2
        song.title = "v3"                      // implicit group 2 ...
        store.undoManager.beginGroup(named: "Outer")   // ... closed here
        song.title = "v4"
        store.undoManager.beginGroup(named: "Inner")   // nested: folds into Outer
        song.seconds = 4
        store.undoManager.endGroup()
        store.undoManager.endGroup()
        #expect(store.undoManager.undoName == "Outer")
        try store.undoManager.undo()
        #expect(song.title == "v3" && song.seconds == 2)
        try store.undoManager.undo()
        #expect(song.title == "v2")
        try store.undoManager.undo()
        #expect(song.title == "v1" && song.seconds == 0)
        #expect(store.undoManager.canUndo, "the first implicit group inserted the song")
        let row = song.rowID
        try store.undoManager.undo()
        #expect(try store.fetch(Song.self, rowID: row) == nil)
        #expect(!store.undoManager.canUndo)
        store.close()
    }

    @Test(arguments: BackendKind.allCases)
    func levelsAndDisablingBoundWhatIsKept(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open()
        let song = Song(); store.insert(song)
        try store.save()
        store.undoManager.levelsOfUndo = 2
        for i in 1...5 {
            store.undoManager.beginGroup(named: "step \(i)")
            song.seconds = UInt32(i)
            store.undoManager.endGroup()
        }
        try store.undoManager.undo()
        try store.undoManager.undo()
        #expect(song.seconds == 3)
        #expect(!store.undoManager.canUndo, "only two levels were kept")

        store.undoManager.isEnabled = false
        song.seconds = 100
        let bulk = Song(); store.insert(bulk)
        try store.save()
        #expect(!store.undoManager.canUndo)
        store.undoManager.isEnabled = true
        store.close()
    }

    @Test(arguments: BackendKind.allCases)
    func aNewEditClearsRedo(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open()
        let song = Song(); store.insert(song)
        try store.save()
        song.seconds = 1
        try store.undoManager.undo()
        #expect(store.undoManager.canRedo)
        song.seconds = 7
        #expect(!store.undoManager.canRedo)
        store.close()
    }

    @Test(arguments: BackendKind.allCases)
    func observersCanTellAnUndoFromAnEdit(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open()
        var causes: [StoreChange.Cause] = []
        var undone: [StoredObject] = []
        let token = store.addObserver { change in
            causes.append(change.cause)
            if change.cause == .undo { undone = change.updated }
        }
        let song = Song(); store.insert(song)
        try store.save()
        causes.removeAll()
        store.undoManager.beginGroup(named: "Edit")
        song.title = "edited"
        store.undoManager.endGroup()
        #expect(causes == [.edit])
        try store.undoManager.undo()
        #expect(causes == [.edit, .undo])
        #expect(undone.count == 1 && undone[0] === song)
        try store.undoManager.redo()
        #expect(causes.last == .redo)
        store.removeObserver(token)
        song.title = "unobserved"
        #expect(causes.count == 3)
        store.close()
    }

    @Test(arguments: BackendKind.allCases)
    func undoingTenThousandUpdatesIsOnePass(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open()
        let songs = (0..<10_000).map { i -> Song in let s = Song(); s.seconds = UInt32(i); store.insert(s); return s }
        try store.save()
        store.undoManager.beginGroup(named: "Double")
        for song in songs { song.seconds *= 2 }
        store.undoManager.endGroup()
        try store.undoManager.undo()
        #expect(songs.enumerated().allSatisfy { $0.element.seconds == UInt32($0.offset) })
        try store.save()
        store.close()

        // The same, on a store that counts its backend reads: undo reads nothing back from disk.
        let (counted, backend) = try fixture.openCounting()
        let loaded = try counted.fetchAll(Song.self)
        counted.undoManager.beginGroup(named: "Triple")
        for song in loaded { song.seconds *= 3 }
        counted.undoManager.endGroup()
        backend.resetCounts()
        try counted.undoManager.undo()
        #expect(backend.reads(of: "Song") == 0 && backend.scans.isEmpty)
        #expect(loaded.allSatisfy { $0.seconds < 10_000 })
        counted.close()
        let reopened = try fixture.open()
        #expect(try reopened.fetchAll(Song.self).allSatisfy { $0.seconds < 10_000 })
        reopened.close()
    }

    @Test(arguments: BackendKind.allCases)
    func undoHistoryDoesNotKeepInsertedObjectsAliveAndStillUndoesThem(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open()
        weak var dropped: Song?
        var rows: [UInt32] = []
        do {
            let songs = (0..<100).map { i -> Song in let s = Song(); s.title = "bulk \(i)"; store.insert(s); return s }
            rows = songs.map(\.rowID)
            try store.save()
            dropped = songs[0]
        }
        #expect(dropped == nil, "after the save, the undo history holds row IDs, not the objects")
        try store.undoManager.undo()                   // the insert group: every row goes
        try store.save()
        #expect(try store.count(of: Song.self) == 0)
        try store.undoManager.redo()                   // and comes back, content and row IDs included
        try store.save()
        let back = try store.fetchAll(Song.self).sorted { $0.rowID < $1.rowID }
        #expect(back.map(\.rowID) == rows)
        #expect(back.first?.title == "bulk 0")
        store.close()
    }

    @Test(arguments: BackendKind.allCases)
    func insertsInterleavedWithOtherClassesAndEditsUndoAndRedoInOrder(_ kind: BackendKind) throws {
        // Runs of inserts of one class are recorded as one row range; an insert of
        // another class, an edit, or a gap in the rows must end the run.
        let fixture = try StoreFixture(kind)
        let store = try fixture.open()
        let early = Song(); early.title = "early"
        store.insert(early)
        try store.save()                                          // its own group

        store.undoManager.beginGroup(named: "Import")
        let first = (0..<3).map { i -> Song in let s = Song(); s.title = "a\(i)"; store.insert(s); return s }
        let list = Playlist(); list.title = "L"; list.songs = first
        store.insert(list)
        first[0].title = "a0 edited"
        early.title = "early edited"
        let second = (0..<2).map { i -> Song in let s = Song(); s.title = "b\(i)"; store.insert(s); return s }
        store.undoManager.endGroup()
        try store.save()
        let songRows = (first + second).map(\.rowID)
        #expect(songRows == Array(3...7), "row IDs continue after the early song's")

        try store.undoManager.undo()
        try store.save()
        #expect(try store.fetchAll(Song.self).map(\.title) == ["early"])
        #expect(try store.count(of: Playlist.self) == 0)

        try store.undoManager.redo()
        try store.save()
        store.close()
        let reopened = try fixture.open()
        let songs = try reopened.fetchAll(Song.self).sorted { $0.rowID < $1.rowID }
        #expect(songs.map(\.title) == ["early edited", "a0 edited", "a1", "a2", "b0", "b1"])
        #expect(songs.dropFirst().map(\.rowID) == songRows)
        #expect(try reopened.fetchAll(Playlist.self).first?.songs.map(\.title) == ["a0 edited", "a1", "a2"])
        reopened.close()
    }

    /// The README's undo sample, verbatim (ReadmeExampleTests checks it is here).
    @Test func theReadmeUndoSampleRuns() throws {
        let fixture = try StoreFixture(.memory)
        let store = try fixture.open()
        let list = Playlist(); list.title = "Car"
        let song = Song(); song.title = "Old title"
        store.insert(list); store.insert(song)
        try store.save()
        store.undoManager.beginGroup(named: "Rename")
        list.title = "Road trip"
        song.title = "New title"
        store.undoManager.endGroup()
        print(store.undoManager.canUndo)   // true
        print(store.undoManager.undoName ?? "")   // "Rename"
        try store.undoManager.undo()       // both objects back as they were; the change is pending until save()
        try store.undoManager.redo()
        store.undoManager.levelsOfUndo = 50   // 0 = unlimited (default 100)
        store.undoManager.isEnabled = false   // e.g. around a bulk import
        #expect(list.title == "Road trip" && song.title == "New title")
        #expect(!store.undoManager.isEnabled)
        store.close()
    }
}
