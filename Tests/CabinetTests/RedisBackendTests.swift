import Cabinet
import CabinetRedis
import Foundation
import CabinetStorage
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What only the Redis backend has: URLs and passwords, a server that goes
/// away or fills up, several processes saving one store, the layout on the
/// server. The rest of the store's behaviour is the shared suite's (`BackendKind.redis`).
@Suite struct RedisBackendTests {
    /// A server of the test's own, for tests that stop it, fill it up or set a password.
    final class OwnServer {
        let port: Int
        let directory: TemporaryDirectory
        private var process: Process
        let arguments: [String]

        /// The password the server was started with (`--requirepass`), if any.
        var password: String? { arguments.firstIndex(of: "--requirepass").map { arguments[$0 + 1] } }

        init(_ arguments: [String] = []) throws {
            directory = try TemporaryDirectory()
            self.arguments = arguments
            (port, process) = TestRedis.launch(arguments, directory: directory.path)
        }

        deinit { stop() }

        var url: String { "redis://127.0.0.1:\(port)/0" }

        /// Runs `redis-cli` against the server (with `password`, if it has one).
        @discardableResult
        func cli(_ words: String..., password: String? = nil) -> String {
            let cli = Process()
            cli.executableURL = URL(fileURLWithPath: "/usr/bin/redis-cli")
            cli.arguments = ["-p", String(port)] + (password.map { ["-a", $0, "--no-auth-warning"] } ?? []) + words
            let output = Pipe()
            cli.standardOutput = output
            cli.standardError = FileHandle.nullDevice
            try? cli.run()
            cli.waitUntilExit()
            return String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        }

        /// Stops the server at once (`SHUTDOWN NOSAVE`: only what its AOF holds survives).
        func stop() {
            cli("SHUTDOWN", "NOSAVE", password: password)
            for _ in 0..<200 where cli("PING", password: password).hasPrefix("PONG") { usleep(25_000) }
        }

        /// The server's process, for a test that kills it (SIGKILL) from another thread.
        var pid: pid_t { process.processIdentifier }

        /// Waits until the server's process is gone (after a kill).
        func waitUntilGone() { process.waitUntilExit() }

        /// Starts it again on the same port and directory (an AOF there is read back).
        /// It may still be loading that file when this returns (it answers `LOADING`).
        func restart() {
            (_, process) = TestRedis.launch(arguments, directory: directory.path, port: port)
        }
    }

    /// A store on the test server named `name`, with `Song` registered: one of several processes on it.
    static func songs(_ name: String) throws -> ObjectStore {
        let store = try ObjectStore(backend: TestRedis.backend(store: name))
        try store.register(Song.self)
        return store
    }

    /// Process A's store with two saved songs, x and y, and process B's, opened after that save.
    static func twoProcessesWithXAndY(_ name: String) throws -> (a: ObjectStore, b: ObjectStore, x: Song, y: Song) {
        let a = try songs(name)
        let x = Song(); x.title = "x"
        let y = Song(); y.title = "y"
        a.insert(x); a.insert(y)
        try a.save()
        return (a, try songs(name), x, y)
    }

    @Test func urlsParseAndNeverShowThePassword() throws {
        let address = try RedisAddress(url: "redis://alice:s3cret%21@127.0.0.1:6380/2/music")
        #expect(address.host == "127.0.0.1" && address.port == 6380 && address.database == 2 && address.store == "music")
        #expect(address.username == "alice" && address.password == "s3cret!")
        #expect("\(address)" == "redis://127.0.0.1:6380/2/music")
        let plain = try RedisAddress(url: "redis://localhost", store: "notes")
        #expect(plain.port == 6379 && plain.database == 0 && plain.password == nil && plain.store == "notes")
        let ipv6 = try RedisAddress(url: "redis://[::1]:7000/0/x")
        #expect(ipv6.host == "::1" && ipv6.port == 7000 && "\(ipv6)" == "redis://[::1]:7000/0/x")
        // Bad input: a clear error that still hides the password.
        for bad in ["redis://:s3cret@host:port/0/x", "redis://:s3cret@host/zero/x", "http://host/0/x", "redis://:s3cret@host/0",
                    "redis://host/0/{tag}", "redis://host/0/a*b", "redis://host/0/x/y"] {
            let error = expectCabinetError({ _ = try RedisAddress(url: bad) }) { $0.code == .notAStore }
            #expect(error != nil, "\(bad)")
            #expect(!"\(error.map { "\($0)" } ?? "")".contains("s3cret"), "\(bad)")
        }
        var options = RedisBackend.Options(); options.password = "s3cret"
        var shown = ""
        dump(options, to: &shown)
        dump(address, to: &shown)
        print(options, to: &shown)
        #expect(!shown.contains("s3cret") && shown.contains("***"), "\(shown)")
        #expect(throws: CabinetError.self) { _ = try RedisAddress(host: "h", port: 0, store: "x") }
        #expect(throws: CabinetError.self) { _ = try RedisAddress(host: "h", store: String(repeating: "a", count: 129)) }
    }

