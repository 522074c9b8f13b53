@testable import Cabinet
import CabinetStorage
import Foundation
import Testing

@Suite struct IndexMaintenanceTests {
    private func seeded(_ kind: BackendKind, count: Int = 50) throws -> (StoreFixture, ObjectStore, [Track]) {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open(Track.self, Mix.self)
        let tracks = (0..<count).map { i in
            let track = Track("song \(i)", by: i % 5 == 0 ? "Queen" : "Other", seconds: UInt32(i))
            store.insert(track)
            return track
        }
        try store.save()
        return (fixture, store, tracks)
    }

    /// The index entry of `artist` for `row` of Track's artist index (number 2, the first declared).
    private func artistKey(_ artist: String, row: UInt32) -> [UInt8] {
        var key: [UInt8] = [2]
        try? artist.indexBytes(into: &key)
        return key + withUnsafeBytes(of: row.bigEndian) { Array($0) }
    }

    @Test(arguments: BackendKind.allCases)
    func verifyFindsMissingAndExtraEntriesAndReindexRepairsThem(_ kind: BackendKind) throws {
        let (fixture, store, tracks) = try seeded(kind)
        defer { store.close(); withExtendedLifetime(fixture) {} }
        #expect(try StoreVerifier.verify(store.backend).isEmpty)
        #expect(try store.verifyIndexes().isEmpty)
        let index = try store.backend.openOrderedTable(named: "Track.index")
        try index.transaction {
            _ = try artistKey("Queen", row: tracks[0].rowID).withUnsafeBytes { try index.removeValue(forKey: $0) }
            try artistKey("Nobody", row: tracks[1].rowID).withUnsafeBytes { key in
                try [UInt8]().withUnsafeBytes { try index.setValue($0, forKey: key) }
            }
        }
        let problems = try StoreVerifier.verify(store.backend)
        #expect(problems.contains { $0.location.rowID == tracks[0].rowID && $0.reason.contains("missing") })
        #expect(problems.contains { $0.location.rowID == tracks[1].rowID && $0.reason.contains("does not list") })
        #expect(problems.allSatisfy { $0.reason.contains("cabinet reindex") })
        #expect(try store.fetch(Track.self, where: \.artist, equals: "Nobody").map(\.rowID) == [tracks[1].rowID], "the damage shows")
        try store.reindex(Track.self)
        #expect(try StoreVerifier.verify(store.backend).isEmpty)
        #expect(try store.verifyIndexes().isEmpty)
        #expect(try store.fetch(Track.self, where: \.artist, equals: "Queen").first === tracks[0])
        #expect(try store.fetch(Track.self, where: \.artist, equals: "Nobody").isEmpty)
    }

