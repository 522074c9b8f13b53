@testable import Cabinet
import CabinetRedis
import Foundation
import Observation
import Synchronization
import Testing

/// How many times an `onChange` ran (it runs on the thread that changed the property).
final class ChangeCount: Sendable {
    private let count = Atomic<Int>(0)
    var value: Int { count.load(ordering: .relaxed) }
    func add() { count.add(1, ordering: .relaxed) }
}

/// Runs `read` inside `withObservationTracking` and counts its `onChange` calls.
func tracking<T>(_ read: () -> T) -> ChangeCount {
    let changes = ChangeCount()
    _ = withObservationTracking(read, onChange: { changes.add() })
    return changes
}

/// `StoredObject` in Swift's Observation: a store opened `observable` makes its
/// objects' `@Stored` properties visible to `withObservationTracking`.
@Suite struct ObservationTests {
    static let observable = ObjectStore.Options(observable: true)

    @Test(arguments: BackendKind.allCases)
    func settingATrackedPropertyFiresAndSettingAnotherDoesNot(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open(options: Self.observable)
        defer { store.close() }
        let song = Song(); song.title = "Bohemian Rhapsody"
        let other = Song(); other.title = "Other"
        store.insert(song); store.insert(other)
        try store.save()

        let changes = tracking { song.title }
        song.seconds = 354                      // not read inside the block
        other.title = "Another"                 // the same property of another object
        #expect(changes.value == 0)
        song.title = "Killer Queen"
        #expect(changes.value == 1)
        song.title = "Somebody to Love"         // onChange is once per tracking
        #expect(changes.value == 1)
        #expect(store.hasUnsavedChanges, "the change is still recorded for the save")
    }

    @Test(arguments: BackendKind.allCases)
    func anInPlaceMutationFires(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open(options: Self.observable)
        defer { store.close() }
        let list = Playlist(); list.title = "Car"
        let song = Song()
        store.insert(list); store.insert(song)

        let changes = tracking { list.songs.count }
        list.title = "Road trip"
        #expect(changes.value == 0)
        list.songs.append(song)                 // _modify
        #expect(changes.value == 1)
        #expect(list.songs.map(\.rowID) == [song.rowID])
    }

    @Test(arguments: BackendKind.allCases)
    func readingAFaultIsTrackedAndLoadsIt(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        var store = try fixture.open(options: Self.observable)
        let song = Song(); song.title = "Fault"
        let list = Playlist(); list.songs = [song]
        store.insert(song); store.insert(list)
        try store.save()
        let (listRow, songRow) = (list.rowID, song.rowID)
        store.close()

        store = try fixture.open(options: Self.observable)
        defer { store.close() }
        let fetched = try #require(try store.fetch(Playlist.self, rowID: listRow))
        let fault = try #require(fetched.songs.first)
        #expect(!fault.hasContent)
        var title = ""
        let changes = tracking { title = fault.title }
        #expect(title == "Fault" && fault.hasContent, "the read loaded the fault")
        #expect(changes.value == 0, "loading a fault is no change")
        fault.title = "Loaded"
        #expect(changes.value == 1)
        #expect(fault.rowID == songRow)
    }

    @Test(arguments: BackendKind.allCases)
    func undoAndRedoFire(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open(options: Self.observable)
        defer { store.close() }
        let song = Song(); song.title = "Before"
        store.insert(song)
        try store.save()

        store.undoManager.beginGroup(named: "Rename")
        song.title = "After"
        store.undoManager.endGroup()

        var changes = tracking { song.title }
        try store.undoManager.undo()
        #expect(changes.value == 1)
        #expect(song.title == "Before")
        changes = tracking { song.title }
        try store.undoManager.redo()
        #expect(changes.value == 1)
        #expect(song.title == "After")
    }

    @Test(arguments: BackendKind.allCases)
    func aStoreThatIsNotObservableIsNotTracked(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open()
        defer { store.close() }
        let song = Song()
        store.insert(song)
        let changes = tracking { song.title }
        song.title = "Unseen"
        #expect(changes.value == 0, "Options.observable is off by default")
        #expect(!song.contentState.contains(.observable) && !song.contentState.contains(.observed))
    }

    @Test func aFreedObjectLeavesNoRegistrar() throws {
        let fixture = try StoreFixture(.memory)
        weak var freed: Song?
        var id: ObjectIdentifier?
        do {
            let store = try fixture.open(options: Self.observable)
            let song = Song()
            store.insert(song)
            _ = tracking { song.title }
            #expect(song.contentState.contains(.observed))
            id = ObjectIdentifier(song)
            #expect(ObjectObservation.hasRecord(for: id!))
            freed = song
            store.close()
        }
        #expect(freed == nil)
        #expect(!ObjectObservation.hasRecord(for: id!), "its deinit dropped its registrar")
    }

    /// ChangeTrackingAndUndo.md's sample (its lines, in order, with checks between them).
    @Test func theCatalogSampleRuns() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/music"
        let store = try ObjectStore(path: path, options: .init(observable: true))
        defer { store.close() }
        try store.register(Song.self)
        let song = Song(); song.title = "Bohemian Rhapsody"
        store.insert(song)
        let changes = ChangeCount()
        withObservationTracking {
            print(song.title)                 // a fault read here is loaded, and tracked
        } onChange: {
            print("the title is changing")    // not for song.seconds, nor another song's title
            changes.add()
        }
        song.seconds = 1
        #expect(changes.value == 0)
        song.title = "Killer Queen"           // onChange runs here, before the new value is set
        #expect(changes.value == 1)
    }

    @Test func anotherProcessesSaveTakenInFires() throws {
        let name = TestRedis.newStoreName()
        let a = try ObjectStore(backend: try TestRedis.backend(store: name))
        try a.register(Song.self)
        let song = Song(); song.title = "a's"
        a.insert(song)
        try a.save()

        let bBackend = try TestRedis.backend(store: name)
        let b = try ObjectStore(backend: bBackend, options: Self.observable)
        try b.register(Song.self)
        let seen = try #require(try b.fetch(Song.self, rowID: song.rowID))
        let changes = tracking { seen.title }
        song.title = "a's again"
        try a.save()
        #expect(RedisOtherProcessesTests.waitForAnnouncement(bBackend))
        try b.refresh()                          // seen becomes a fault: its observers hear of it
        #expect(changes.value == 1)
        #expect(seen.title == "a's again")
        a.close(); b.close()
    }
}