    @Test func aServerWithAPasswordNeedsItAndTheErrorsNeverShowIt() throws {
        let server = try OwnServer(["--requirepass", "correct-horse"])
        let none = expectCabinetError({ _ = try RedisBackend(url: server.url, store: "music") }) { $0.code == .backendFailure }
        #expect(none?.underlying?.domain == .redis && none?.underlying?.message.contains("NOAUTH") == true, "\(String(describing: none))")
        var wrong = RedisBackend.Options(); wrong.password = "battery-staple"
        let refused = expectCabinetError({ _ = try RedisBackend(host: "127.0.0.1", port: server.port, store: "music", options: wrong) }) { $0.code == .backendFailure }
        #expect(refused?.operation == "authenticate")
        #expect(!"\(String(describing: refused))".contains("battery-staple"))
        // The password in the URL: the store works, and its path does not show it.
        let backend = try RedisBackend(url: "redis://:correct-horse@127.0.0.1:\(server.port)/0/music")
        #expect(!backend.path.contains("correct-horse") && backend.path == "redis://127.0.0.1:\(server.port)/0/music")
        let store = try ObjectStore(backend: backend)
        try store.register(Song.self)
        let song = Song(); song.title = "Under Pressure"
        store.insert(song)
        try store.save()
        store.close()
        let again = try ObjectStore(backend: RedisBackend(url: "redis://:correct-horse@127.0.0.1:\(server.port)/0/music"))
        try again.register(Song.self)
        #expect(try again.fetchAll(Song.self).map(\.title) == ["Under Pressure"])
        again.close()
    }

    @Test func aServerThatGoesAwayIsAClearErrorAndTheChangesWaitForItsReturn() throws {
        let server = try OwnServer(["--appendonly", "yes", "--appendfsync", "always"])
        var options = RedisBackend.Options(); options.connectTimeout = .milliseconds(500)
        let store = try ObjectStore(backend: RedisBackend(url: server.url, store: "music", options: options))
        try store.register(Song.self, Playlist.self)
        let first = Song(); first.title = "one"
        store.insert(first)
        try store.save()

        server.stop()
        let second = Song(); second.title = "two"
        let list = Playlist(); list.title = "both"; list.songs = [first, second]
        store.insert(second); store.insert(list)
        let down = expectCabinetError({ try store.save() }) { $0.code == .backendFailure }
        #expect(down?.underlying?.domain == .redis, "\(String(describing: down))")
        #expect(store.hasUnsavedChanges, "a failed save keeps its changes pending")

        server.restart()
        try store.save()                                  // connects again
        store.close()
        let again = try ObjectStore(backend: RedisBackend(url: server.url, store: "music"))
        try again.register(Song.self, Playlist.self)
        #expect(try again.fetchAll(Song.self).map(\.title).sorted() == ["one", "two"])
        #expect(try again.fetchAll(Playlist.self).first?.songs.map(\.title) == ["one", "two"])
        again.close()
    }

