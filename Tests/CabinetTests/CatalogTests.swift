@testable import Cabinet
import CabinetStorage
import Foundation
import Testing

/// The store knows which classes it holds (`.cabinet-catalog`, checksummed),
/// so a class whose file goes missing is refused instead of created again
/// empty; the metadata row is checksummed too; a store that lost its format
/// marker is not guessed to be plain.
@Suite struct CatalogTests {
    private func makeStore(_ directory: TemporaryDirectory, format: RecordFormat = .checksummed) throws -> String {
        let path = directory.path + "/store"
        let store = try ObjectStore(path: path, options: .init(recordFormat: format))
        try store.register(Song.self, Playlist.self)
        let song = Song(); song.title = "kept"; store.insert(song)
        let list = Playlist(); list.title = "list"; list.songs = [song]; store.insert(list)
        var favorites = DataBuffer(); favorites.writeReferences([song])
        try store.setNamedBuffer(favorites, forName: "Favorite")
        try store.save()
        store.close()
        return path
    }

    @Test func theCatalogListsEveryClassWithItsClassID() throws {
        let directory = try TemporaryDirectory()
        let path = try makeStore(directory)
        let catalog = try #require(try TokyoCabinetBackend(directory: path).readCatalog())
        #expect(catalog.tables["Song"] == .some(0) && catalog.tables["Playlist"] == .some(1))
        let text = try String(contentsOfFile: path + "/" + TokyoCabinetBackend.catalogFileName, encoding: .utf8)
        #expect(text.hasPrefix("cabinet-catalog 1\n") && text.contains("table 0 Song\n") && text.contains("\ncrc32 "))
    }

    @Test func aMissingClassFileIsRefusedNotRecreated() throws {
        let directory = try TemporaryDirectory()
        let path = try makeStore(directory)
        try FileManager.default.removeItem(atPath: path + "/Song")
        let reader = try ObjectStore(path: path)
        let error = expectCabinetError({ try reader.register(Song.self) }) {
            guard $0.code == .missingClassFile, let location = $0.location, let classID = $0.classID else { return false }
            return location.className == "Song" && classID == 0
        }
        reader.close()
        #expect(error != nil)
        #expect("\(error.map { "\($0)" } ?? "")".contains("restore the file from a backup"))
        #expect(!FileManager.default.fileExists(atPath: path + "/Song"), "nothing was created in its place")
        let problems = try StoreVerifier.verify(path: path)
        #expect(problems.contains { $0.location.className == "Song" && $0.reason.contains("catalog lists this table but it is missing") })
        // The other classes still open, and a new class does not take the missing class's ID.
        let store = try ObjectStore(path: path)
        try store.register(Playlist.self)
        try store.register(Album.self)
        let catalog = try #require(try store.backend.services.readCatalog())
        #expect(catalog.tables["Album"] == .some(2))
        store.close()
    }

    @Test func aStoreWithoutACatalogGetsOneListingAllItsClasses() throws {
        let directory = try TemporaryDirectory()
        let path = try makeStore(directory)
        try FileManager.default.removeItem(atPath: path + "/" + TokyoCabinetBackend.catalogFileName)
        let store = try ObjectStore(path: path)
        try store.register(Song.self)    // Playlist is not registered in this run, but listed
        store.close()
        let catalog = try #require(try TokyoCabinetBackend(directory: path).readCatalog())
        #expect(catalog.tables["Playlist"] == .some(1) && catalog.tables["Song"] == .some(0))
        #expect(catalog.tables["NamedBuffers"] == .some(UInt8?.none))
    }

    @Test func aDamagedCatalogStopsTheOpenWithWhatToDo() throws {
        let directory = try TemporaryDirectory()
        let path = try makeStore(directory)
        let file = path + "/" + TokyoCabinetBackend.catalogFileName
        var bytes = try Array(Data(contentsOf: URL(fileURLWithPath: file)))
        bytes[20] ^= 0x01
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        let error = expectCabinetError({ _ = try ObjectStore(path: path) }) {
            guard $0.code == .malformedRecord, let reason = $0.reason else { return false }
            return reason.contains("catalog") && reason.contains("remove it")
        }
        #expect(error != nil)
        for garbage in ["", "cabinet-catalog 1\n", "nonsense\ncrc32 0\n", "cabinet-catalog 1\ntable x ../Song\ncrc32 0\n"] {
            #expect(throws: CabinetError.self) { _ = try StoreCatalog(encoded: Array(garbage.utf8), file: "catalog") }
        }
        let names = StoreCatalog(tables: ["My Song": 3, "NamedBuffers": nil])
        #expect(try StoreCatalog(encoded: names.encoded, file: "catalog") == names)
    }

