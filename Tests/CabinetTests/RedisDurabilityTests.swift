import Cabinet
import CabinetRedis
import CabinetStorage
import Foundation
import Testing

/// A flushed save on Redis (`save(durability: .flushed)`): the server must
/// have it in its append-only file, fsynced, when the save returns. A server
/// that cannot promise it (no append-only file, or one fsynced once a second,
/// and no `WAITAOF`) refuses it before anything is sent: nothing written, the
/// changes pending, and the same save goes through once the server is
/// configured for it.
@Suite struct RedisDurabilityTests {
    @Test(arguments: [["--appendonly", "no"], ["--appendonly", "yes", "--appendfsync", "everysec"]])
    func aServerThatCannotFlushRefusesTheSaveWithNothingWritten(_ arguments: [String]) throws {
        let server = try RedisBackendTests.OwnServer(arguments)
        // Redis 7.2 and later confirm a flush with WAITAOF whatever appendfsync says: everysec is no refusal there.
        if arguments.contains("everysec") && Self.knowsWaitAOF(server) { return }
        let store = try ObjectStore(backend: RedisBackend(url: server.url, store: "music"))
        try store.register(Song.self, Playlist.self)
        let first = Song(); first.title = "default"
        store.insert(first)
        try store.save()
        let second = Song(); second.title = "flushed"
        let list = Playlist(); list.title = "both"; list.songs = [first, second]
        // (An insert reserves its row on the server, a save of its own: before the store is looked at.)
        store.insert(second); store.insert(list)
        let keys = server.cli("KEYS", "*").split(separator: "\n").sorted()
        let version = server.cli("GET", "{music}/version"), songs = server.cli("HLEN", "{music}:Song")
        let refused = expectCabinetError({ try store.save(durability: .flushed) }) { $0.code == .durabilityUnavailable }
        let reason = try #require(refused?.reason, "the save was not refused as durabilityUnavailable")
        #expect(reason.contains("appendfsync always") && reason.contains("appendonly yes"), "\(reason)")
        #expect(store.hasUnsavedChanges, "a refused save keeps its changes pending")
        #expect(server.cli("KEYS", "*").split(separator: "\n").sorted() == keys, "the refused save wrote keys")
        #expect(server.cli("GET", "{music}/version") == version, "the refused save counted a save")
        #expect(server.cli("HLEN", "{music}:Song") == songs, "the refused save wrote a song")

        // Configured for it: the same save goes through, at once flushed.
        server.cli("CONFIG", "SET", "appendonly", "yes")
        server.cli("CONFIG", "SET", "appendfsync", "always")
        try store.save(durability: .flushed)
        #expect(!store.hasUnsavedChanges)
        store.close()
        let again = try ObjectStore(backend: RedisBackend(url: server.url, store: "music"))
        try again.register(Song.self, Playlist.self)
        #expect(try again.fetchAll(Song.self).map(\.title).sorted() == ["default", "flushed"])
        #expect(try again.fetchAll(Playlist.self).first?.songs.map(\.title) == ["default", "flushed"])
        again.close()
    }

    /// Whether the server knows WAITAOF (COMMAND INFO answers a nil for a command it does not know).
    static func knowsWaitAOF(_ server: RedisBackendTests.OwnServer) -> Bool {
        server.cli("COMMAND", "INFO", "WAITAOF").contains("waitaof")
    }

    /// On a server that cannot flush, a flushed pool block fails alone,
    /// before it runs: the default blocks it would have joined in a group
    /// commit go through.
    @Test func aFlushedBlockOnAServerThatCannotFlushFailsAlone() async throws {
        let server = try RedisBackendTests.OwnServer(["--appendonly", "no"])
        let pool = try StorePool(backend: RedisBackend(url: server.url, store: "music"), classes: [Song.self])
        let ran = Locked(false)
        // The first block holds the writer queue while the others queue up behind it, to be grouped with it.
        async let first: Void = pool.write { store in
            Thread.sleep(forTimeInterval: 0.3)
            let song = Song(); song.title = "first"
            store.insert(song)
        }
        try await Task.sleep(for: .milliseconds(50))
        async let flushed: Void = pool.write(durability: .flushed) { store in
            ran.withLock { $0 = true }
            let song = Song(); song.title = "flushed"
            store.insert(song)
        }
        async let last: Void = pool.write { store in
            let song = Song(); song.title = "last"
            store.insert(song)
        }
        var refusal: (any Error)?
        do { try await flushed } catch { refusal = error }
        try await first
        try await last
        guard let error = refusal else {
            Issue.record("the flushed block was not refused")
            return
        }
        #expect((error as? CabinetError)?.code == .durabilityUnavailable, "\(error)")
        #expect(!ran.withLock { $0 }, "the flushed block ran on a server that cannot flush")
        let titles = try await pool.read { store in try store.fetchAll(Song.self).map(\.title).sorted() }
        #expect(titles == ["first", "last"])
        try await pool.close()
    }

    /// A server that fsyncs every write keeps a flushed save across its own
    /// death: killed at once after the save returns, it reads the save back
    /// from its append-only file.
    @Test func aFlushedSaveOutlivesTheServerKilledRightAfter() throws {
        let server = try RedisBackendTests.OwnServer(["--appendonly", "yes", "--appendfsync", "always"])
        let store = try ObjectStore(backend: RedisBackend(url: server.url, store: "music"))
        try store.register(Song.self)
        let song = Song(); song.title = "kept"
        store.insert(song)
        try store.save(durability: .flushed)
        store.close()
        kill(server.pid, SIGKILL)
        server.waitUntilGone()
        server.restart()
        let again = try ObjectStore(backend: RedisBackend(url: server.url, store: "music"))
        try again.register(Song.self)
        #expect(try again.fetchAll(Song.self).map(\.title) == ["kept"])
        again.close()
    }
}
