@testable import Cabinet
@testable import CabinetStorage
import Foundation
import Testing

/// A save into a damaged index file: Tokyo Cabinet's page loader, which a put or
/// a delete goes through, trusts the sizes in a page, so a damaged leaf would
/// end the process (a copy of gigabytes past the page, or "out of memory").
/// The pages a write loads are read by Cabinet's checked reader first, and the
/// save throws, naming the page, with nothing written and its changes kept.
@Suite struct TreeWriteDamageTests {
    /// Runs `change` in a transaction of T.index in `directory`, as a save does.
    private func write(_ directory: TemporaryDirectory, _ change: (any OrderedStorageTable) throws -> Void) throws {
        let backend = try TokyoCabinetBackend(directory: directory.path)
        defer { backend.close() }
        let table = try backend.openOrderedTable(named: "T.index")
        try table.transaction { try change(table) }
    }

    private func put(_ key: [UInt8], into table: any OrderedStorageTable) throws {
        try key.withUnsafeBytes { key in try [UInt8]().withUnsafeBytes { try table.setValue($0, forKey: key) } }
    }

    private func remove(_ key: [UInt8], from table: any OrderedStorageTable) throws {
        _ = try key.withUnsafeBytes { try table.removeValue(forKey: $0) }
    }

    private func expectPageError(_ leaf: String, _ what: String, _ body: () throws -> Void) {
        let error = #expect(throws: CabinetError.self, "\(what) must throw, not hand the page to Tokyo Cabinet", performing: body)
        #expect(error?.code == .backendFailure && error?.description.contains("invalid B+ tree page '\(leaf)'") == true, "\(String(describing: error))")
    }

    @Test func aPutOrDeleteInADamagedLeafThrowsNamingThePage() throws {
        let directory = try TemporaryDirectory()
        let keys = try writtenIndexTree(directory, count: 3_000)
        let victim = keys[1_500]
        let leaf = try damageLeaf(inTree: directory.path + "/T.index") { $0 == victim }
        expectPageError(leaf, "a put beside the damaged record") { try write(directory) { try put(victim + [1], into: $0) } }
        expectPageError(leaf, "a delete of the damaged record") { try write(directory) { try remove(victim, from: $0) } }
        // A transaction whose first writes were sound throws at the damaged one, and takes back the others.
        expectPageError(leaf, "a put after sound ones") {
            try write(directory) { table in
                try put(keys[0] + [1], into: table)
                try put(victim + [1], into: table)
            }
        }
        let backend = try TokyoCabinetBackend(directory: directory.path)
        defer { backend.close() }
        let table = try backend.openOrderedTable(named: "T.index")
        #expect(try table.recordCount == 3_000, "nothing was written")
        #expect(try (keys[0] + [1]).withUnsafeBytes { try table.withValue(forKey: $0) { _ in true } } == nil)
    }

    @Test func aDeleteBesideADamagedLeafThrows() throws {
        // A delete that empties a leaf makes Tokyo Cabinet load the leaves on both sides.
        let directory = try TemporaryDirectory()
        let keys = try writtenIndexTree(directory, count: 3_000)
        let leaf = try damageLeaf(inTree: directory.path + "/T.index") { $0 == keys[1_500] }
        let pages = try hashFileRecords(directory.path + "/T.index")
        let damagedID = try #require(UInt64(leaf, radix: 16))
        // The key that leads the leaf before the damaged one (its next link names it).
        let before = try #require(pages.first { page in
            guard page.key.first != UInt8(ascii: "#"), page.key != Array(leaf.utf8) else { return false }
            var cursor = 0
            let links = page.value.withUnsafeBytes { bytes in
                (TokyoCabinetTreeScan.number(bytes, &cursor), TokyoCabinetTreeScan.number(bytes, &cursor))
            }
            return links.1 == damagedID
        })
        let firstKey = try #require(keys.first { before.value.firstRange(of: $0) != nil })
        expectPageError(leaf, "a delete in the leaf before the damaged one") { try write(directory) { try remove(firstKey, from: $0) } }
    }

    @Test func writesThatLoadNoDamagedPageStillSave() throws {
        let directory = try TemporaryDirectory()
        let keys = try writtenIndexTree(directory, count: 3_000)
        try damageLeaf(inTree: directory.path + "/T.index") { $0 == keys[1_500] }
        try write(directory) { table in
            try put(keys[0] + [1], into: table)
            try remove(keys[2_999], from: table)
        }
        let backend = try TokyoCabinetBackend(directory: directory.path)
        defer { backend.close() }
        #expect(try backend.openOrderedTable(named: "T.index").recordCount == 3_000)
    }

    @Test func aSaveThatChangesADamagedIndexLeafThrowsAndKeepsItsChanges() throws {
        let fixture = try StoreFixture(.tokyoCabinet)
        var store = try fixture.open(Track.self)
        for i in 0..<2_000 {
            store.insert(Track("song \(i)", by: i == 1_000 ? "Victim Band" : "band \(i % 50)", seconds: UInt32(i)))
        }
        try store.save()
        let victimRow = try #require(try store.fetch(Track.self, where: \.artist, equals: "Victim Band").first?.rowID)
        store.close()
        let leaf = try damageLeaf(inTree: fixture.storePath + "/Track" + ClassIndexes.suffix) {
            // An entry of the artist index: the index's number, then the value.
            $0.dropFirst().starts(with: Array("Victim Band".utf8))
        }

        // The save throws, naming the page; nothing of it was written.
        store = try fixture.open(Track.self)
        let victim = try #require(try store.fetch(Track.self, rowID: victimRow))
        victim.artist = "Renamed"
        let error = try #require(throws: CabinetError.self) { try store.save() }
        #expect(error.description.contains("invalid B+ tree page '\(leaf)'") && error.description.contains("reindex"), "\(error)")
        #expect(store.hasUnsavedChanges, "the change is kept for a retry")
        store.close()
        store = try fixture.open(Track.self)
        defer { store.close() }
        #expect(try store.fetch(Track.self, rowID: victimRow)?.artist == "Victim Band")

        // Once the index is rebuilt, the same change saves.
        try store.reindex(Track.self)
        try #require(try store.fetch(Track.self, rowID: victimRow)).artist = "Renamed"
        try store.save()
        #expect(try store.fetch(Track.self, where: \.artist, equals: "Renamed").map(\.rowID) == [victimRow])
    }
}