    @Test(arguments: BackendKind.allCases)
    func verifyIndexesFindsEntriesThatNoLongerMatchTheSavedValues(_ kind: BackendKind) throws {
        let (fixture, store, tracks) = try seeded(kind)
        defer { store.close(); withExtendedLifetime(fixture) {} }
        // Rewrite a row's record and its entry alike, to a value its object does not have.
        let index = try store.backend.openOrderedTable(named: "Track.index")
        let row = tracks[3].rowID
        let rowKey: [UInt8] = [1] + withUnsafeBytes(of: row.bigEndian) { Array($0) }
        var entries = try #require(try rowKey.withUnsafeBytes { key in
            try index.withValue(forKey: key) { try RowEntries.decode($0, format: store.recordFormat, location: RecordLocation(file: "test")) }
        })
        var fakeKey: [UInt8] = []
        try "Fakes".indexBytes(into: &fakeKey)
        entries.entries[0].entry.key = fakeKey
        let stale = entries.encoded(format: store.recordFormat)
        try index.transaction {
            try rowKey.withUnsafeBytes { key in try stale.withUnsafeBytes { try index.setValue($0, forKey: key) } }
            _ = try artistKey("Other", row: row).withUnsafeBytes { try index.removeValue(forKey: $0) }
            try artistKey("Fakes", row: row).withUnsafeBytes { key in try [UInt8]().withUnsafeBytes { try index.setValue($0, forKey: key) } }
        }
        #expect(try StoreVerifier.verify(store.backend).isEmpty, "consistent within the file: only the objects tell")
        let problems = try store.verifyIndexes()
        #expect(problems.contains { $0.location.rowID == row && $0.reason.contains("saved record") })
        try store.reindex()
        #expect(try store.verifyIndexes().isEmpty)
    }

    @Test func aDamagedIndexFileIsAClearErrorAndTheToolRemovesItForTheNextOpenToRebuild() throws {
        let (fixture, store, tracks) = try seeded(.tokyoCabinet, count: 300)
        let queen = tracks.filter { $0.artist == "Queen" }.map(\.rowID)
        store.close()
        let path = fixture.storePath
        let file = try FileHandle(forUpdating: URL(fileURLWithPath: path + "/Track.index"))
        try file.seek(toOffset: 0)
        try file.write(contentsOf: Data(repeating: 0x5A, count: 4_096))
        try file.close()
        let error = try #require(throws: CabinetError.self) { try fixture.open(Track.self, Mix.self) }
        #expect(error.description.contains("Track.index") && error.description.contains("cabinet reindex"))
        let verify = try StoreVerifier.verify(path: path)
        #expect(verify.contains { $0.location.file.hasSuffix("Track.index") })

        let tool = cabinetToolPath
        let reindex = try run(tool, ["reindex", path, "Track"])
        #expect(reindex.status == 0 && reindex.output.contains("Track.index"))
        #expect(try run(tool, ["reindex", path, "Nothing"]).output.contains("no index file"))
        let reopened = try fixture.open(Track.self, Mix.self)
        defer { reopened.close() }
        #expect(try reopened.fetch(Track.self, where: \.artist, equals: "Queen").map(\.rowID) == queen)
        #expect(try StoreVerifier.verify(reopened.backend).isEmpty)
    }

    @Test(arguments: BackendKind.allCases)
    func aClassThatNoLongerDeclaresIndexesLosesItsIndexFile(_ kind: BackendKind) throws {
        let (fixture, store, _) = try seeded(kind)
        store.close()
        let plain = try fixture.open(PlainTrack.self)
        #expect(try !plain.backend.hasTable(named: "Track.index"))
        #expect(try plain.fetchAll(PlainTrack.self).count == 50)
        plain.close()
        let again = try fixture.open(Track.self, Mix.self)
        defer { again.close() }
        #expect(try again.count(Track.self, where: \.artist, equals: "Queen") == 10, "declared again: built again")
    }

    @Test func aReadOnlyStoreQueriesTheIndexesAWriterBuiltAndSaysWhenThereAreNone() throws {
        let (fixture, store, tracks) = try seeded(.tokyoCabinet)
        store.close()
        let reader = try ObjectStore(path: fixture.storePath, readOnly: true)
        defer { reader.close() }
        try reader.register(Track.self)
        #expect(try reader.fetch(Track.self, where: \.artist, equals: "Queen").map(\.rowID) == tracks.filter { $0.artist == "Queen" }.map(\.rowID))
        #expect(try reader.search(Track.self, matching: "song 7").map(\.rowID) == [tracks[7].rowID])

        let bare = try StoreFixture(.tokyoCabinet)
        let writer = try bare.open(PlainTrack.self)
        writer.close()
        let blind = try ObjectStore(path: bare.storePath, readOnly: true)
        defer { blind.close() }
        try blind.register(Track.self)
        let error = try #require(throws: CabinetError.self) { try blind.fetch(Track.self, where: \.artist, equals: "Queen") }
        #expect(error.code == .noSuchIndex && error.description.contains("without readOnly"))
    }
}
