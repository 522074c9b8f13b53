@testable import Cabinet
import Testing

/// `enumerate(_:startingAfter:_:)`: a page of a listing, in row order, from any row,
/// reading only the records it hands over.
@Suite struct RowOrderTests {
    /// 40 saved songs (rows 2…41), every fifth one deleted and saved.
    private func makeSongs(_ store: ObjectStore) throws -> [Song] {
        let songs = (0..<40).map { i -> Song in let s = Song(); s.title = "S\(i)"; store.insert(s); return s }
        try store.save()
        for song in songs where song.rowID % 5 == 0 { store.delete(song) }
        try store.save()
        return songs
    }

    private func page(_ store: ObjectStore, after row: UInt32, size: Int) throws -> [UInt32] {
        var rows: [UInt32] = []
        try store.enumerate(Song.self, startingAfter: row) { song, stop in
            rows.append(song.rowID)
            stop = rows.count == size
        }
        return rows
    }

    @Test(arguments: BackendKind.allCases)
    func pagesFollowEachOtherInRowOrderSkippingDeletedRows(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        do {
            let store = try fixture.open()
            _ = try makeSongs(store)
            store.close()
        }
        let store = try fixture.open()
        defer { store.close() }
        let expected = (2...41).map(UInt32.init).filter { $0 % 5 != 0 }
        #expect(try page(store, after: 0, size: 1_000) == expected, "from the start: every saved row, ascending")
        var pages: [[UInt32]] = []
        var after: UInt32 = 0
        while true {
            let next = try page(store, after: after, size: 7)
            if next.isEmpty { break }
            pages.append(next)
            after = next.last!
        }
        #expect(pages.flatMap { $0 } == expected && pages.dropLast().allSatisfy { $0.count == 7 })
        #expect(try page(store, after: 9, size: 3) == [11, 12, 13], "row 10 was deleted")
        #expect(try page(store, after: 41, size: 3) == [] && page(store, after: .max, size: 3) == [])
        let titles = try { () -> [String] in
            var out: [String] = []
            try store.enumerate(Song.self, startingAfter: 30) { song, stop in out.append(song.title); stop = out.count == 2 }
            return out
        }()
        #expect(titles == ["S29", "S30"], "content loaded: row 31 holds the 30th song (rows start at 2)")
    }

    @Test(arguments: BackendKind.allCases)
    func unsavedChangesCountAndLiveObjectsAreHandedOverAsTheyAre(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open()
        defer { store.close() }
        let songs = try makeSongs(store)
        let renamed = songs[10]                       // row 12, live and changed, not saved
        renamed.title = "renamed"
        store.delete(songs[11])                       // row 13, deleted, not saved
        let added = Song(); added.title = "new"; store.insert(added)   // row 42, not saved
        var seen: [Song] = []
        try store.enumerate(Song.self, startingAfter: 11) { song, _ in seen.append(song) }
        #expect(seen.first === renamed && seen.first?.title == "renamed")
        #expect(!seen.contains { $0.rowID == 13 })
        #expect(seen.last === added)
    }

    @Test func aPageReadsOnlyTheRecordsItHandsOver() throws {
        let fixture = try StoreFixture(.tokyoCabinet)
        do {
            let store = try fixture.open()
            _ = try makeSongs(store)
            store.close()
        }
        let (store, backend) = try fixture.openCounting()
        defer { store.close() }
        backend.resetCounts()
        #expect(try page(store, after: 20, size: 4) == [21, 22, 23, 24])
        #expect(backend.reads(of: "Song") == 4 && backend.scans["Song", default: 0] == 0)
    }

    @Test(arguments: BackendKind.allCases)
    func aDamagedRecordInThePageIsReportedNamingItsRow(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open()
        defer { store.close() }
        _ = try makeSongs(store)
        let table = try store.backend.openTable(named: "Song")
        try [UInt8](repeating: 0xFF, count: 3).withUnsafeBytes { try table.setValue($0, forRow: 23) }
        let error = expectCabinetError({ _ = try page(store, after: 20, size: 10) }) {
            $0.location?.className == "Song" && $0.location?.rowID == 23
        }
        #expect(error != nil)
        #expect(try page(store, after: 23, size: 2) == [24, 26], "the rows after it still read")
    }
}
