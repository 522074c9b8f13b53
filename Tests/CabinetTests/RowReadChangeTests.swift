@testable import Cabinet
import CabinetRedis
import CabinetStorage
import Foundation
import Testing

/// Reads by row (`StorageTable.forEachRow(in:_:)`) while the caller changes
/// the store, and records a read by row would not reach. (From a red-team
/// review: each failed on the first version of reads by row.)
@Suite struct RowReadChangeTests {
    /// `count` songs saved ("S0"...), closed; the store reopened afresh (no live objects).
    static func savedSongs(_ fixture: StoreFixture, count: Int = 200) throws -> ObjectStore {
        do {
            let store = try fixture.open()
            for i in 0..<count { let s = Song(); s.title = "S\(i)"; store.insert(s) }
            try store.save()
            store.close()
        }
        return try fixture.open()
    }

    /// A save from inside `enumerate(_:startingAfter:)`'s `body` is allowed (its
    /// documentation says so): the default `forEachRow` calls `body` outside the
    /// table's read, where on Tokyo Cabinet a write of the table would stop the
    /// program ("was written or closed inside a read of one of its records").
    @Test func aSaveInsideAPageDoesNotStopTheProgramOnTokyoCabinet() async {
        await #expect(processExitsWith: .success) {
            let fixture = try StoreFixture(.tokyoCabinet)
            let store = try RowReadChangeTests.savedSongs(fixture, count: 10)
            var seen = 0
            try store.enumerate(Song.self, startingAfter: 0) { song, _ in
                song.title += "!"
                try store.save()
                seen += 1
            }
            guard seen == 10 else { throw CancellationError() }
            store.close()
        }
    }

    /// A row deleted and saved from inside `body` is no longer in the class: the
    /// page does not hand it over, though on Redis its record was read ahead (in
    /// a batch) before the save: a save makes the walk read on afresh.
    @Test(arguments: [BackendKind.memory, .redis])
    func aRowDeletedAndSavedInsideAPageIsNotHandedOver(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try Self.savedSongs(fixture)
        defer { store.close() }
        var seen: [UInt32] = []
        try store.enumerate(Song.self, startingAfter: 0) { song, stop in
            if seen.isEmpty {
                // Row 40: in the second batch (rows 18...81), asked for before this body ran.
                let victim = try #require(try store.fetch(Song.self, rowID: 40))
                store.delete(victim)
                try store.save()
            }
            seen.append(song.rowID)
            stop = seen.count == 60
        }
        #expect(!seen.contains(40), "row 40 was deleted and saved before the page reached it")
        #expect(try store.fetch(Song.self, rowID: 40) == nil, "and stays deleted")
    }

    /// A record past the class's last row ID handed out (damage `cabinet verify`
    /// lists: a row key changed on disk, which no checksum covers) is an error for
    /// `fetchAll` and `enumerate` on every backend, naming its row, never an object
    /// under a row the class never had: on Redis, where a class whose rows are
    /// mostly there is read by row up to the metadata's last row ID, it is found by
    /// the scan after; `count(of:)` still counts it.
    @Test(arguments: BackendKind.allCases)
    func aRecordPastTheLastRowIDIsAnErrorForFetchAllNotAnObject(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let last: UInt32
        do {
            // 48 songs: on Redis exactly the first two reserved ranges (16 + 32 rows), so the class is dense.
            let store = try Self.savedSongs(fixture, count: 48)
            last = try #require(store.entriesByName[Song.storedName]?.metadata.lastRowID)
            let table = try store.backend.openTable(named: Song.storedName)
            // A copy of row 2's record, a few rows past the last row ID handed out
            // (not the next one, which the registration checks).
            let record = try #require(try table.withValue(forRow: 2) { Array($0) })
            try record.withUnsafeBytes { try table.setValue($0, forRow: last + 5) }
            store.close()
        }
        let store = try fixture.open()
        defer { store.close() }
        #expect(try store.count(of: Song.self) == 49)
        let past: (CabinetError) -> Bool = { $0.code == .malformedRecord && $0.location?.rowID == last + 5 }
        #expect(expectCabinetError({ _ = try store.fetchAll(Song.self) }, where: past) != nil, "last row ID \(last)")
        #expect(expectCabinetError({ try store.enumerate(Song.self) { _, _ in } }, where: past) != nil)
    }
}