    @Test func aFullServerRefusesTheWholeSaveAndKeepsItsChangesPending() throws {
        let server = try OwnServer(["--maxmemory", "3mb", "--maxmemory-policy", "noeviction"])
        let store = try ObjectStore(backend: RedisBackend(url: server.url, store: "music"))
        try store.register(Song.self, Playlist.self)
        var saved = 0
        var full: CabinetError?
        for round in 0..<200 where full == nil {
            let batch = (0..<50).map { index -> Song in
                let song = Song(); song.title = "\(round)-\(index)-" + String(repeating: "x", count: 2_000); return song
            }
            let list = Playlist(); list.title = "round \(round)"; list.songs = batch
            for song in batch { store.insert(song) }
            store.insert(list)
            do {
                try store.save()
                saved += batch.count
            } catch let error as CabinetError {
                full = error
            }
        }
        let error = try #require(full, "3 MB should fill up")
        #expect(error.code == .backendFailure && error.underlying?.message.contains("OOM") == true, "\(error)")
        #expect(store.hasUnsavedChanges)
        // Nothing of the refused save is on the server: neither its songs nor its playlist.
        let reader = try ObjectStore(backend: RedisBackend(url: server.url, store: "music"))
        try reader.register(Song.self, Playlist.self)
        #expect(try reader.count(of: Song.self) == saved)
        #expect(try reader.count(of: Playlist.self) == saved / 50)
        reader.close()
        // Room again: the same save goes through.
        server.cli("CONFIG", "SET", "maxmemory", "0")
        try store.save()
        #expect(!store.hasUnsavedChanges)
        #expect(try store.count(of: Song.self) == saved + 50)
        store.close()
    }

    @Test func twoProcessesSaveDifferentObjectsAndConflictOnTheSameOne() throws {
        let name = TestRedis.newStoreName()
        let (a, b, x, y) = try Self.twoProcessesWithXAndY(name)
        let bx = try #require(try b.fetch(Song.self, rowID: x.rowID))
        let by = try #require(try b.fetch(Song.self, rowID: y.rowID))

        // Different objects: both saves land.
        x.title = "x by a"
        try a.save()
        by.title = "y by b"
        try b.save()

        // The same object, changed here before the other's save: the second save
        // is refused whole, its change still pending.
        _ = bx.title   // its content as of now (a fault since a's save, read again)
        bx.title = "x by b"
        by.title = "y again by b"
        x.title = "x again by a"
        try a.save()
        let conflict = expectCabinetError({ try b.save() }) { $0.code == .saveConflict }
        #expect(conflict?.path == (try TestRedis.backend(store: name)).path && conflict?.reason?.contains("row \(x.rowID)") == true,
                "\(String(describing: conflict))")
        #expect(b.hasUnsavedChanges)
        let reader = try Self.songs(name)
        #expect(try reader.fetchAll(Song.self).map(\.title).sorted() == ["x again by a", "y by b"], "nothing of the refused save")
        reader.close()
        a.close(); b.close()
    }

    @Test func recordsOnTheServerAreTheBytesOfTheFile() throws {
        let directory = try TemporaryDirectory()
        let redisName = TestRedis.newStoreName()
        for backend in [try TokyoCabinetBackend(directory: directory.path + "/store") as any StorageBackend, try TestRedis.backend(store: redisName)] {
            let store = try ObjectStore(backend: backend)
            try store.register(Song.self, Playlist.self)
            let songs = (0..<20).map { index -> Song in let song = Song(); song.title = "song \(index)"; song.seconds = UInt32(index); return song }
            for song in songs { store.insert(song) }
            let list = Playlist(); list.title = "all"; list.songs = songs
            store.insert(list)
            try store.save()
            store.close()
        }
        func records(_ backend: any StorageBackend, _ table: String) throws -> [[UInt8]: [UInt8]] {
            var out: [[UInt8]: [UInt8]] = [:]
            try backend.openTable(named: table).forEach { key, value in out[Array(key)] = Array(value); return true }
            return out
        }
        let file = try TokyoCabinetBackend(directory: directory.path + "/store")
        let redis = try TestRedis.backend(store: redisName)
        for table in ["Song", "Playlist"] {
            var fromFile = try records(file, table), fromServer = try records(redis, table)
            #expect(fromFile.count == 21 || fromFile.count == 2)
            // Row 1, the class metadata, ends with two random salt words each store draws;
            // its last row ID on the server is the end of the rows the saving process
            // reserved (docs/FORMAT.md), at or after the file's. The version and class ID are the same.
            let metadata: [UInt8] = [1, 0, 0, 0]
            let fileRow = fromFile.removeValue(forKey: metadata), serverRow = fromServer.removeValue(forKey: metadata)
            let fileMetadata = try #require(fileRow), serverMetadata = try #require(serverRow)
            #expect(fileMetadata[4..<6] == serverMetadata[4..<6])
            func lastRowID(_ bytes: [UInt8]) -> UInt32 { bytes.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)) } }
            #expect(lastRowID(serverMetadata) >= lastRowID(fileMetadata))
            #expect(fromFile == fromServer, "\(table): the same keys and bytes, checksums included")
        }
        #expect(try redis.tableNames() == file.tableNames())
        #expect(try redis.readCatalog() == file.readCatalog())
        file.close(); redis.close()
    }
}

