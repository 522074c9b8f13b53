import Cabinet
import CabinetRedis
import Foundation
import Testing

/// `store.load(objects)`: many faults, one read per class.
@Suite struct BatchLoadTests {
    @Test(arguments: BackendKind.allCases)
    func loadingAPlaylistsSongsReadsThemInOneCallAndNothingAfter(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        do {
            let store = try fixture.open()
            let list = Playlist(); list.title = "Car"
            list.songs = (0..<40).map { i in let s = Song(); s.title = "S\(i)"; s.seconds = UInt32(i); store.insert(s); return s }
            store.insert(list)
            let unsaved = Song(); unsaved.title = "never saved"
            store.insert(unsaved)
            try store.save()
            store.close()
        }
        let (store, backend) = try fixture.openCounting()
        let list = try #require(try store.fetchAll(Playlist.self).first)
        list.songs[5].title = "changed, not saved"          // a loaded, changed object is left as it is
        let extra = Song(); extra.title = "inserted"
        store.insert(extra)
        backend.resetCounts()
        try store.load(list.songs + [extra])
        #expect(backend.batchReads["Song"] == 1 && backend.reads(of: "Song") == 0, "one call for the class")
        #expect(list.songs.allSatisfy { $0.hasContent })
        #expect(list.songs.map(\.title) == (0..<40).map { $0 == 5 ? "changed, not saved" : "S\($0)" })
        #expect(list.songs.map(\.seconds) == (0..<40).map(UInt32.init))
        #expect(backend.reads(of: "Song") == 0 && backend.batchReads["Song"] == 1, "reading them reads nothing more")
        try store.load(list.songs)                           // nothing left to load: no read at all
        #expect(backend.batchReads["Song"] == 1)
        store.close()
    }

    /// On Redis, a class's faults are one `HMGET` (the server counts the calls), not one `HGET` each;
    /// a fault whose row another process deleted is a missingRecord error.
    @Test func onRedisTheFaultsOfAClassAreOneRoundTrip() throws {
        let server = try RedisBackendTests.OwnServer()
        let writer = try ObjectStore(backend: RedisBackend(url: server.url, store: "music"))
        try writer.register(Song.self, Playlist.self)
        let list = Playlist(); list.title = "Car"
        list.songs = (0..<100).map { i in let s = Song(); s.title = "S\(i)"; writer.insert(s); return s }
        writer.insert(list)
        try writer.save()
        let reader = try ObjectStore(backend: RedisBackend(url: server.url, store: "music"))
        try reader.register(Song.self, Playlist.self)
        let songs = try #require(try reader.fetchAll(Playlist.self).first).songs
        server.cli("CONFIG", "RESETSTAT")
        try reader.load(songs)
        #expect(songs.map(\.title) == (0..<100).map { "S\($0)" })
        let stats = server.cli("INFO", "commandstats")
        #expect(stats.contains("cmdstat_hmget:calls=1,"), "\(stats)")
        #expect(!stats.contains("cmdstat_hget:"), "no read per object")

        // Another process deletes one of the songs a third one still holds as a fault.
        let third = try ObjectStore(backend: RedisBackend(url: server.url, store: "music"))
        try third.register(Song.self, Playlist.self)
        let held = try #require(try third.fetchAll(Playlist.self).first).songs
        writer.delete(list.songs[7])
        try writer.save()
        let missing = expectCabinetError({ try third.load(held) }) { $0.code == .missingRecord }
        #expect(missing?.location?.rowID == list.songs[7].rowID, "\(String(describing: missing))")
        #expect(held[6].hasContent && held[6].title == "S6", "the faults before it are loaded")
        writer.close(); reader.close(); third.close()
    }
}