    @Test func theMetadataRowOfAChecksummedStoreIsChecked() throws {
        let directory = try TemporaryDirectory()
        let path = try makeStore(directory)
        var metadata = try #require(RawTokyoCabinet.read(path + "/Song")[RawTokyoCabinet.rowKey(1)])
        #expect(metadata.count == 18)
        metadata[0] = 0     // the last row ID, damaged: the next insert would overwrite row 2
        RawTokyoCabinet.write(path + "/Song", [(RawTokyoCabinet.rowKey(1), metadata)])
        let store = try ObjectStore(path: path)
        let error = expectCabinetError({ try store.register(Song.self) }) {
            guard $0.code == .malformedMetadata, let location = $0.location, let reason = $0.reason else { return false }
            return location.className == "Song" && reason.contains("checksum")
        }
        #expect(error != nil)
        store.close()
    }

    @Test func aLastRowIDDamagedDownwardsIsCaughtInAPlainStoreToo() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/store"
        let store = try ObjectStore(path: path, options: .init(recordFormat: .plain))
        try store.register(Song.self)
        for i in 0..<3 { let s = Song(); s.title = "\(i)"; store.insert(s) }
        try store.save()
        store.close()
        var metadata = try #require(RawTokyoCabinet.read(path + "/Song")[RawTokyoCabinet.rowKey(1)])
        metadata[0] = 2      // rows 2, 3, 4 exist; the last row ID now says 2
        RawTokyoCabinet.write(path + "/Song", [(RawTokyoCabinet.rowKey(1), metadata)])
        let reopened = try ObjectStore(path: path)
        let error = expectCabinetError({ try reopened.register(Song.self) }) {
            guard $0.code == .malformedMetadata, let reason = $0.reason else { return false }
            return reason.contains("row 3 exists")
        }
        #expect(error != nil)
        reopened.close()
        #expect(RawTokyoCabinet.read(path + "/Song").count == 4, "nothing was overwritten")
    }

    @Test func aStoreThatLostItsFormatMarkerIsNotReadAsPlain() throws {
        let directory = try TemporaryDirectory()
        let path = try makeStore(directory)
        try FileManager.default.removeItem(atPath: path + "/" + TokyoCabinetBackend.formatFileName)
        let error = expectCabinetError({ _ = try ObjectStore(path: path) }) {
            guard $0.code == .unsupportedFormat, let reason = $0.reason else { return false }
            return reason.contains("missing") && reason.contains("checksums")
        }
        #expect(error != nil)
        // A plain store with a catalog whose records carry no checksum is plain: its records say so.
        let plain = try TemporaryDirectory()
        let plainPath = try makeStore(plain, format: .plain)
        try FileManager.default.removeItem(atPath: plainPath + "/" + TokyoCabinetBackend.formatFileName)
        let reopened = try ObjectStore(path: plainPath)
        #expect(reopened.recordFormat == .plain)
        reopened.close()
        // With a catalog and no record to tell by, nothing is guessed.
        let empty = try TemporaryDirectory()
        do {
            let store = try ObjectStore(path: empty.path, options: .init(recordFormat: .plain))
            try store.register(Song.self)
            store.close()
        }
        try FileManager.default.removeItem(atPath: empty.path + "/" + TokyoCabinetBackend.formatFileName)
        #expect(expectCabinetError({ _ = try ObjectStore(path: empty.path) }) {
            $0.code == .unsupportedFormat && ($0.reason ?? "").contains("do not show which format")
        } != nil)
        // A BNRPersistence store (no marker, no catalog, plain records) still opens as plain.
        try FileManager.default.removeItem(atPath: plainPath + "/" + TokyoCabinetBackend.formatFileName)
        try FileManager.default.removeItem(atPath: plainPath + "/" + TokyoCabinetBackend.catalogFileName)
        let bnr = try ObjectStore(path: plainPath)
        #expect(bnr.recordFormat == .plain)
        bnr.close()
    }
}

extension CatalogTests {
    @Test func backupAndRestoreCarryTheCatalog() throws {
        let directory = try TemporaryDirectory()
        let path = try makeStore(directory)
        let store = try ObjectStore(path: path)
        try store.register(Song.self, Playlist.self)
        try store.backup(to: directory.path + "/copy")
        store.close()
        let original = try TokyoCabinetBackend(directory: path).readCatalog()
        #expect(try TokyoCabinetBackend(directory: directory.path + "/copy").readCatalog() == original)

        // Restoring a backup without a catalog (an older Cabinet's) drops the store's,
        // which would list classes the backup may not have.
        try FileManager.default.removeItem(atPath: directory.path + "/copy/" + TokyoCabinetBackend.catalogFileName)
        try ObjectStore.restore(from: directory.path + "/copy", to: path)
        #expect(!FileManager.default.fileExists(atPath: path + "/" + TokyoCabinetBackend.catalogFileName))
        #expect(try StoreVerifier.verify(path: path).isEmpty)
    }
}
