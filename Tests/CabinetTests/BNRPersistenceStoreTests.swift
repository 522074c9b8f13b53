@testable import Cabinet
@testable import CabinetStorage
import Foundation
import Testing

/// Stores as BNRPersistence leaves them: class files and `NamedBuffers`, no
/// Cabinet file at all. Each opens, takes writes and reopens any number of times,
/// its records stay BNRPersistence's bytes (no checksum), and nothing is added
/// that BNRPersistence would trip over.
@Suite struct BNRPersistenceStoreTests {
    /// The Mac fixture imported, then stripped of every Cabinet file: what
    /// BNRPersistence itself writes on this machine (Debian's Tokyo Cabinet).
    private func fixtureAsBNRPersistenceLeavesIt(in directory: TemporaryDirectory) throws -> (store: String, expected: [String]) {
        let (macStore, expected) = try MacStoreTests.unpackFixture(into: directory)
        let store = directory.path + "/library"
        _ = try ObjectStore.importStore(from: macStore, to: store)
        for name in try FileManager.default.contentsOfDirectory(atPath: store) where name.hasPrefix(".cabinet") {
            try FileManager.default.removeItem(atPath: store + "/" + name)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: store).sorted() == ["NamedBuffers", "Playlist", "Song"])
        return (store, expected)
    }

    /// One session of an app: open, register, read, insert a song, append it to
    /// the last playlist, save, close. Returns the new song's row ID.
    private func session(_ path: String, title: String) throws -> UInt32 {
        let store = try ObjectStore(path: path)
        defer { store.close() }
        try store.register(Song.self, Playlist.self)
        let playlist = try #require(try store.fetch(Playlist.self, rowID: 20))
        let song = Song(); song.title = title; song.seconds = 7
        store.insert(song)
        playlist.songs.append(song)
        try store.save()
        return song.rowID
    }

    @Test func aBNRPersistenceStoreOpensTakesWritesAndReopensAgainAndAgain() throws {
        let directory = try TemporaryDirectory()
        let (store, expected) = try fixtureAsBNRPersistenceLeavesIt(in: directory)
        var added: [UInt32] = []
        for round in 0..<4 {
            added.append(try session(store, title: "Added \(round)"))
        }
        #expect(added == [1007, 1008, 1009, 1010], "row IDs continue BNRPersistence's sequence across sessions")
        let reader = try ObjectStore(path: store, readOnly: true)
        defer { reader.close() }
        try reader.register(Song.self, Playlist.self)
        let playlist = try #require(try reader.fetch(Playlist.self, rowID: 20))
        #expect(playlist.songs.map(\.rowID) == [951, 958, 965, 972, 979, 1002, 1003] + added)
        #expect(try reader.fetchAll(Song.self).count == 1004 + 4)
        #expect(reader.recordFormat == .plain)
        // The rows the fixture had are as BNRPersistence's reader lists them.
        let untouched = expected.filter { $0.hasPrefix("Song ") }
        let songs = try reader.fetchAll(Song.self).sorted { $0.rowID < $1.rowID }.filter { $0.rowID < 1007 }
        #expect(songs.count == untouched.count)
        #expect(songs.first.map { "Song \($0.rowID) \"\($0.title)\" \($0.seconds)" } == untouched.first)
        reader.close()
        let problems = try StoreVerifier.verify(path: store)
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test func whatCabinetWritesIntoABNRPersistenceStoreStaysBNRPersistencesLayout() throws {
        let directory = try TemporaryDirectory()
        let (store, _) = try fixtureAsBNRPersistenceLeavesIt(in: directory)
        let row = try session(store, title: "Plain")
        _ = try session(store, title: "Again")
        // A plain record: version byte, length-prefixed title, seconds; no CRC-32 after it.
        let record = try #require(RawTokyoCabinet.read(store + "/Song")[RawTokyoCabinet.rowKey(row)])
        #expect(record == [1, 5, 0, 0, 0] + Array("Plain".utf8) + [7, 0, 0, 0])
        let metadata = try #require(RawTokyoCabinet.read(store + "/Song")[RawTokyoCabinet.rowKey(1)])
        #expect(metadata.count == 14 && metadata.prefix(4) == [0xf0, 0x03, 0, 0], "the metadata row keeps its layout")
        // Beside the class files, only Cabinet's hidden files: BNRPersistence opens files by class name.
        let visible = try FileManager.default.contentsOfDirectory(atPath: store).filter { !$0.hasPrefix(".") }.sorted()
        #expect(visible.allSatisfy { ["NamedBuffers", "Playlist", "Song", "StoredLists"].contains($0) }, "\(visible)")
        #expect(try String(contentsOfFile: store + "/.cabinet-format", encoding: .utf8) == RecordFormat.plain.marker)
    }

    @Test func aReaderOfABNRPersistenceStoreWritesNothing() throws {
        let directory = try TemporaryDirectory()
        let (store, _) = try fixtureAsBNRPersistenceLeavesIt(in: directory)
        let before = try MacStoreTests.snapshot(store)
        let reader = try ObjectStore(path: store, readOnly: true)
        try reader.register(Song.self, Playlist.self)
        #expect(try reader.fetchAll(Playlist.self).count == 20)
        reader.close()
        let after = try MacStoreTests.snapshot(store).filter { !$0.key.hasSuffix(".lock") && !$0.key.hasPrefix(".cabinet-commit") }
        #expect(after == before)
    }

    /// An older Cabinet saved into a BNRPersistence store without writing the
    /// marker: the catalog and plain records say what it is.
    @Test func aBNRPersistenceStoreAnOlderCabinetWroteWithoutAMarkerOpensAsPlain() throws {
        let directory = try TemporaryDirectory()
        let (store, _) = try fixtureAsBNRPersistenceLeavesIt(in: directory)
        _ = try session(store, title: "Older")
        try FileManager.default.removeItem(atPath: store + "/.cabinet-format")
        #expect(FileManager.default.fileExists(atPath: store + "/.cabinet-catalog"))
        let row = try session(store, title: "Newer")
        #expect(row == 1008)
        #expect(try String(contentsOfFile: store + "/.cabinet-format", encoding: .utf8) == RecordFormat.plain.marker)
    }

    @Test func aChecksummedStoreThatLostOnlyItsMarkerIsStillRefused() throws {
        let store = try makeSongStore()
        try FileManager.default.removeItem(atPath: store.path + "/.cabinet-format")
        let error = expectCabinetError({ _ = try ObjectStore(path: store.path) }) {
            guard $0.code == .unsupportedFormat, let reason = $0.reason else { return false }
            return reason.contains("carry checksums") && reason.contains("cabinet-record-format checksummed")
        }
        #expect(error != nil)
        #expect(!FileManager.default.fileExists(atPath: store.path + "/.cabinet-format"), "nothing was guessed or written")
    }

    /// Index files' entries carry no trailer: a checksummed store that lost its
    /// marker and catalog is still known by its records, whatever indexes it has.
    @Test func indexFilesDoNotMakeAChecksummedStoreLookPlain() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/store"
        do {
            let store = try ObjectStore(path: path)
            try store.register(Track.self)
            for i in 0..<3 { store.insert(Track("t\(i)", by: "a\(i)")) }
            try store.setNamedBuffer(DataBuffer(), forName: "n")
            try store.save()
            store.close()
        }
        #expect(FileManager.default.fileExists(atPath: path + "/Track.index"))
        for name in [".cabinet-format", ".cabinet-catalog"] { try FileManager.default.removeItem(atPath: path + "/" + name) }
        let error = expectCabinetError({ _ = try ObjectStore(path: path) }) {
            $0.code == .unsupportedFormat && ($0.reason ?? "").contains("carry checksums")
        }
        #expect(error != nil)
    }

    @Test func verifyOfAPlainStoreSaysItChecksStructureOnly() throws {
        let directory = try TemporaryDirectory()
        let (store, _) = try fixtureAsBNRPersistenceLeavesIt(in: directory)
        let plain = try run(cabinetToolPath, ["verify", store])
        #expect(plain.status == 0 && plain.output.contains("no damage found") && plain.output.contains("structure only"), "\(plain.output)")
        let checksummed = try makeSongStore()
        let verified = try run(cabinetToolPath, ["verify", checksummed.path])
        #expect(verified.status == 0 && !verified.output.contains("structure only"), "\(verified.output)")
    }
}
