import Cabinet
import CabinetRedis
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The Redis server itself killed (SIGKILL) while a save is on its way, at
/// moments spread over the save, and started again from its append-only file
/// (`appendfsync always`): the save is on the server whole or not at all, a
/// save that returned is there, and a save that threw is still pending and
/// lands exactly once when tried again (its own lost `EXEC` is recognised by
/// its token in the store's log, not taken for another process's save).
@Suite struct RedisServerKillTests {
    /// Songs per save: big enough that a save spans many `HSET`s and takes a while.
    static let songsPerSave = 5_000

    @Test func aServerKilledMidSaveLeavesEachSaveWholeOrAbsent() throws {
        let server = try RedisBackendTests.OwnServer(["--appendonly", "yes", "--appendfsync", "always"])
        var options = RedisBackend.Options()
        options.connectTimeout = .milliseconds(500)
        options.commandTimeout = .seconds(5)
        var killedBeforeReply = 0
        for round in 0..<10 {
            let store = try ObjectStore(backend: RedisBackend(url: server.url, store: "music", options: options))
            try store.register(Song.self)
            let title = "round \(round)"
            for _ in 0..<Self.songsPerSave {
                let song = Song(); song.title = title
                store.insert(song)
            }
            // The kill lands somewhere between before the save's first command and after its reply.
            let pid = server.pid
            let killer = Thread {
                usleep(useconds_t(round * 4_000))
                kill(pid, SIGKILL)
            }
            killer.start()
            let saved = (try? store.save()) != nil
            while !killer.isFinished { usleep(1_000) }
            server.waitUntilGone()
            server.restart()

            let found = try Self.count(title, at: server.url)
            #expect(found == 0 || found == Self.songsPerSave, "round \(round): \(found) of a save's \(Self.songsPerSave) songs")
            if saved {
                #expect(found == Self.songsPerSave, "round \(round): a save that returned is on the server")
            } else {
                killedBeforeReply += 1
                #expect(store.hasUnsavedChanges, "round \(round): a save that threw keeps its changes pending")
                try store.save()   // the server is back: the same changes, tried again
                #expect(try Self.count(title, at: server.url) == Self.songsPerSave, "round \(round): the retry lands exactly once")
            }
            store.close()
        }
        // Every round's songs, and nothing else: no save half in, none twice.
        for round in 0..<10 {
            #expect(try Self.count("round \(round)", at: server.url) == Self.songsPerSave)
        }
        #expect(killedBeforeReply > 0, "some kill landed before a save's reply")
    }

    /// How many songs titled `title` the store on the server at `url` holds, read by a new process's store.
    static func count(_ title: String, at url: String) throws -> Int {
        let reader = try ObjectStore(backend: RedisBackend(url: url, store: "music"))
        defer { reader.close() }
        try reader.register(Song.self)
        var count = 0
        try reader.enumerate(Song.self) { song, _ in if song.title == title { count += 1 } }
        return count
    }
}