extension RedisBackendTests {
    /// `cabinet copy` a store directory to Redis and back, and `info`, `verify`
    /// and `backup` of the store on the server, through the tool itself.
    @Test func theCommandLineCopiesAStoreToRedisAndBackAndLooksAfterIt() throws {
        let directory = try TemporaryDirectory()
        let original = try ObjectStore(path: directory.path + "/music")
        try original.register(Song.self, Playlist.self)
        let songs = (0..<30).map { index -> Song in let song = Song(); song.title = "song \(index)"; return song }
        for song in songs { original.insert(song) }
        let list = Playlist(); list.title = "all"; list.songs = songs
        original.insert(list)
        var greeting = DataBuffer(); greeting.writeString("hello")
        try original.setNamedBuffer(greeting, forName: "Greeting")
        try original.save()
        original.close()

        let tool = cabinetToolPath
        let url = TestRedis.url + "/" + TestRedis.newStoreName()
        let copy = try run(tool, ["copy", directory.path + "/music", url])
        #expect(copy.status == 0 && copy.output.contains("Copied"), "\(copy.output)")
        let info = try run(tool, ["info", url])
        #expect(info.status == 0 && info.output.contains("Song") && info.output.contains("Playlist"), "\(info.output)")
        #expect(try run(tool, ["verify", url]).status == 0)
        let backup = try run(tool, ["backup", url, directory.path + "/backup"])
        #expect(backup.status == 0, "\(backup.output)")
        let back = try run(tool, ["copy", url, directory.path + "/back"])
        #expect(back.status == 0, "\(back.output)")
        for path in [directory.path + "/backup", directory.path + "/back"] {
            #expect(try StoreVerifier.verify(path: path).isEmpty)
            let store = try ObjectStore(path: path)
            try store.register(Song.self, Playlist.self)
            #expect(try store.fetchAll(Playlist.self).first?.songs.map(\.title) == songs.map(\.title), "\(path)")
            var named = try #require(try store.namedBuffer(forName: "Greeting"))
            #expect(try named.readString() == "hello")
            store.close()
        }
        // On the server, the store opens as any other.
        let remote = try ObjectStore(backend: RedisBackend(url: url))
        try remote.register(Song.self, Playlist.self)
        #expect(try remote.count(of: Song.self) == 30)
        remote.close()
        let bad = try run(tool, ["info", "redis://127.0.0.1:1/0/x"])
        #expect(bad.status != 0 && bad.output.contains("redis://127.0.0.1:1/0/x"), "\(bad.output)")
    }
}

extension RedisBackendTests {
    /// A process that moved past another's save (it changed other rows) and
    /// then took it in inserts on a row of its own, never one of the other's
    /// (each takes its rows from a range it reserved: `RedisRowReservationTests`).
    @Test func aProcessThatTookInAnothersInsertsInsertsOnARowOfItsOwn() throws {
        let name = TestRedis.newStoreName()
        let (a, b, x, _) = try Self.twoProcessesWithXAndY(name)
        let theirs = Song(); theirs.title = "b's"
        b.insert(theirs)
        try b.save()                                       // rows 1 (metadata) and 4

        x.title = "x by a"
        try a.save()                                       // row 2 only: no overlap, a moves past b's save
        try a.refresh()                                    // and takes it in
        let mine = Song(); mine.title = "a's"
        a.insert(mine)
        #expect(mine.rowID != theirs.rowID && mine.rowID > x.rowID)
        try a.save()
        let reader = try Self.songs(name)
        #expect(try reader.fetchAll(Song.self).map(\.title).sorted() == ["a's", "b's", "x by a", "y"])
        reader.close(); a.close(); b.close()
    }

