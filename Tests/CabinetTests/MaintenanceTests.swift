@testable import Cabinet
import Foundation
import Testing

@Suite struct MaintenanceTests {
    private func makeStore(songs: Int = 3, format: RecordFormat = .checksummed) throws -> TemporaryDirectory {
        try makeSongStore(songs: songs, format: format)
    }

    @Test func infoListsClassesRowsVersionsAndFormats() throws {
        let directory = try makeStore(format: .plain)
        RawTokyoCabinet.write(directory.path + "/Legacy", [(RawTokyoCabinet.rowKey(1), [5, 0, 0, 0, 0, 7]), (RawTokyoCabinet.rowKey(2), [0])])
        let info = try StoreInfo(path: directory.path)
        #expect(info.tables.map(\.name) == ["Legacy", "NamedBuffers", "Playlist", "Song"])
        let song = try #require(info.tables.first { $0.name == "Song" })
        #expect(song.records == 4 && song.lastRowID == 4 && song.classVersion == 1 && song.metadataFormat == "cabinet")
        #expect(song.bytes > 0)
        let legacy = try #require(info.tables.first { $0.name == "Legacy" })
        #expect(legacy.metadataFormat == "bnr" && legacy.classID == 7 && legacy.lastRowID == 5)
        #expect(info.tables.first { $0.name == "NamedBuffers" }?.lastRowID == nil)
        #expect(!info.journalPending)
    }

    @Test func verifyFindsNothingInAGoodStoreAndNamesEachDamage() throws {
        let directory = try makeStore(format: .plain)
        #expect(try StoreVerifier.verify(path: directory.path).isEmpty)
        RawTokyoCabinet.write(directory.path + "/Song", [
            (Array("bad".utf8), [1]),                    // a key that is not a row ID
            (RawTokyoCabinet.rowKey(900), [1, 0, 0, 0, 0, 0, 0, 0, 0]),   // beyond the last row ID
            (RawTokyoCabinet.rowKey(3), []),             // no version byte
        ])
        RawTokyoCabinet.write(directory.path + "/Orphan", [(RawTokyoCabinet.rowKey(2), [1])])   // records, no metadata
        try Data("CABINETJ?".utf8).write(to: URL(fileURLWithPath: directory.path + "/" + TokyoCabinetBackend.journalFileName))
        let problems = try StoreVerifier.verify(path: directory.path)
        let text = problems.map(\.description).joined(separator: "\n")
        #expect(problems.count == 5, "\(text)")
        #expect(text.contains("key of 3 bytes"))
        #expect(text.contains("row 900 is beyond the last row ID handed out (4)"))
        #expect(text.contains("class Song, row 3") && text.contains("empty"))
        #expect(text.contains("Orphan") && text.contains("no metadata row"))
        #expect(text.contains("journal"))
    }

    @Test(arguments: BackendKind.allCases)
    func backupIsTheLastSaveWhileTheStoreGoesOn(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open()
        let song = Song(); song.title = "saved"; store.insert(song)
        try store.save()
        song.title = "unsaved"
        let destination = fixture.directory.path + "/backup"
        try store.backup(to: destination)
        song.title = "after the backup"             // the store goes on being used
        try store.save()
        // Not empty any more: refused, saying why and what to do (not "check the permissions").
        let refusal = expectCabinetError({ try store.backup(to: destination) }) { $0.code == .cannotAccessDirectory }
        #expect(refusal.map { "\($0)".contains("it is not empty, and a backup goes into a new or empty directory; choose another") && !"\($0)".contains("permissions") } == true)
        store.close()

        let copy = try ObjectStore(path: destination)
        try copy.register(Song.self, Playlist.self, Album.self, Node.self)
        #expect(try copy.fetchAll(Song.self).map(\.title) == ["saved"])
        let added = Song(); copy.insert(added)
        // The copy keeps the last row ID handed out (on Redis, the end of the rows reserved).
        #expect(kind.reservesRows ? added.rowID > song.rowID : added.rowID == 3, "the copy keeps the row ID sequence")
        copy.close()
    }

