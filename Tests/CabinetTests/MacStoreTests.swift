@testable import Cabinet
@testable import CabinetStorage
import Foundation
import Testing

/// A BNRPersistence store written on a Mac (little-endian Tokyo Cabinet files):
/// refused with a clear error, imported with every row, class ID, version and
/// byte, and exported back. The fixture (`Tests/Fixtures/bnr-mac.tar.gz`, from
/// `../shared/fixtures/bnr-mac`) was written by BNRPersistence itself; its
/// EXPECTED.txt is what a BNRPersistence-based reader prints for it.
@Suite struct MacStoreTests {
    /// The fixture unpacked into `directory`: its store and its expected listing.
    static func unpackFixture(into directory: TemporaryDirectory) throws -> (store: String, expected: [String]) {
        let archive = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/bnr-mac.tar.gz").path
        let unpacked = try run("/bin/tar", ["-xzf", archive, "-C", directory.path])
        precondition(unpacked.status == 0, unpacked.output)
        let expected = try String(contentsOfFile: directory.path + "/bnr-mac/EXPECTED.txt", encoding: .utf8)
            .split(separator: "\n").map(String.init).filter { !$0.hasPrefix("## ") }
        return (directory.path + "/bnr-mac/library", expected)
    }

    /// Every file of `directory` with its bytes: to show that nothing was written.
    static func snapshot(_ directory: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            files[name] = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))
        }
        return files
    }

    /// The store as EXPECTED.txt lists it, in BNRPersistence's reader's words.
    static func listing(of path: String, name: String) throws -> [String] {
        let store = try ObjectStore(path: path, readOnly: true)
        defer { store.close() }
        try store.register(Song.self, Playlist.self)
        func quoted(_ title: String) -> String {
            title.isEmpty ? "(nil)" : "\"" + title.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        var lines = ["# store \(name)"]
        lines += try store.fetchAll(Song.self).sorted { $0.rowID < $1.rowID }.map { "Song \($0.rowID) \(quoted($0.title)) \($0.seconds)" }
        lines += try store.fetchAll(Playlist.self).sorted { $0.rowID < $1.rowID }.map {
            "Playlist \($0.rowID) \(quoted($0.title)) [\($0.songs.map { String($0.rowID) }.joined(separator: " "))]"
        }
        store.close()
        let info = try StoreInfo(path: path)
        // Read through a backend of its own (the store's handle is closed).
        var buffers: [([UInt8], [UInt8])] = []
        var reading = TokyoCabinetBackend.Options()
        reading.readOnly = true
        let backend = try TokyoCabinetBackend(directory: path, options: reading)
        defer { backend.close() }
        try backend.openTable(named: "NamedBuffers").forEach { key, value in
            buffers.append((Array(key), Array(value)))
            return true
        }
        for (key, value) in buffers.sorted(by: { $0.0.lexicographicallyPrecedes($1.0) }) {
            lines.append("NamedBuffer \"\(String(decoding: key, as: UTF8.self))\" \(value.map { String(format: "%02x", $0) }.joined())")
        }
        for table in info.tables.sorted(by: { ($0.classID ?? 255) < ($1.classID ?? 255) }) {
            if let classID = table.classID, let version = table.classVersion, let last = table.lastRowID {
                lines.append("# \(table.name) classID=\(classID) version=\(version) lastRowID=\(last) records=\(table.records - 1)")
            } else {
                lines.append("# \(table.name) records=\(table.records)")
            }
        }
        return lines
    }

    @Test func openingAMacStoreSaysWhatItIsAndWritesNothing() throws {
        let directory = try TemporaryDirectory()
        let (store, _) = try Self.unpackFixture(into: directory)
        let before = try Self.snapshot(store)
        for readOnly in [false, true] {
            let error = #expect(throws: CabinetError.self) { try ObjectStore(path: store, readOnly: readOnly) }
            #expect(error?.code == .foreignByteOrder, "\(String(describing: error))")
            #expect(error?.location?.file.hasPrefix(store + "/") == true)
            let message = error.map(String.init(describing:)) ?? ""
            #expect(message.contains("little-endian") && message.contains("Mac") && message.contains("cabinet import"), "\(message)")
        }
        // Only the opener's lock files appear (as for any open); no file is written or created.
        let after = try Self.snapshot(store).filter { ![".cabinet-lock", ".cabinet-commit", ".cabinet-commit-turn"].contains($0.key) }
        #expect(after == before, "opening a Mac store changed or added files: \(after.keys.sorted())")
        let verifying = #expect(throws: CabinetError.self) { try StoreVerifier.verify(path: store) }
        #expect(verifying?.code == .foreignByteOrder)
    }

    /// A Mac's file with an unfinished transaction of its own: a reader here is told
    /// what the file is (its transaction can be finished only on the Mac), not to open it writable.
    @Test func aMacStoreWithAnUnfinishedTransactionIsNamedForWhatItIs() throws {
        let directory = try TemporaryDirectory()
        let (store, _) = try Self.unpackFixture(into: directory)
        try ForeignFileTests.patch(store, "Song", at: 33, [0x01])           // the open flag
        try Data([UInt8](repeating: 0, count: 336)).write(to: URL(fileURLWithPath: store + "/Song.wal"))
        let error = #expect(throws: CabinetError.self) { try ObjectStore(path: store, readOnly: true).register(Song.self) }
        #expect(error?.code == .foreignByteOrder, "\(String(describing: error))")
    }

    @Test func importCopiesEveryRowClassVersionAndByte() throws {
        let directory = try TemporaryDirectory()
        let (store, expected) = try Self.unpackFixture(into: directory)
        let before = try Self.snapshot(store)
        let imported = directory.path + "/imported"
        let report = try ObjectStore.importStore(from: store, to: imported)
        #expect(report.problems.isEmpty, "\(report.problems)")
        #expect(report.tables == [.init(name: "NamedBuffers", records: 7, byteOrder: .littleEndian),
                                  .init(name: "Playlist", records: 21, byteOrder: .littleEndian),
                                  .init(name: "Song", records: 1005, byteOrder: .littleEndian)])
        #expect(try Self.snapshot(store) == before, "the import wrote to its source")
        #expect(try Self.listing(of: imported, name: "library") == expected)

        // Byte for byte, as the fixture's README shows them (BNRPersistence's plain records).
        let backend = try TokyoCabinetBackend(directory: imported)
        defer { backend.close() }
        let songs = try backend.openTable(named: "Song")
        let track1 = try songs.withValue(forRow: 2) { Array($0) }
        #expect(track1 == [0x00, 7, 0, 0, 0] + Array("Track 1".utf8) + [7, 0, 0, 0])
        let metadata = try songs.withValue(forRow: 1) { Array($0) }
        #expect(metadata?.prefix(6) == [0xee, 0x03, 0, 0, 1, 0] && metadata?.count == 14)
        #expect(try backend.services.readFormatMarker() == RecordFormat.plain.marker)
    }

    /// The README's and the catalog's sample ("Stores from a Mac"), run on the fixture.
    @Test func theDocumentedSampleRuns() throws {
        let directory = try TemporaryDirectory()
        let (macCopy, _) = try Self.unpackFixture(into: directory)
        let converted = directory.path + "/library"
        do {
            _ = try ObjectStore(path: macCopy)
        } catch CabinetError.Code.foreignByteOrder {
            let report = try ObjectStore.importStore(from: macCopy, to: converted)
            for problem in report.problems { print(problem) }   // damaged records, left out
        }
        let store = try ObjectStore(path: converted)
        try store.register(Song.self, Playlist.self)
        #expect(try store.fetchAll(Playlist.self).count == 20)
        try store.exportStore(to: directory.path + "/for-the-mac")    // and back: little-endian files
        store.close()
    }

    @Test func theImportedStoreWorksAsAnyOther() throws {
        let directory = try TemporaryDirectory()
        let (store, _) = try Self.unpackFixture(into: directory)
        let imported = directory.path + "/imported"
        _ = try ObjectStore.importStore(from: store, to: imported)
        let opened = try ObjectStore(path: imported)
        try opened.register(Song.self, Playlist.self)
        let song = Song(); song.title = "Track 1007"
        opened.insert(song)
        try opened.save()
        #expect(song.rowID == 1007, "the next row ID is the one BNRPersistence would have handed out")
        let playlist = try #require(try opened.fetch(Playlist.self, rowID: 21))
        playlist.songs.append(song)
        try opened.save()
        opened.close()
        #expect(try StoreVerifier.verify(path: imported).isEmpty)
    }

    @Test func exportWritesMacFilesThatImportBack() throws {
        let directory = try TemporaryDirectory()
        let (store, expected) = try Self.unpackFixture(into: directory)
        let imported = directory.path + "/imported", exported = directory.path + "/exported", again = directory.path + "/again"
        _ = try ObjectStore.importStore(from: store, to: imported)
        let opened = try ObjectStore(path: imported, readOnly: true)
        try opened.exportStore(to: exported)
        opened.close()
        for name in ["Song", "Playlist", "NamedBuffers"] {
            #expect(TokyoCabinetHashHeader.read(path: exported + "/" + name)?.byteOrder == .littleEndian)
        }
        // This machine's Tokyo Cabinet refuses them, as it refuses the Mac's own.
        // (Its catalog and format marker let the open itself pass: the class files are opened at register.)
        let refused = #expect(throws: CabinetError.self) { try ObjectStore(path: exported).register(Song.self) }
        #expect(refused?.code == .foreignByteOrder)
        let report = try ObjectStore.importStore(from: exported, to: again)
        #expect(report.problems.isEmpty)
        #expect(try Self.listing(of: again, name: "library") == expected)
        #expect(FileManager.default.fileExists(atPath: exported + "/" + TokyoCabinetBackend.formatFileName))
    }

    @Test func anExportLeavesIndexFilesOutAndTheImportRebuildsThem() throws {
        let directory = try TemporaryDirectory()
        let source = directory.path + "/indexed", exported = directory.path + "/exported", imported = directory.path + "/imported"
        let store = try ObjectStore(path: source)
        try store.register(Track.self)
        for number in 1...50 { store.insert(Track("Song \(number)", by: number % 2 == 0 ? "Even" : "Odd")) }
        try store.save()
        let notes = try store.exportStore(to: exported)
        store.close()
        #expect(notes.count == 1 && notes[0].hasPrefix("Track.index"), "\(notes)")
        #expect(FileManager.default.fileExists(atPath: source + "/Track.index"))
        #expect(!FileManager.default.fileExists(atPath: exported + "/Track.index"))
        _ = try ObjectStore.importStore(from: exported, to: imported)
        let reopened = try ObjectStore(path: imported)
        defer { reopened.close() }
        try reopened.register(Track.self)
        #expect(try reopened.fetch(Track.self, where: \.artist, equals: "Even").count == 25)
    }
}
