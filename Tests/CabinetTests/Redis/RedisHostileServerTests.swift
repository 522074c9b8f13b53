@testable import Cabinet
import CabinetRedis
import Foundation
import Synchronization
import Testing

/// A server that lies (through ``HostileRedisProxy``, in front of the real
/// test server): every loop and retry of the client ends, with a clear error,
/// and no lie is read as an answer (no count of 0, no "plain" store, no
/// "nothing was written" for a save the server ran).
@Suite struct RedisHostileServerTests {
    /// Options for a client of a lying server: a short command timeout, so a wait for it ends soon.
    static var options: RedisBackend.Options {
        var options = TestRedis.options
        options.commandTimeout = .seconds(2)
        return options
    }

    /// A store with a few songs, written straight to the server.
    static func storeWithSongs(_ count: Int = 3) throws -> String {
        let name = TestRedis.newStoreName()
        let store = try ObjectStore(backend: TestRedis.backend(store: name))
        try store.register(Song.self)
        for index in 0..<count {
            let song = Song(); song.title = "song \(index)"
            store.insert(song)
        }
        try store.save()
        store.close()
        return name
    }

    /// The error `body` threw within 20 s (a test fails instead of hanging).
    static func error(within seconds: Double = 20, _ body: @escaping @Sendable () throws -> Void) -> CabinetError? {
        let started = ContinuousClock.now
        guard let result = finishing(within: seconds, body) else {
            Issue.record("still running after \(seconds) s: the client loops on the lying server")
            return nil
        }
        #expect(ContinuousClock.now - started < .seconds(seconds))
        guard case .failure(let error) = result else { Issue.record("no error"); return nil }
        guard let cabinet = error as? CabinetError else { Issue.record("not a CabinetError: \(error)"); return nil }
        return cabinet
    }

    @Test func aServerThatAnswersLoadingForeverFailsClearly() throws {
        let name = try Self.storeWithSongs()
        // PING says it is ready; every read says it is still loading.
        let proxy = try HostileRedisProxy { words in
            words.first?.uppercased() == "HGET" ? .forge("-LOADING Redis is loading the dataset in memory\r\n") : .forward
        }
        defer { proxy.stop() }
        let url = proxy.url(store: name)
        let error = Self.error {
            let store = try ObjectStore(backend: RedisBackend(url: url, options: Self.options))
            try store.register(Song.self)
            _ = try store.fetch(Song.self, rowID: ClassMetadata.firstObjectRowID)
        }
        #expect(error?.underlying?.message.contains("loading") == true, "\(String(describing: error))")
    }

    @Test(arguments: ["same", "counting"])
    func anHSCANWhoseCursorNeverEndsFailsClearly(_ cursors: String) throws {
        let name = try Self.storeWithSongs()
        let next = Atomic<Int>(1)
        let proxy = try HostileRedisProxy { words in
            guard words.first?.uppercased() == "HSCAN" else { return .forward }
            let cursor = cursors == "same" ? 7 : next.add(1, ordering: .sequentiallyConsistent).newValue
            return .forge("*2\r\n$\(String(cursor).count)\r\n\(cursor)\r\n*0\r\n")
        }
        defer { proxy.stop() }
        let url = proxy.url(store: name)
        let error = Self.error {
            let backend = try RedisBackend(url: url, options: Self.options)
            try backend.openTable(named: "Song").forEach { _, _ in true }
        }
        #expect(error?.code == .backendFailure, "\(String(describing: error))")
        #expect(error?.underlying?.message.contains("HSCAN") == true, "\(String(describing: error))")
    }

    @Test func aSCANWhoseCursorNeverEndsFailsClearly() throws {
        let name = try Self.storeWithSongs()
        let proxy = try HostileRedisProxy { words in
            words.first?.uppercased() == "SCAN" ? .forge("*2\r\n$2\r\n42\r\n*0\r\n") : .forward
        }
        defer { proxy.stop() }
        let url = proxy.url(store: name)
        let error = Self.error {
            _ = try RedisBackend(url: url, options: Self.options).storageProblems()
        }
        #expect(error?.underlying?.message.contains("SCAN") == true, "\(String(describing: error))")
    }

    @Test func countOfThrowsWhenTheConnectionFails() throws {
        let name = try Self.storeWithSongs()
        let proxy = try HostileRedisProxy { words in words.first?.uppercased() == "HLEN" ? .hangUp : .forward }
        defer { proxy.stop() }
        let url = proxy.url(store: name)
        let error = Self.error {
            let store = try ObjectStore(backend: RedisBackend(url: url, options: Self.options))
            try store.register(Song.self)
            let count = try store.count(of: Song.self)
            Issue.record("count(of:) gave \(count) though the server never answered")
        }
        #expect(error?.code == .backendFailure, "\(String(describing: error))")
    }

