@testable import Cabinet
import CabinetRedis
import CabinetStorage
import Foundation
import Testing

/// Index queries read their objects' records in batches
/// (`ObjectStore.loadedObjects(_:rows:_:)`, `StorageTable.withValues(forRows:_:)`),
/// and hand each object over as a read of one row would: uniqued, live objects
/// with their unsaved changes, faults loaded, unsaved deletes left out, and
/// nothing from a record read ahead of a save that removed it.
@Suite struct BatchedIndexReadTests {
    /// 1,000 tracks saved, seconds scrambled; the store reopened (nothing live).
    private func reopened(_ kind: BackendKind) throws -> (StoreFixture, ObjectStore) {
        let fixture = try StoreFixture(kind)
        let writer = try fixture.open(Track.self, Mix.self)
        for i in 0..<1_000 { writer.insert(Track("T\(i)", by: "A\(i % 7)", seconds: UInt32((i * 7_919) % 1_000))) }
        try writer.save()
        writer.close()
        return (fixture, try fixture.open(Track.self, Mix.self))
    }

    @Test(arguments: BackendKind.allCases)
    func aBatchedQueryHandsOverWhatARowAtATimeWould(_ kind: BackendKind) throws {
        let (fixture, store) = try reopened(kind)
        let all = try store.fetchAll(Track.self).sorted { ($0.seconds, $0.rowID) < ($1.seconds, $1.rowID) }
            .map { (rowID: $0.rowID, title: $0.title) }
        let rows = all.map(\.rowID)
        store.close()
        let reader = try fixture.open(Track.self, Mix.self)
        defer { reader.close(); withExtendedLifetime(fixture) {} }
        // Live before the query: a fault, a changed object, an unsaved delete.
        let fault = try reader.fault(Track.self, rowID: rows[300])
        let changed = try #require(try reader.fetch(Track.self, rowID: rows[500]))
        changed.title = "unsaved"
        let deleted = try #require(try reader.fetch(Track.self, rowID: rows[700]))
        reader.delete(deleted)

        let found = try reader.fetch(Track.self, where: \.seconds, in: 0...999)
        #expect(found.map(\.rowID) == rows.filter { $0 != deleted.rowID }, "index order, the unsaved delete left out")
        #expect(found.map(\.title) == all.filter { $0.rowID != deleted.rowID }.map { $0.rowID == changed.rowID ? "unsaved" : $0.title })
        #expect(found.contains { $0 === fault } && fault.hasContent, "the fault is the object handed over, loaded")
        #expect(found.contains { $0 === changed }, "a live object is itself, with its unsaved change")
        #expect(Set(found.map(ObjectIdentifier.init)).count == found.count)
        // Again: every object is live now, and each comes back as itself.
        let again = try reader.fetch(Track.self, where: \.seconds, in: 0...999)
        #expect(zip(again, found).allSatisfy { $0 === $1 })
        // A limit stops within a batch; a search reads in batches too.
        #expect(try reader.fetch(Track.self, where: \.seconds, in: 0...999, limit: 13).map(\.rowID)
                == Array(rows.filter { $0 != deleted.rowID }.prefix(13)))
        #expect(try reader.search(Track.self, matching: "t5*").count == 111)
        #expect(try reader.search(Track.self, matching: "t5*", limit: 20).count == 20)
    }

    /// A body that deletes and saves a row of the batch being handed over gets
    /// no object for it: the record read ahead of the save is not used.
    @Test(arguments: BackendKind.allCases)
    func aRowDeletedAndSavedByTheBodyIsNotHandedOverFromTheBatch(_ kind: BackendKind) throws {
        let (fixture, store) = try reopened(kind)
        defer { store.close(); withExtendedLifetime(fixture) {} }
        let entry = try #require(store.entriesByName[Track.storedName])
        let rows = Array(UInt32(2)...UInt32(41))
        var handed: [UInt32: Bool] = [:]
        let finished = try store.loadedObjects(entry, rows: rows) { row, object, _ in
            handed[row] = object != nil
            if row == 5, let doomed = try store.fetch(Track.self, rowID: 30) {
                store.delete(doomed)
                try store.save()
            }
            return true
        }
        #expect(finished)
        #expect(handed.count == rows.count)
        #expect(handed[30] == false, "deleted and saved before it was handed over")
        #expect(rows.filter { handed[$0] == true }.count == rows.count - 1)
    }

    /// A body that saves inside an index query: a later row of the batch it
    /// deleted, or whose value it moved out of the range, is not handed over (the
    /// index no longer lists it), and no false "index damaged" error is thrown.
    @Test(arguments: BackendKind.allCases)
    func rowsASaveInTheBodyTookOutOfTheRangeAreNotHandedOver(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open(Track.self, Mix.self)
        defer { store.close() }
        let tracks = (0..<40).map { i in Track("T\(i)", by: "A", seconds: UInt32(100 + i)) }
        for track in tracks { store.insert(track) }
        try store.save()
        var seen: [String] = []
        try store.enumerate(Track.self, where: \.seconds, in: 100...199) { track, _ in
            seen.append(track.title)
            if track.title == "T1" {
                store.delete(tracks[3])
                tracks[5].seconds = 500   // out of the range
                try store.save()
            }
        }
        #expect(seen == (0..<40).filter { $0 != 3 && $0 != 5 }.map { "T\($0)" })
        // The other way, a save in each of two batches.
        seen = []
        try store.enumerate(Track.self, where: \.seconds, in: 100...199, descending: true) { track, _ in
            seen.append(track.title)
            if track.title == "T38" || track.title == "T20" {
                let doomed = track.title == "T38" ? tracks[36] : tracks[12]
                store.delete(doomed)
                try store.save()
            }
        }
        #expect(seen == (0..<40).reversed().filter { ![3, 5, 36, 12].contains($0) }.map { "T\($0)" })
    }

    /// Another process's save taken in inside a query's body (`refresh()`) is
    /// not hidden by the records the query read ahead of it: the row it changed
    /// is handed over as that process saved it.
    @Test func anotherProcesssSaveTakenInInsideAQueryIsNotHiddenByTheBatch() throws {
        let name = TestRedis.newStoreName()
        let writer = try ObjectStore(backend: TestRedis.backend(store: name))
        try writer.register(Track.self)
        let tracks = (0..<5).map { Track("T\($0)", by: "A", seconds: UInt32($0)) }
        for track in tracks { writer.insert(track) }
        try writer.save()
        let readerBackend = try TestRedis.backend(store: name)
        let reader = try ObjectStore(backend: readerBackend)
        try reader.register(Track.self)
        var titles: [String] = []
        try reader.enumerate(Track.self, where: \.seconds, in: 0...4) { track, _ in
            titles.append(track.title)
            guard titles.count == 1 else { return }
            tracks[3].title = "T3, changed"
            try writer.save()
            #expect(RedisOtherProcessesTests.waitForAnnouncement(readerBackend))
            try reader.refresh()
        }
        #expect(titles == ["T0", "T1", "T2", "T3, changed", "T4"])
        writer.close(); reader.close()
    }

    /// On Redis a range query costs one `HMGET` per batch (8, 16, 32, 64,
    /// 128 rows...), never a read per object.
    @Test func onRedisAQueryReadsItsObjectsInBatchesNotOneByOne() throws {
        let server = try RedisBackendTests.OwnServer()
        let writer = try ObjectStore(backend: RedisBackend(url: server.url, store: "music"))
        try writer.register(Track.self)
        for i in 0..<300 { writer.insert(Track("T\(i)", by: "A", seconds: UInt32(i))) }
        try writer.save()
        let reader = try ObjectStore(backend: RedisBackend(url: server.url, store: "music"))
        try reader.register(Track.self)
        server.cli("CONFIG", "RESETSTAT")
        #expect(try reader.fetch(Track.self, where: \.seconds, in: 0...299).map(\.title) == (0..<300).map { "T\($0)" })
        let stats = server.cli("INFO", "commandstats")
        func calls(_ command: String) -> Int? {
            guard let line = stats.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix("cmdstat_\(command):calls=") }) else { return nil }
            return Int(line.dropFirst("cmdstat_\(command):calls=".count).prefix { $0.isNumber })
        }
        // The index's own pages: a ZRANGEBYLEX of keys and an HMGET of their values each.
        let pages = try #require(calls("zrangebylex"), "\(stats)")
        #expect(calls("hmget") == pages + 6, "8 + 16 + 32 + 64 + 128 + 52 rows: \(stats)")
        #expect(!stats.contains("cmdstat_hget:"), "no read per object: \(stats)")
        writer.close(); reader.close()
    }
}
