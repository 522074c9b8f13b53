@testable import Cabinet
import Foundation
import Testing

/// Info, verify, compact, backup and restore go through the backend protocols
/// only, so they work on every backend, not only on Tokyo Cabinet directories.
@Suite struct AnyBackendMaintenanceTests {
    /// A store of 20 songs (half of them deleted since) and a playlist of the rest.
    private func fill(_ store: ObjectStore) throws {
        let list = Playlist(); list.title = "P"
        let songs = (0..<20).map { i in let song = Song(); song.title = "s\(i)"; return song }
        for song in songs { store.insert(song) }
        store.insert(list)
        try store.save()
        for song in songs where song.rowID % 2 == 0 { store.delete(song) }
        list.songs = try store.fetchAll(Song.self).sorted { $0.rowID < $1.rowID }
        try store.save()
    }

    private func titles(_ store: ObjectStore) throws -> [String] {
        try store.fetchAll(Song.self).map(\.title).sorted() + store.fetchAll(Playlist.self).map { "\($0.title) \($0.songs.count)" }
    }

    @Test(arguments: BackendKind.allCases)
    func infoVerifyAndCompactWorkOnEveryBackend(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open(Song.self, Playlist.self)
        try fill(store)
        let before = try titles(store)
        try store.compact()
        #expect(try titles(store) == before)
        store.close()

        let backend = try fixture.backend()
        defer { backend.close() }
        let info = try StoreInfo(backend: backend)
        #expect(info.recordFormat == .checksummed && !info.journalPending && info.pendingRecovery.isEmpty)
        #expect(info.tables.map(\.name) == ["Playlist", "Song"])
        let songs = try #require(info.tables.first { $0.name == "Song" })
        #expect(songs.records == 11 && songs.classID == 0 && songs.metadataFormat == "cabinet")
        #expect(kind.reservesRows ? songs.lastRowID.map { $0 >= 21 } == true : songs.lastRowID == 21)
        #expect(songs.bytes > 0)
        #expect(try StoreVerifier.verify(backend).isEmpty)

        // A record beyond the last row ID, and a catalogued table that is gone.
        let table = try backend.openTable(named: "Song")
        try table.transaction { try [UInt8](repeating: 1, count: 9).withUnsafeBytes { try table.setValue($0, forRow: 900) } }
        var catalog = try #require(try backend.services.readCatalog())
        catalog.tables["Lost"] = .some(7)
        try backend.services.writeCatalog(catalog)
        let problems = try StoreVerifier.verify(backend)
        #expect(problems.contains { $0.location.file == backend.location(ofTable: "Song") && $0.reason.contains("row 900 is beyond") })
        #expect(problems.contains { $0.location.file == backend.location(ofTable: "Lost") && $0.reason.contains("catalog lists this table") })
    }

    @Test func anInMemoryStoreBacksUpToADirectoryAndIntoAnotherBackend() throws {
        let directory = try TemporaryDirectory()
        let store = try ObjectStore(backend: MemoryBackend(name: "scratch"))
        try store.register(Song.self, Playlist.self)
        try fill(store)
        let expected = try titles(store)

        try store.backup(to: directory.path + "/backup")
        #expect(try StoreVerifier.verify(path: directory.path + "/backup").isEmpty)
        #expect(try StoreInfo(path: directory.path + "/backup").recordFormat == .checksummed)
        let snapshot = MemoryBackend(name: "snapshot")
        try store.backup(into: snapshot)
        store.close()

        for backend in [try TokyoCabinetBackend(directory: directory.path + "/backup"), snapshot] as [any StorageBackend] {
            let copy = try ObjectStore(backend: backend)
            try copy.register(Song.self, Playlist.self)
            #expect(try titles(copy) == expected, "\(backend.path)")
            copy.close()
        }
    }

    @Test func aRestoreGoesFromAnyBackendToAnyOtherAndLeavesNothingOfTheOldStore() throws {
        let directory = try makeSongStore(songs: 4)
        let target = MemoryBackend(name: "target")
        do {
            let old = try ObjectStore(backend: target)
            try old.register(Song.self, Album.self)
            old.insert(Album())
            try old.save()
            old.close()
        }
        var reading = TokyoCabinetBackend.Options()
        reading.readOnly = true
        let backup = try TokyoCabinetBackend(directory: directory.path, options: reading)
        try ObjectStore.restore(from: backup, to: target)
        backup.close()
        #expect(try target.tableNames() == ["NamedBuffers", "Playlist", "Song"])
        #expect(try StoreVerifier.verify(target).isEmpty)

        // And back, from memory into a Tokyo Cabinet directory: the directory's restore path.
        let restoredPath = directory.path + "-restored"
        defer { try? FileManager.default.removeItem(atPath: restoredPath) }
        try ObjectStore.restore(from: target, to: TokyoCabinetBackend(directory: restoredPath))
        for backend in [target, try TokyoCabinetBackend(directory: restoredPath)] as [any StorageBackend] {
            let store = try ObjectStore(backend: backend)
            try store.register(Song.self, Playlist.self)
            #expect(try store.fetchAll(Song.self).map(\.title).sorted() == ["s0", "s1", "s2", "s3"], "\(backend.path)")
            #expect(try store.namedBuffer(forName: "Favorite") != nil)
            store.close()
        }
        #expect(throws: CabinetError.self) { try ObjectStore.restore(from: MemoryBackend(), to: target) }   // no tables: not a backup
    }
}

extension AnyBackendMaintenanceTests {
    /// A store still open on a backend whose contents are replaced (a backup into
    /// it, a restore) must not go on saving into tables that are no longer the
    /// backend's: its save throws, and the backend holds exactly the copy.
    @Test(arguments: BackendKind.allCases)
    func aStoreOpenOnAReplacedBackendCannotSaveIntoTheOldTables(_ kind: BackendKind) throws {
        let directory = try TemporaryDirectory()
        let target = try kind.newBackend(in: directory, name: "target")
        let open = try ObjectStore(backend: target)
        try open.register(Song.self)
        let kept = Song(); kept.title = "old"
        open.insert(kept)
        try open.save()

        let source = try ObjectStore(backend: MemoryBackend(name: "source"))
        try source.register(Song.self)
        let copied = Song(); copied.title = "copied"
        source.insert(copied)
        try source.save()
        try source.backup(into: target)
        source.close()

        let late = Song(); late.title = "late"
        open.insert(late)
        let error = expectCabinetError({ try open.save() }) { $0.code == .storeClosed }
        #expect(error != nil, "a save into tables the backend no longer has would be lost without a word")
        #expect(throws: CabinetError.self) { _ = try open.fetchAll(Song.self) }
        open.close()                                     // closes `target` too

        let reopened = try ObjectStore(backend: kind.reopen(target))
        try reopened.register(Song.self)
        #expect(try reopened.fetchAll(Song.self).map(\.title) == ["copied"])
        reopened.close()
    }
}