    @Test func infoThrowsWhenTheServerCannotSayATablesSize() throws {
        let name = try Self.storeWithSongs()
        let proxy = try HostileRedisProxy { words in words.first?.uppercased() == "MEMORY" ? .hangUp : .forward }
        defer { proxy.stop() }
        let url = proxy.url(store: name)
        let error = Self.error {
            let info = try StoreInfo(backend: RedisBackend(url: url, options: Self.options))
            Issue.record("info gave \(info.tables.map(\.bytes)) bytes though the server never answered")
        }
        #expect(error?.code == .backendFailure, "\(String(describing: error))")
    }

    @Test func aFormatMarkerOfTheWrongTypeIsNotAPlainStore() throws {
        let name = try Self.storeWithSongs()
        let proxy = try HostileRedisProxy { words in
            words.count == 2 && words[0].uppercased() == "GET" && words[1].hasSuffix("format") ? .forge(":1\r\n") : .forward
        }
        defer { proxy.stop() }
        let url = proxy.url(store: name)
        let error = Self.error {
            let store = try ObjectStore(backend: RedisBackend(url: url, options: Self.options))
            Issue.record("opened as \(store.recordFormat)")
        }
        #expect(error?.reason?.contains("answered GET of the format marker with the integer 1") == true, "\(String(describing: error))")
    }

    /// An index range answered with keys out of order (or outside the range
    /// asked) is an error, not an empty or wrong answer.
    @Test func aRangeReplyOutOfOrderIsAnError() throws {
        let name = TestRedis.newStoreName()
        let writer = try ObjectStore(backend: TestRedis.backend(store: name))
        try writer.register(Track.self)
        for seconds in [10, 20, 30] as [UInt32] { writer.insert(Track("t\(seconds)", by: "a", seconds: seconds)) }
        try writer.save()
        writer.close()
        let armed = Atomic<Bool>(false)
        let proxy = try HostileRedisProxy { words in
            guard words.first?.uppercased() == "ZRANGEBYLEX", armed.load(ordering: .sequentiallyConsistent) else { return .forward }
            return .forge("*2\r\n$2\r\nzz\r\n$2\r\naa\r\n")
        }
        defer { proxy.stop() }
        let url = proxy.url(store: name)
        let error = Self.error {
            let store = try ObjectStore(backend: RedisBackend(url: url, options: Self.options))
            try store.register(Track.self)
            armed.store(true, ordering: .sequentiallyConsistent)
            let found = try store.fetch(Track.self, where: \.seconds, in: 15...25)
            Issue.record("the range answered \(found.map(\.title))")
        }
        #expect(error?.reason?.contains("out of order or outside the range") == true, "\(String(describing: error))")
    }

    /// The server runs the save; the client is told something else. The save
    /// must not say "nothing was written": it finds its save in the log.
    @Test(arguments: ["-ERR forged\r\n", "+OK\r\n", "*0\r\n", ":3\r\n"])
    func aForgedReplyToEXECStillFindsTheSaveItRan(_ forged: String) throws {
        try Self.saveThroughAProxy(forging: { words in words.first?.uppercased() == "EXEC" }, with: forged)
    }

    @Test(arguments: ["-ERR forged\r\n", "+OK\r\n"])
    func aForgedReplyToAQueuedCommandStillFindsTheSaveItRan(_ forged: String) throws {
        try Self.saveThroughAProxy(forging: { words in words.first?.uppercased() == "LPUSH" }, with: forged)
    }

    /// A save through a proxy that forges the reply to the first command
    /// `matches` picks (after the server ran it): the save returns, and what it
    /// wrote is there once, as a reader on the real server sees it.
    static func saveThroughAProxy(forging matches: @escaping @Sendable ([String]) -> Bool, with forged: String) throws {
        let name = try Self.storeWithSongs()
        let armed = Atomic<Bool>(false)
        let proxy = try HostileRedisProxy { words in
            guard matches(words), armed.exchange(false, ordering: .sequentiallyConsistent) else { return .forward }
            return .runThenForge(forged)
        }
        defer { proxy.stop() }
        let url = proxy.url(store: name)
        let outcome = finishing(within: 20) {
            let store = try ObjectStore(backend: RedisBackend(url: url, options: Self.options))
            try store.register(Song.self)
            let song = Song(); song.title = "saved once"
            store.insert(song)
            armed.store(true, ordering: .sequentiallyConsistent)
            try store.save()
            #expect(!store.hasUnsavedChanges)
            store.close()
        }
        guard let outcome else { Issue.record("the save hung"); return }
        if case .failure(let error) = outcome { Issue.record("the save threw though the server ran it: \(error)") }
        #expect(proxy.tampered.load(ordering: .sequentiallyConsistent) == 1)
        let reader = try ObjectStore(backend: TestRedis.backend(store: name))
        try reader.register(Song.self)
        #expect(try reader.fetchAll(Song.self).filter { $0.title == "saved once" }.count == 1)
        reader.close()
    }

