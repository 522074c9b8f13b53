@testable import Cabinet
import Foundation
import Testing

/// Stores left in states a red-team pass found: planted restore folders, a
/// backup that lost its format marker, a class file or the named buffers gone
/// while a journal or the catalog still names them, a last row ID damaged onto
/// a gap. Each is refused with an error that says what to do, and nothing is
/// lost or written outside the store.
@Suite struct HostileStoreTests {
    private func titles(_ path: String) throws -> [String] {
        let store = try ObjectStore(path: path)
        defer { store.close() }
        try store.register(Song.self, Playlist.self)
        return try store.fetchAll(Song.self).map(\.title).sorted()
    }

    @Test func aRestoreFolderThatIsALinkIsRefusedAndNothingOutsideIsTouched() throws {
        let store = try makeSongStore()
        let victim = try TemporaryDirectory()
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim.path + "/thesis.txt"))
        try FileManager.default.createSymbolicLink(atPath: store.path + "/.cabinet-restore", withDestinationPath: victim.path)
        let error = expectCabinetError({ _ = try ObjectStore(path: store.path) }) {
            guard $0.code == .notAStore, let reason = $0.reason else { return false }
            return reason.contains("not a directory") && reason.contains("Move the folder")
        }
        #expect(error != nil)
        #expect(FileManager.default.fileExists(atPath: victim.path + "/thesis.txt"))
        try FileManager.default.removeItem(atPath: store.path + "/.cabinet-restore")
        #expect(try titles(store.path) == ["s0", "s1", "s2"])
    }

    @Test func aRestoreFolderWithAnythingButFilesOrAnEmptyListIsRefusedNamingIt() throws {
        let store = try makeSongStore()
        let staging = store.path + "/.cabinet-restore"
        try FileManager.default.createDirectory(atPath: staging + "/sub", withIntermediateDirectories: true)
        #expect(expectCabinetError({ _ = try ObjectStore(path: store.path) }) {
            guard $0.code == .notAStore, let reason = $0.reason else { return false }
            return reason.contains("'sub'") && reason.contains(staging)
        } != nil)
        try FileManager.default.removeItem(atPath: staging + "/sub")
        try Data("\n".utf8).write(to: URL(fileURLWithPath: staging + "/.cabinet-manifest"))
        #expect(expectCabinetError({ _ = try ObjectStore(path: store.path) }) {
            guard $0.code == .malformedRecord, let reason = $0.reason else { return false }
            return reason.contains("empty")
        } != nil)
        try FileManager.default.removeItem(atPath: staging)
        #expect(try titles(store.path) == ["s0", "s1", "s2"], "no table was removed")
    }

    @Test func aBackupThatLostItsFormatMarkerIsNotRestoredAsPlain() throws {
        let source = try makeSongStore()
        let target = try makeSongStore(songs: 1)
        for name in [".cabinet-format", ".cabinet-catalog"] { try FileManager.default.removeItem(atPath: source.path + "/" + name) }
        let error = expectCabinetError({ try ObjectStore.restore(from: source.path, to: target.path) }) {
            guard $0.code == .unsupportedFormat, let reason = $0.reason else { return false }
            return reason.contains("carry checksums")
        }
        #expect(error != nil)
        #expect(try titles(target.path) == ["s0"])
        #expect(throws: CabinetError.self) { _ = try StoreVerifier.verify(path: source.path) }
    }

    @Test func aJournalNamingAClassWhoseFileIsGoneDoesNotCreateItAgain() throws {
        let store = try makeSongStore(songs: 5)
        let backend = FailingBackend(try TokyoCabinetBackend(directory: store.path))
        let opened = try ObjectStore(backend: backend)
        try opened.register(Song.self, Playlist.self)
        let list = try #require(try opened.fetchAll(Playlist.self).first)
        let song = Song(); song.title = "new"; opened.insert(song); list.songs.append(song)
        backend.failCommitOf = "Song"
        backend.commitFailures = 2
        #expect(throws: CabinetError.self) { try opened.save() }    // committed in part: the journal stays
        opened.close()
        try FileManager.default.removeItem(atPath: store.path + "/Song")
        let error = expectCabinetError({ _ = try ObjectStore(path: store.path) }) {
            guard $0.code == .missingClassFile, let location = $0.location, let classID = $0.classID else { return false }
            return location.className == "Song" && classID == 0
        }
        #expect(error != nil)
        #expect(!FileManager.default.fileExists(atPath: store.path + "/Song"))
    }

    @Test func namedBuffersWhoseFileIsGoneAreAnErrorNotEmpty() throws {
        let store = try makeSongStore()
        try FileManager.default.removeItem(atPath: store.path + "/NamedBuffers")
        let opened = try ObjectStore(path: store.path)
        try opened.register(Song.self, Playlist.self)
        let missing: (CabinetError) -> Bool = {
            guard $0.code == .missingClassFile, let location = $0.location else { return false }
            return location.file.hasSuffix("/NamedBuffers")
        }
        #expect(expectCabinetError({ _ = try opened.namedBuffer(forName: "Favorite") }, where: missing) != nil)
        try opened.setNamedBuffer(DataBuffer(), forName: "Other")
        #expect(expectCabinetError({ try opened.save() }, where: missing) != nil)
        #expect(!FileManager.default.fileExists(atPath: store.path + "/NamedBuffers"))
        opened.close()
    }

    @Test func anInsertNeverOverwritesARowWhenTheLastRowIDIsUnprotected() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/store"
        let store = try ObjectStore(path: path, options: .init(recordFormat: .plain))
        try store.register(Song.self)
        var songs: [Song] = []
        for i in 0..<5 { let s = Song(); s.title = "orig\(i)"; store.insert(s); songs.append(s) }   // rows 2…6
        try store.save()
        store.delete(songs[1])      // row 3 becomes a gap
        try store.save()
        store.close()
        var metadata = try #require(RawTokyoCabinet.read(path + "/Song")[RawTokyoCabinet.rowKey(1)])
        metadata[0] = 2; metadata[1] = 0; metadata[2] = 0; metadata[3] = 0     // damaged down onto the gap
        RawTokyoCabinet.write(path + "/Song", [(RawTokyoCabinet.rowKey(1), metadata)])
        let reopened = try ObjectStore(path: path)
        try reopened.register(Song.self)     // row 3 is free, so this passes
        for i in 0..<2 { let s = Song(); s.title = "new\(i)"; reopened.insert(s) }
        let error = expectCabinetError({ try reopened.save() }) {
            guard $0.code == .malformedMetadata, let reason = $0.reason else { return false }
            return reason.contains("row 4") && reason.contains("nothing was written")
        }
        #expect(error != nil)
        reopened.close()
        let records = RawTokyoCabinet.read(path + "/Song")
        #expect(records[RawTokyoCabinet.rowKey(3)] == nil && records.count == 5, "nothing was written")
    }

    /// A backup's class file damaged in each way a restore can't read: the
    /// restore is refused before anything in the store changes.
    @Test(arguments: ["link", "fifo", "empty", "random", "directory", "missing", "named buffers empty"])
    func aBackupWithAFileThatIsNoTableIsNotRestored(damage: String) throws {
        let backup = try makeSongStore()
        let target = try makeSongStore(songs: 1)
        let song = backup.path + "/Song"
        switch damage {
        case "link":
            try FileManager.default.moveItem(atPath: song, toPath: backup.path + "/.elsewhere")
            try FileManager.default.createSymbolicLink(atPath: song, withDestinationPath: backup.path + "/.elsewhere")
        case "fifo":
            try FileManager.default.removeItem(atPath: song)
            #expect(mkfifo(song, 0o644) == 0)
        case "empty":
            try Data().write(to: URL(fileURLWithPath: song))
        case "random":
            try Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 151 &+ 7) }).write(to: URL(fileURLWithPath: song))
        case "directory":
            try FileManager.default.removeItem(atPath: song)
            try FileManager.default.createDirectory(atPath: song, withIntermediateDirectories: false)
        case "missing":
            try FileManager.default.removeItem(atPath: song)
        default:
            try Data().write(to: URL(fileURLWithPath: backup.path + "/NamedBuffers"))
        }
        let error = expectCabinetError({ try ObjectStore.restore(from: backup.path, to: target.path) }) {
            $0.code == .notAStore && ($0.reason ?? "").contains("nothing was restored")
        }
        #expect(error != nil, "\(damage)")
        #expect(try titles(target.path) == ["s0"], "the store is as it was (\(damage))")
        let tool = try run(cabinetToolPath, ["restore", backup.path, target.path])
        #expect(tool.status != 0 && !tool.output.contains("Restored"), "\(damage): \(tool.output)")
        #expect(try titles(target.path) == ["s0"])
    }
}
