@testable import Cabinet
import CabinetRedis
import CabinetStorage
import Foundation
import Testing

/// Reading a class by row (`StorageTable.forEachRow(in:_:)`): the records of a
/// range in row order on every backend, and on Redis the way `fetchAll`,
/// `enumerate` and `enumerate(_:startingAfter:)` read (pipelined `HMGET`s),
/// counted by the server.
@Suite struct RowReadTests {
    /// 100 songs saved, rows 10–19 deleted.
    static func songs(_ fixture: StoreFixture) throws {
        let store = try fixture.open()
        let songs = (0..<100).map { i -> Song in let s = Song(); s.title = "S\(i)"; store.insert(s); return s }
        try store.save()
        for song in songs where (10...19).contains(song.rowID) { store.delete(song) }
        try store.save()
        store.close()
    }

    @Test(arguments: BackendKind.allCases)
    func forEachRowGivesTheRecordsOfTheRangeInRowOrder(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        try Self.songs(fixture)
        let backend = try fixture.backend()
        defer { backend.close() }
        let table = try backend.openTable(named: Song.storedName)
        var rows: [UInt32] = []
        try table.forEachRow(in: 5...2_000) { row, value in
            let stored = try table.withValue(forRow: row) { Array($0) }
            #expect(stored == Array(value), "row \(row): the record's bytes")
            rows.append(row)
            return true
        }
        #expect(rows == Array(5...101).filter { !(10...19).contains($0) })
        // It stops when asked, and a range with no records gives nothing.
        var seen = 0
        try table.forEachRow(in: 2...101) { _, _ in seen += 1; return seen < 7 }
        #expect(seen == 7)
        try table.forEachRow(in: 10...19) { row, _ in Issue.record("row \(row) was deleted"); return true }
        try table.forEachRow(in: UInt32.max - 3...UInt32.max) { row, _ in Issue.record("row \(row)"); return true }
        // Inside a transaction (of a table that has them), its own changes answer for their rows.
        guard kind != .dictionary else { return }
        try table.beginTransaction()
        try [UInt8]([1, 2, 3]).withUnsafeBytes { try table.setValue($0, forRow: 15) }
        _ = try withUnsafeBytes(of: UInt32(20).littleEndian) { try table.removeValue(forKey: $0) }
        var inTransaction: [UInt32] = []
        try table.forEachRow(in: 14...21) { row, value in
            if row == 15 { #expect(Array(value) == [1, 2, 3]) }
            inTransaction.append(row)
            return true
        }
        try table.abortTransaction()
        #expect(inTransaction == [15, 21])
    }

    /// A whole class on Redis (fetchAll, enumerate) is read by pipelined
    /// `HMGET`s of rows when most rows are there, by `HSCAN` when most were
    /// deleted; a page of `enumerate(_:startingAfter:)` is one or two `HMGET`s,
    /// never a read per row.
    @Test func onRedisAClassIsReadByRowsWhenItsRowsAreMostlyThere() throws {
        let server = try RedisBackendTests.OwnServer()
        let writer = try ObjectStore(backend: RedisBackend(url: server.url, store: "music"))
        try writer.register(Song.self)
        let songs = (0..<5_000).map { i -> Song in let s = Song(); s.title = "S\(i)"; writer.insert(s); return s }
        try writer.save()

        let reader = try ObjectStore(backend: RedisBackend(url: server.url, store: "music"))
        try reader.register(Song.self)
        server.cli("CONFIG", "RESETSTAT")
        #expect(try reader.fetchAll(Song.self).map(\.title) == (0..<5_000).map { "S\($0)" }, "all of them, in row order")
        var stats = server.cli("INFO", "commandstats")
        // Up to the last row reserved (the writer's last range, partly unused): 16, 64, 256, then 1,024 rows a call.
        let last = try #require(reader.entriesByName[Song.storedName]?.metadata.lastRowID)
        var calls = 0, covered: UInt32 = 0, size: UInt32 = 16
        while covered < last - 1 { covered += size; size = min(size * 4, 1_024); calls += 1 }
        #expect(stats.contains("cmdstat_hmget:calls=\(calls),"), "\(calls) calls for rows 2...\(last): \(stats)")
        #expect(!stats.contains("cmdstat_hscan:") && !stats.contains("cmdstat_hget:"), "\(stats)")

        let page = try Self.page(reader, after: songs[2_500].rowID)
        #expect(page == (2_501..<2_521).map { "S\($0)" })
        let later = try ObjectStore(backend: RedisBackend(url: server.url, store: "music"))
        try later.register(Song.self)
        server.cli("CONFIG", "RESETSTAT")
        #expect(try Self.page(later, after: songs[2_500].rowID) == page)
        stats = server.cli("INFO", "commandstats")
        // 16 rows, then 64, and the next batch asked for ahead of them, read and dropped.
        #expect(stats.contains("cmdstat_hmget:calls=3,"), "\(stats)")
        #expect(!stats.contains("cmdstat_hget:"), "no read per row: \(stats)")

        // Most rows deleted: a cursor over what is left.
        for song in songs.prefix(4_000) { writer.delete(song) }
        try writer.save()
        let sparse = try ObjectStore(backend: RedisBackend(url: server.url, store: "music"))
        try sparse.register(Song.self)
        server.cli("CONFIG", "RESETSTAT")
        #expect(try sparse.fetchAll(Song.self).count == 1_000)
        stats = server.cli("INFO", "commandstats")
        #expect(stats.contains("cmdstat_hscan:") && !stats.contains("cmdstat_hmget:"), "\(stats)")
        writer.close(); reader.close(); later.close(); sparse.close()
    }

    static func page(_ store: ObjectStore, after row: UInt32) throws -> [String] {
        var titles: [String] = []
        try store.enumerate(Song.self, startingAfter: row) { song, stop in
            titles.append(song.title)
            stop = titles.count == 20
        }
        return titles
    }
}