    /// Two processes registering new classes at once: each class's catalog
    /// entry is merged into the catalog inside its save's `MULTI`, so both
    /// registrations succeed, with different class IDs, and none is dropped.
    @Test func twoProcessesRegisteringClassesAtOnceBothGetTheirs() throws {
        let name = TestRedis.newStoreName()
        let a = try Self.songs(name), b = try Self.songs(name)
        try a.register(Album.self)
        try b.register(Node.self)   // its catalog is the one it read before a's registration
        let album = Album(); album.name = "a's"
        a.insert(album)
        try a.save()
        let node = Node(); node.label = "b's"
        b.insert(node)
        try b.save()
        a.close(); b.close()
        let catalog = try #require(try TestRedis.backend(store: name).readCatalog())
        #expect(Set(catalog.tables.keys).isSuperset(of: ["Song", "Album", "Node"]), "\(catalog.tables.keys.sorted())")
        let tags = ["Song", "Album", "Node"].compactMap { catalog.tables[$0] ?? nil }
        #expect(Set(tags).count == 3, "three classes, three class IDs: \(catalog.tables)")
        let again = try ObjectStore(backend: TestRedis.backend(store: name))
        try again.register(Song.self, Album.self, Node.self)
        #expect(try again.fetchAll(Album.self).map(\.name) == ["a's"])
        #expect(try again.fetchAll(Node.self).map(\.label) == ["b's"])
        again.close()
    }

    /// A class ID another process took in the catalog after this one read it
    /// (here a table catalogued on its own) makes the registration's save a
    /// conflict with nothing written; the store reads the catalog again and
    /// registers the class with the next free ID.
    @Test func aClassIDTakenMeanwhileIsChosenAgain() throws {
        let name = TestRedis.newStoreName()
        let store = try Self.songs(name)
        let songID = try #require(try TestRedis.backend(store: name).readCatalog()?.tables["Song"] ?? nil)
        // The ID register would choose next, taken by another process's catalog entry.
        var other = WriteBatch()
        other.addToCatalog(table: "Elsewhere", tag: songID + 1)
        let otherProcess = try TestRedis.backend(store: name)
        try otherProcess.commit(other)
        otherProcess.close()
        try store.register(Album.self)
        let album = Album(); album.name = "kept"
        store.insert(album)
        try store.save()
        store.close()
        let catalog = try #require(try TestRedis.backend(store: name).readCatalog())
        let albumID = try #require(catalog.tables["Album"] ?? nil)
        #expect(albumID != songID && albumID != songID + 1, "\(catalog.tables)")
        #expect(catalog.tables["Elsewhere"] == .some(songID + 1), "\(catalog.tables)")
        let again = try ObjectStore(backend: TestRedis.backend(store: name))
        try again.register(Song.self, Album.self)
        #expect(try again.fetchAll(Album.self).map(\.name) == ["kept"])
        again.close()
    }
}

extension RedisBackendTests {
    /// A save whose reply never comes (the server holds its EXEC: writes are
    /// paused, and the client times out): it is reported as not written, and it
    /// is not, even after the pause ends (the backend closes the old connection
    /// on the server, `CLIENT KILL ID`; Redis 7 also drops a held transaction
    /// whose client went away, so this passes without the kill too); the retry
    /// writes it once.
    @Test func aSaveWhoseReplyIsLostIsSettledNeverHalfAndNeverTwice() throws {
        let server = try OwnServer()
        var options = RedisBackend.Options(); options.commandTimeout = .milliseconds(300)
        let store = try ObjectStore(backend: RedisBackend(url: server.url, store: "music", options: options))
        try store.register(Song.self, Playlist.self)
        let song = Song(); song.title = "held"
        let list = Playlist(); list.title = "list"; list.songs = [song]
        store.insert(song); store.insert(list)
        server.cli("CLIENT", "PAUSE", "1500", "WRITE")
        let lost = expectCabinetError({ try store.save() }) { $0.code == .backendFailure }
        #expect(lost != nil, "the save timed out")
        #expect(store.hasUnsavedChanges)
        usleep(1_700_000)                                   // the pause is over: a held EXEC would run now
        let reader = try ObjectStore(backend: RedisBackend(url: server.url, store: "music"))
        try reader.register(Song.self, Playlist.self)
        #expect(try reader.count(of: Song.self) == 0 && reader.count(of: Playlist.self) == 0, "nothing of the lost save")
        reader.close()
        try store.save()
        #expect(try store.count(of: Song.self) == 1)
        store.close()
        let after = try ObjectStore(backend: RedisBackend(url: server.url, store: "music"))
        try after.register(Song.self, Playlist.self)
        #expect(try after.fetchAll(Playlist.self).map { $0.songs.map(\.title) } == [["held"]])
        after.close()
    }
}
