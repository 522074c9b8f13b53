@testable import Cabinet
import Foundation
import Testing

/// Registering classes: by inserting, by a list, twice, and a class a store or pool does not know.
@Suite struct ClassRegistrationTests {
    @Test func insertingAnObjectOfAnUnregisteredClassRegistersIt() throws {
        let fixture = try StoreFixture(.tokyoCabinet)
        let store = try ObjectStore(path: fixture.storePath)
        let song = Song(); song.title = "unannounced"
        store.insert(song)   // Song was never registered: it is now
        #expect(song.rowID > 0)
        try store.save()
        store.close()
        let reopened = try fixture.open(Song.self)
        defer { reopened.close() }
        #expect(try reopened.fetchAll(Song.self).map(\.title) == ["unannounced"])
    }

    /// A pool's blocks cannot register a class (the pool's class list is fixed): the
    /// object stays out, and the block's save says why instead of stopping the program.
    @Test func aPoolBlockInsertingAnUnlistedClassFailsItsSave() async throws {
        let directory = try TemporaryDirectory()
        let pool = try StorePool(path: directory.path + "/store", classes: [Playlist.self])
        let error = await #expect(throws: CabinetError.self) {
            try await pool.write { store in
                let song = Song(); song.title = "not in the pool's classes"
                store.insert(song)
                try store.save()
            }
        }
        #expect(error.map { "\($0)".contains("cannot register Song") } == true, "\(String(describing: error))")
        let count = try await pool.read { store in try store.count(of: Playlist.self) }
        #expect(count == 0)
        try await pool.close()
    }

    @Test func aListOfClassesRegistersEachOfThem() throws {
        let fixture = try StoreFixture(.tokyoCabinet)
        let store = try ObjectStore(path: fixture.storePath)
        let model: [StoredObject.Type] = [Song.self, Playlist.self]
        try store.register(model)
        let song = Song(); song.title = "listed"
        let list = Playlist(); list.songs = [song]
        store.insert(song); store.insert(list)
        try store.save()
        store.close()
        let reopened = try ObjectStore(path: fixture.storePath)
        defer { reopened.close() }
        try reopened.register([Song.self, Playlist.self, Song.self])   // again, and twice: nothing more happens
        #expect(try reopened.fetchAll(Playlist.self).first?.songs.map(\.title) == ["listed"])
    }

    @Test(arguments: BackendKind.allCases)
    func registeringAnUnknownClassForFetchThrows(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open(Song.self)
        #expect(throws: CabinetError.classNotRegistered(className: "Playlist")) { _ = try store.fetchAll(Playlist.self) }
        try store.register(Song.self, Song.self)      // twice is fine
        store.close()
    }
}
