@testable import Cabinet
import Foundation
import Testing

/// A class that keeps the buffer it was read from, as an app might by mistake.
final class BufferKeeper: StoredObject {
    @Stored var title = ""
    var keptBuffer: DataBuffer?

    override func read(from buffer: inout DataBuffer) throws {
        keptBuffer = buffer
        title = try buffer.readString()
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(title)
    }
}

/// The unretained references (objects to their class entry, the undo manager and
/// buffers to their store) must never outlive what they point at, and a row
/// never has two live instances. Each of these once read freed memory; the
/// suite under AddressSanitizer (`make asan`) is what proves no read is left,
/// and each test also checks what the app sees.
@Suite struct MemorySafetyTests {
    @Test(arguments: BackendKind.allCases)
    func theUndoManagerOutlivesItsStore(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        var store: ObjectStore? = try fixture.open()
        let manager = store!.undoManager
        let song = Song(); song.title = "kept"
        store!.insert(song)
        weak let freed = store
        store = nil
        #expect(freed == nil, "nothing else holds the store")
        #expect(manager.store == nil)
        // Each of these touched the freed store.
        manager.isEnabled = false
        manager.isEnabled = true
        manager.beginGroup(named: "after")
        manager.endGroup()
        #expect(!manager.canUndo)
        try manager.undo()
        try manager.redo()
        #expect(song.store == nil && song.title == "kept")
    }

    @Test(arguments: BackendKind.allCases)
    func aBufferKeptBeyondReadNamesItsRecordAfterTheStoreIsGone(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        var store: ObjectStore? = try fixture.open(BufferKeeper.self, Song.self)
        let keeper = BufferKeeper(); keeper.title = "mistake"
        store!.insert(keeper)
        try store!.save()
        store = nil
        store = try fixture.open(BufferKeeper.self, Song.self)
        let fetched = try #require(try store!.fetch(BufferKeeper.self, rowID: keeper.rowID))
        var kept = try #require(fetched.keptBuffer)
        let path = store!.path
        store = nil                                       // its class entries are freed

        #expect(try kept.readString() == "mistake")
        let error = expectCabinetError({ _ = try kept.readUInt64() }, where: { error in
            guard error.code == .truncatedRecord, let location = error.location else { return false }
            return location.className == "BufferKeeper" && location.rowID == keeper.rowID
        })
        #expect(error != nil, "the error names the class and row the bytes came from")
        #expect(throws: CabinetError.storeClosed(path: path)) { _ = try kept.readReference(to: Song.self) }
        #expect(throws: CabinetError.storeClosed(path: path)) { _ = try kept.readAnyReferences() }
    }

    @Test(arguments: BackendKind.allCases)
    func aFaultMadeBeforeItsRowIsHandedOutIsNeverReplacedByAnInsert(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        var store: ObjectStore? = try fixture.open()
        var early: Song? = try store!.fault(Song.self, rowID: 2)   // no song has row 2 yet
        let song = Song(); song.title = "inserted"
        store!.insert(song)
        #expect(song.rowID != 2, "row 2 has a live instance already")
        #expect(try store!.fault(Song.self, rowID: 2) === early)
        #expect(try store!.fault(Song.self, rowID: song.rowID) === song)
        try store!.save()
        #expect(expectCabinetError({ try store!.load(early!) }, where: {
            $0.code == .missingRecord
        }) != nil, "the early fault's row holds nothing")

        song.title = "edited"
        try store!.save()
        store = nil
        early = nil                                       // freed after its store: it must not touch it
        store = try fixture.open()
        #expect(try store!.fetchAll(Song.self).map(\.title) == ["edited"])
        store!.close()
    }

    @Test(arguments: BackendKind.allCases)
    func undoingTheDeleteOfASongAPlaylistStillListsKeepsOneInstance(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        var store: ObjectStore? = try fixture.open()
        let song = Song(); song.title = "doomed"
        do {
            let list = Playlist(); list.title = "L"; list.songs = [song]
            store!.insert(song); store!.insert(list)
            try store!.save()
        }
        store!.delete(song)                               // no delete rule: the playlist still lists it
        try store!.save()
        #expect(song.store == nil)
        // The playlist, read again, refers to the row: a new fault for it.
        var listed: Song? = try #require(try store!.fetchAll(Playlist.self).first?.songs.first)
        #expect(listed !== song)
        #expect(listed!.rowID == song.rowID)

        try store!.undoManager.undo()                     // the song comes back
        let live = try #require(try store!.fetch(Song.self, rowID: song.rowID))
        #expect(live === listed, "the row has one live instance: the one the playlist holds")
        #expect(listed!.title == "doomed")
        listed!.title = "edited"
        try store!.save()
        store = nil
        listed = nil                                      // freed after its store
        store = try fixture.open()
        #expect(try store!.fetchAll(Song.self).map(\.title) == ["edited"], "the edit was saved, once")
        store!.close()
    }

    @Test(arguments: BackendKind.allCases)
    func redoingAnInsertKeepsAFaultMadeForItsRowInTheMeantime(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open()
        let song = Song(); song.title = "first"
        store.insert(song)
        try store.undoManager.undo()                      // the insert goes, the row ID stays with the song
        let fault = try store.fault(Song.self, rowID: song.rowID)
        #expect(fault !== song)
        try store.undoManager.redo()
        #expect(try store.fault(Song.self, rowID: song.rowID) === fault, "the live instance stays the one handed out")
        #expect(fault.title == "first")
        try store.save()
        store.close()
        let reopened = try fixture.open()
        #expect(try reopened.fetchAll(Song.self).map(\.title) == ["first"])
        reopened.close()
    }

    @Test(arguments: BackendKind.allCases)
    func undoingAnEditOfAnInsertDeletedWhileUndoWasOffPutsBackOnlyItsValues(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open()
        let song = Song(); song.title = "v1"
        store.undoManager.beginGroup(named: "insert")
        store.insert(song)
        store.undoManager.endGroup()
        store.undoManager.beginGroup(named: "edit")
        song.title = "v2"
        store.undoManager.endGroup()
        store.undoManager.isEnabled = false
        store.delete(song)                                // never saved, not recorded: it has no row now
        store.undoManager.isEnabled = true
        #expect(song.rowID == 0 && song.store == nil)

        try store.undoManager.undo()                      // the edit: its values come back, not a row
        #expect(song.title == "v1")
        #expect(song.store == nil)
        try store.save()
        store.close()
        let reopened = try fixture.open()
        #expect(try reopened.fetchAll(Song.self).isEmpty, "nothing was written, at row 0 or anywhere")
        reopened.close()
    }
}