    /// The connection drops with the save's `EXEC`, and again when the log is
    /// read to find out whether it ran: the save says its outcome is unknown.
    @Test func aLostReplyWhoseLogCannotBeReadLeavesTheOutcomeUnknown() throws {
        let name = try Self.storeWithSongs()
        let stage = Atomic<Int>(0)   // 1: hang up at EXEC; 2: and at the log's read
        let proxy = try HostileRedisProxy { words in
            switch (stage.load(ordering: .sequentiallyConsistent), words.first?.uppercased()) {
            case (1, "EXEC"): stage.store(2, ordering: .sequentiallyConsistent); return .hangUp
            case (2, "LRANGE"): stage.store(0, ordering: .sequentiallyConsistent); return .hangUp
            default: return .forward
            }
        }
        defer { proxy.stop() }
        let url = proxy.url(store: name)
        let error = Self.error {
            let store = try ObjectStore(backend: RedisBackend(url: url, options: Self.options))
            try store.register(Song.self)
            let song = Song(); song.title = "maybe"
            store.insert(song)
            stage.store(1, ordering: .sequentiallyConsistent)
            defer { store.close() }
            try store.save()
        }
        #expect(error?.description.contains("outcome is unknown") == true, "\(String(describing: error))")
    }

    /// A forged reply to `EXEC`, and the log can't be read after it: the save
    /// says its outcome is unknown, keeps its changes, and saving again lands
    /// them once, a big list's included, whether or not the first one did.
    @Test func aSaveWhoseOutcomeIsUnknownIsTriedAgainSafely() throws {
        let name = try Self.storeWithSongs()
        let stage = Atomic<Int>(0)   // 1: forge EXEC's reply; 2: hang up at the log's read
        let proxy = try HostileRedisProxy { words in
            switch (stage.load(ordering: .sequentiallyConsistent), words.first?.uppercased()) {
            case (1, "EXEC"):
                stage.store(2, ordering: .sequentiallyConsistent)
                return .runThenForge("-ERR forged\r\n")
            case (2, "LRANGE"):
                stage.store(0, ordering: .sequentiallyConsistent)
                return .hangUp
            default: return .forward
            }
        }
        defer { proxy.stop() }
        let url = proxy.url(store: name)
        let outcome = finishing(within: 30) { () -> UInt32 in
            let store = try ObjectStore(backend: RedisBackend(url: url, options: Self.options))
            try store.register(Song.self, Shelf.self)
            let shelf = RedisConflictRecoveryTests.insertBigShelf("big", in: store)
            try store.save()
            // The change whose save is forged: an append to the big list and a rename.
            let song = Song(); song.title = "appended"
            store.insert(song)
            shelf.songs.append(song)
            shelf.name = "renamed"
            stage.store(1, ordering: .sequentiallyConsistent)
            let unknown = expectCabinetError({ try store.save() }) { $0.code == .backendFailure }
            #expect(unknown?.description.contains("outcome is unknown") == true, "\(String(describing: unknown))")
            #expect(store.hasUnsavedChanges)
            try store.save()
            store.close()
            return shelf.rowID
        }
        guard case .success(let row)? = outcome else { Issue.record("\(String(describing: outcome))"); return }
        let reader = try ObjectStore(backend: TestRedis.backend(store: name))
        try reader.register(Song.self, Shelf.self)
        let shelf = try #require(try reader.fetch(Shelf.self, rowID: row))
        #expect(shelf.name == "renamed")
        #expect(shelf.songs.count == StoredList<Song>.inlineLimit + 2)
        #expect(shelf.songs.map(\.title).last == "appended")
        #expect(try reader.fetchAll(Song.self).filter { $0.title == "appended" }.count == 1)
        #expect(try StoreVerifier.verify(TestRedis.backend(store: name)).isEmpty)
        reader.close()
    }
}