    @Test func restoreReplacesTheStoreAndRefusesAMissingBackup() throws {
        let directory = try makeStore(songs: 2)
        let backup = directory.path + "-backup"
        defer { try? FileManager.default.removeItem(atPath: backup) }
        do {
            let store = try ObjectStore(path: directory.path)
            try store.backup(to: backup)
            try store.register(Song.self, Playlist.self)
            for song in try store.fetchAll(Song.self) { store.delete(song) }
            try store.save()
            store.close()
        }
        #expect(throws: CabinetError.self) { try ObjectStore.restore(from: directory.path + "-nowhere", to: directory.path) }
        try ObjectStore.restore(from: backup, to: directory.path)
        let store = try ObjectStore(path: directory.path)
        try store.register(Song.self, Playlist.self)
        #expect(try store.fetchAll(Song.self).map(\.title).sorted() == ["s0", "s1"])
        var favorites = try #require(try store.namedBuffer(forName: "Favorite"))
        #expect(try favorites.readReferences(to: Song.self).count == 2)
        store.close()
    }

    @Test func compactShrinksAFileWithFreeSpace() throws {
        let directory = try makeStore(songs: 3_000)
        let store = try ObjectStore(path: directory.path)
        try store.register(Song.self, Playlist.self)
        store.undoManager.isEnabled = false
        for list in try store.fetchAll(Playlist.self) { list.songs = [] }
        for song in try store.fetchAll(Song.self) where song.rowID % 10 != 0 {
            song.title = String(repeating: "long title ", count: 20)    // grown records move, leaving free blocks
        }
        try store.save()
        let before = try StoreInfoSize.bytes(directory.path + "/Song")
        try store.compact()
        let after = try StoreInfoSize.bytes(directory.path + "/Song")
        #expect(after < before)
        #expect(try store.fetchAll(Song.self).count == 3_000)
        store.close()
    }

    @Test func theCommandLineToolReportsDamageWithItsExitStatus() throws {
        let directory = try makeStore(format: .plain)
        let tool = cabinetToolPath
        let info = try run(tool, ["info", directory.path])
        #expect(info.status == 0 && info.output.contains("Song") && info.output.contains("cabinet"))
        #expect(try run(tool, ["verify", directory.path]).status == 0)
        RawTokyoCabinet.write(directory.path + "/Song", [(RawTokyoCabinet.rowKey(3), [])])
        let verify = try run(tool, ["verify", directory.path])
        #expect(verify.status == 1 && verify.output.contains("row 3"))
        let missing = try run(tool, ["restore", directory.path + "/none", directory.path])
        #expect(missing.status != 0 && missing.output.contains("no backup directory"))

        // backup, compact and restore through the tool, on a healthy store.
        let healthy = try makeStore(songs: 5)
        let copy = healthy.path + "-copy"
        defer { try? FileManager.default.removeItem(atPath: copy) }
        #expect(try run(tool, ["backup", healthy.path, copy]).status == 0)
        #expect(try StoreVerifier.verify(path: copy).isEmpty)
        let compact = try run(tool, ["compact", healthy.path])
        #expect(compact.status == 0 && compact.output.contains("Compacted"))
        #expect(try run(tool, ["restore", copy, healthy.path]).status == 0)
        let restored = try ObjectStore(path: healthy.path)
        try restored.register(Song.self, Playlist.self)
        #expect(try restored.count(of: Song.self) == 5)
        restored.close()
    }

    @Test func aDamagedHashIndexIsFoundByVerifyAndRebuiltByCompact() throws {
        let directory = try makeStore(songs: 200)
        // Zero the bucket array (it follows Tokyo Cabinet's 256-byte header): records stay, lookups miss.
        let file = try FileHandle(forUpdating: URL(fileURLWithPath: directory.path + "/Song"))
        try file.seek(toOffset: 256)
        try file.write(contentsOf: Data(count: 131_071 * 4))
        try file.close()
        let problems = try StoreVerifier.verify(path: directory.path)
        #expect(problems.contains { $0.reason.contains("hash index is damaged") })
        #expect(problems.count > 100)

        let store = try ObjectStore(path: directory.path)
        try store.compact()
        store.close()
        #expect(try StoreVerifier.verify(path: directory.path).isEmpty)
        let reopened = try ObjectStore(path: directory.path)
        try reopened.register(Song.self, Playlist.self)
        #expect(try reopened.fetch(Song.self, rowID: 150)?.title == "s148")
        #expect(try reopened.fetchAll(Playlist.self).first?.songs.count == 200)
        reopened.close()
    }
}

enum StoreInfoSize {
    static func bytes(_ path: String) throws -> UInt64 {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as? UInt64) ?? 0
    }
}
