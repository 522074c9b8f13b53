@testable import Cabinet
import Foundation
import Testing

/// Damaged files and records: a clear thrown error naming file, class and row; no crash; nothing else lost.
@Suite struct BadInputTests {
    /// Records written by hand below are plain (no checksum), so these stores are plain.
    static let plain = ObjectStore.Options(recordFormat: .plain)

    /// A plain store with two good songs and one playlist, closed, so tests can damage it.
    private func makeStore() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        let store = try ObjectStore(path: directory.path, options: Self.plain)
        try store.register(Song.self, Playlist.self)
        let a = Song(); a.title = "A"; let b = Song(); b.title = "B"
        let list = Playlist(); list.title = "P"; list.songs = [a, b]
        [a, b, list].forEach(store.insert)
        try store.save()
        store.close()
        return directory
    }

    @Test func aPathThatIsAFileIsRefused() throws {
        let directory = try TemporaryDirectory()
        let file = directory.path + "/plain"
        try Data("hello".utf8).write(to: URL(fileURLWithPath: file))
        #expect(throws: CabinetError.notADirectory(path: file)) { _ = try ObjectStore(path: file) }
    }

    @Test func aClassFileThatIsNotADatabaseIsNamedAndOtherClassesStillWork() throws {
        let directory = try makeStore()
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: directory.path + "/Playlist"))
        let store = try ObjectStore(path: directory.path)
        let error = expectCabinetError({ try store.register(Playlist.self) }) {
            guard $0.code == .notADatabase, let location = $0.location else { return false }
            return location.file.hasSuffix("/Playlist")
        }
        #expect(error != nil)
        try store.register(Song.self)
        #expect(try store.fetchAll(Song.self).map(\.title).sorted() == ["A", "B"])
        store.close()
    }

    @Test func aClassFileCutShortIsNamedAndOtherClassesStillWork() throws {
        let directory = try makeStore()
        let path = directory.path + "/Playlist"
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        try FileHandle(forUpdating: URL(fileURLWithPath: path)).truncate(atOffset: UInt64(size / 2))
        let store = try ObjectStore(path: directory.path, options: Self.plain)
        let error = expectCabinetError({ try store.register(Playlist.self) }) {
            guard $0.code == .notADatabase, let location = $0.location else { return false }
            return location.file == path
        }
        #expect(error != nil)
        try store.register(Song.self)
        #expect(try store.fetchAll(Song.self).count == 2)
        store.close()
        #expect(try StoreVerifier.verify(path: directory.path).contains { $0.location.file == path })
    }

    @Test func aZeroFilledClassFileIsNotADatabase() throws {
        let directory = try makeStore()
        try Data(count: 1 << 16).write(to: URL(fileURLWithPath: directory.path + "/Playlist"))
        let store = try ObjectStore(path: directory.path)
        #expect(throws: CabinetError.self) { try store.register(Playlist.self) }
        try store.register(Song.self)
        #expect(try store.fetchAll(Song.self).count == 2)
        store.close()
    }

    @Test func aTruncatedRecordNamesItsClassAndRowAndOtherRowsStillRead() throws {
        let directory = try makeStore()
        RawTokyoCabinet.write(directory.path + "/Song", [(RawTokyoCabinet.rowKey(2), [1, 9, 0, 0, 0, 0x41])])
        let store = try ObjectStore(path: directory.path)
        try store.register(Song.self, Playlist.self)
        let error = expectCabinetError({ _ = try store.fetch(Song.self, rowID: 2) }) {
            guard $0.code == .malformedRecord, let location = $0.location else { return false }
            return location.className == "Song" && location.rowID == 2 && location.file.hasSuffix("/Song")
        }
        #expect(error != nil)
        #expect(error?.description.contains("class Song, row 2") == true)
        #expect(throws: CabinetError.self) { _ = try store.fetchAll(Song.self) }
        #expect(try store.fetch(Song.self, rowID: 3)?.title == "B")
        #expect(try store.fetchAll(Playlist.self).first?.title == "P")
        store.close()
    }

    @Test func aRecordCutShortOfItsFieldsIsATruncatedRecord() throws {
        let directory = try makeStore()
        RawTokyoCabinet.write(directory.path + "/Song", [(RawTokyoCabinet.rowKey(2), [1, 1, 0, 0, 0, 0x41, 7])])
        let store = try ObjectStore(path: directory.path)
        try store.register(Song.self)
        let error = expectCabinetError({ _ = try store.fetch(Song.self, rowID: 2) }) {
            $0.code == .truncatedRecord && $0.location?.rowID == 2 && $0.offset == 6 && $0.needed == 4 && $0.available == 1
        }
        #expect(error != nil)
        store.close()
    }

    @Test func anEmptyRecordLacksEvenItsVersionByte() throws {
        let directory = try makeStore()
        RawTokyoCabinet.write(directory.path + "/Song", [(RawTokyoCabinet.rowKey(3), [])])
        let store = try ObjectStore(path: directory.path)
        try store.register(Song.self)
        #expect(throws: CabinetError.self) { _ = try store.fetch(Song.self, rowID: 3) }
        #expect(try store.fetch(Song.self, rowID: 2)?.title == "A")
        store.close()
    }

    @Test func damagedMetadataIsReportedAtRegistration() throws {
        let directory = try makeStore()
        RawTokyoCabinet.write(directory.path + "/Song", [(RawTokyoCabinet.rowKey(1), [1, 2, 3])])
        let store = try ObjectStore(path: directory.path)
        let error = expectCabinetError({ try store.register(Song.self) }) {
            guard $0.code == .malformedMetadata, let location = $0.location else { return false }
            return location.className == "Song" && location.rowID == 1
        }
        #expect(error != nil)
        try store.register(Playlist.self)
        store.close()
    }

    @Test func aBadKeyInAClassFileIsMalformed() throws {
        let directory = try makeStore()
        RawTokyoCabinet.write(directory.path + "/Song", [(Array("stray".utf8), [1])])
        let store = try ObjectStore(path: directory.path)
        try store.register(Song.self)
        #expect(throws: CabinetError.self) { _ = try store.fetchAll(Song.self) }
        store.close()
    }

    @Test func aDamagedFaultReportsThroughTheHandlerAndCannotBeSavedOver() throws {
        let directory = try makeStore()
        RawTokyoCabinet.write(directory.path + "/Song", [(RawTokyoCabinet.rowKey(2), [1, 0xFF, 0xFF, 0, 0])])
        let store = try ObjectStore(path: directory.path)
        try store.register(Song.self, Playlist.self)
        var reported: [CabinetError] = []
        store.faultErrorHandler = { reported.append($0) }
        let list = try #require(try store.fetchAll(Playlist.self).first)
        let damaged = list.songs[0]
        #expect(damaged.title == "", "a fault that cannot load keeps its defaults")
        #expect(reported.count == 1)
        #expect(reported.first?.location?.rowID == 2)
        _ = damaged.seconds
        #expect(reported.count == 1, "no retry on every access")
        #expect(throws: CabinetError.self) { try store.load(damaged) }
        damaged.title = "overwrite?"
        #expect(throws: CabinetError.unloadedObjectModified(RecordLocation(file: directory.path + "/Song", className: "Song", rowID: 2))) {
            try store.save()
        }
        #expect(list.songs[1].title == "B")
        store.close()
        #expect(RawTokyoCabinet.read(directory.path + "/Song")[RawTokyoCabinet.rowKey(2)] == [1, 0xFF, 0xFF, 0, 0], "the damaged bytes are kept")
    }

    @Test func aReferenceToADeletedRowReportsAMissingRecord() throws {
        let directory = try makeStore()
        do {
            let store = try ObjectStore(path: directory.path)
            try store.register(Song.self, Playlist.self)
            let a = try #require(try store.fetch(Song.self, rowID: 2))
            store.delete(a)                      // no delete rule removes it from the playlist
            try store.save()
            store.close()
        }
        let store = try ObjectStore(path: directory.path)
        try store.register(Song.self, Playlist.self)
        var reported: [CabinetError] = []
        store.faultErrorHandler = { reported.append($0) }
        let list = try #require(try store.fetchAll(Playlist.self).first)
        _ = list.songs[0].title
        #expect(reported == [.missingRecord(RecordLocation(file: directory.path + "/Song", className: "Song", rowID: 2))])
        store.close()
    }

    @Test func aRecordFromANewerClassVersionIsNeverMisread() throws {
        let directory = try makeStore()
        RawTokyoCabinet.write(directory.path + "/Song", [(RawTokyoCabinet.rowKey(2), [7, 0, 0, 0, 0, 1, 0, 0, 0])])
        let store = try ObjectStore(path: directory.path)
        try store.register(Song.self)
        #expect(throws: CabinetError.newerVersion(RecordLocation(file: directory.path + "/Song", className: "Song", rowID: 2),
                                                  recordVersion: 7, classVersion: 1)) {
            _ = try store.fetch(Song.self, rowID: 2)
        }
        store.close()
    }

    @Test func anUnknownClassIDInAHeterogeneousReferenceIsNamed() throws {
        let directory = try TemporaryDirectory()
        do {
            let store = try ObjectStore(path: directory.path, options: Self.plain)
            try store.register(Album.self, Song.self)
            let album = Album(); store.insert(album)
            try store.save()
            store.close()
        }
        // extras: one reference to class ID 200, row 2.
        RawTokyoCabinet.write(directory.path + "/Album", [(RawTokyoCabinet.rowKey(2), [1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 200, 2, 0, 0, 0, 0])])
        let store = try ObjectStore(path: directory.path)
        try store.register(Album.self, Song.self)
        let error = expectCabinetError({ _ = try store.fetch(Album.self, rowID: 2) }) {
            guard $0.code == .unknownClassID, $0.classID == 200, let location = $0.location else { return false }
            return location.className == "Album"
        }
        #expect(error != nil)
        store.close()
    }

    @Test func twoClassesCannotShareAFileInOneStore() throws {
        final class Impostor: StoredObject {
            override class var storedName: String { "Song" }
        }
        let fixture = try StoreFixture(.memory)
        let store = try fixture.open(Song.self)
        #expect(throws: CabinetError.self) { try store.register(Impostor.self) }
        final class Sneaky: StoredObject {
            override class var storedName: String { "NamedBuffers" }
        }
        #expect(throws: CabinetError.self) { try store.register(Sneaky.self) }
        store.close()
    }

    @Test func aHugeLastRowIDInDamagedMetadataAllocatesNothingAndBlocksNoRead() throws {
        let directory = try makeStore()
        // Last row ID 2^32 - 1, and the playlist refers to row 4,000,000,000.
        RawTokyoCabinet.write(directory.path + "/Song", [(RawTokyoCabinet.rowKey(1), [0xFF, 0xFF, 0xFF, 0xFF, 1, 0])])
        RawTokyoCabinet.write(directory.path + "/Playlist", [
            (RawTokyoCabinet.rowKey(2), [1, 1, 0, 0, 0, 0x50, 2, 0, 0, 0, 2, 0, 0, 0, 0x00, 0x28, 0x6B, 0xEE]),
        ])
        let store = try ObjectStore(path: directory.path)
        try store.register(Song.self, Playlist.self)
        #expect(try store.fetchAll(Song.self).count == 2)
        var reported: [CabinetError] = []
        store.faultErrorHandler = { reported.append($0) }
        let list = try #require(try store.fetchAll(Playlist.self).first)
        #expect(list.songs.map(\.rowID) == [2, 4_000_000_000])
        #expect(list.songs[0].title == "A")
        _ = list.songs[1].title
        #expect(reported.first?.location?.rowID == 4_000_000_000)
        let song = Song()
        store.insert(song)                  // no row ID left: reported by the save, nothing trapped
        #expect(song.rowID == 0)
        #expect(throws: CabinetError.self) { try store.save() }
        store.close()
    }

    @Test func aDamagedByteInAChecksummedRecordIsCaughtAndNamed() throws {
        let directory = try TemporaryDirectory()
        do {
            let store = try ObjectStore(path: directory.path)     // new stores are checksummed
            #expect(store.recordFormat == .checksummed)
            try store.register(Song.self)
            for title in ["A", "B"] { let s = Song(); s.title = title; s.seconds = 300; store.insert(s) }
            try store.save()
            store.close()
        }
        // Change one byte of the content (seconds 300 → 301): the record still decodes, only the checksum can tell.
        var record = try #require(RawTokyoCabinet.read(directory.path + "/Song")[RawTokyoCabinet.rowKey(2)])
        record[7] &+= 1
        RawTokyoCabinet.write(directory.path + "/Song", [(RawTokyoCabinet.rowKey(2), record)])
        let store = try ObjectStore(path: directory.path)
        try store.register(Song.self)
        let error = expectCabinetError({ _ = try store.fetch(Song.self, rowID: 2) }) {
            guard $0.code == .checksumMismatch, let location = $0.location else { return false }
            return location.className == "Song" && location.rowID == 2
        }
        #expect(error != nil)
        #expect(try store.fetch(Song.self, rowID: 3)?.title == "B")
        store.close()
        let problems = try StoreVerifier.verify(path: directory.path)
        #expect(problems.count == 1 && problems[0].location.rowID == 2)
    }

    @Test func aStoreKeepsItsFormatAndRefusesAnother() throws {
        let directory = try TemporaryDirectory()
        try ObjectStore(path: directory.path, options: Self.plain).close()
        #expect(try ObjectStore(path: directory.path).recordFormat == .plain)
        #expect(throws: CabinetError.self) { _ = try ObjectStore(path: directory.path, options: .init(recordFormat: .checksummed)) }
        try Data("cabinet-record-format sealed-v9\n".utf8).write(to: URL(fileURLWithPath: directory.path + "/" + TokyoCabinetBackend.formatFileName))
        #expect(throws: CabinetError.self) { _ = try ObjectStore(path: directory.path) }
    }
}
