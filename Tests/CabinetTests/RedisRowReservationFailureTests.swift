@testable import Cabinet
import CabinetRedis
import CabinetStorage
import Foundation
import Testing

/// Row reservations when something goes wrong: a reservation that fails in a
/// pool's write block, more than the log's worth of reservations before a
/// save, a compare-and-set that loses, a class the store lost to a restore,
/// and what other processes' reservations look like to a pool. (Each of these
/// tests failed on the first version of the reservations: a red-team review.)
@Suite struct RedisRowReservationFailureTests {
    /// The class's last row ID on the server, as `cabinet info` reads it.
    static func lastRowID(_ name: String, of className: String) throws -> UInt32? {
        let backend = try TestRedis.backend(store: name)
        defer { backend.close() }
        return try StoreInfo(backend: backend).tables.first { $0.name == className }?.lastRowID
    }

    /// A reservation that fails in a pool's write block (the server unreachable
    /// for a moment): the block takes no row it did not reserve (its staged
    /// metadata row could be written below rows reserved after it), so it fails
    /// with the reason and saves nothing; run again, it lands, and the server's
    /// last row ID covers every row saved. Another process open all along
    /// inserts too: no record is overwritten.
    @Test func aPoolBlockWhoseReservationFailsFailsWholeAndLandsWhenRunAgain() async throws {
        let name = TestRedis.newStoreName()
        let other = try ObjectStore(backend: TestRedis.backend(store: name))
        try other.register(Song.self)

        let flaky = ReservationFailingBackend(try TestRedis.backend(store: name), failingFirst: 1)
        let pool = try StorePool(backend: flaky, classes: [Song.self])
        await #expect(throws: CabinetError.self) {
            _ = try await pool.write { store in
                let a = Song(); a.title = "refused"
                store.insert(a)             // reservation refused: the object stays out
                #expect(a.rowID == 0)
                let b = Song(); b.title = "after"
                store.insert(b)
                return b.rowID
            }
        }
        #expect(flaky.refusals == 1)
        let rows: [UInt32] = try await pool.write { store in
            let a = Song(); a.title = "pool a"
            store.insert(a)
            try store.save()
            let b = Song(); b.title = "pool b"
            store.insert(b)
            return [a.rowID, b.rowID]
        }
        try await pool.close()

        try other.refresh()
        let theirs = Song(); theirs.title = "other"
        other.insert(theirs)
        try other.save()
        #expect(!rows.contains(theirs.rowID))
        other.close()

        let last = try #require(try Self.lastRowID(name, of: Song.storedName))
        #expect(last >= max(rows.max()!, theirs.rowID), "the server's last row ID \(last) is below a row saved")
        let reader = try ObjectStore(backend: TestRedis.backend(store: name))
        try reader.register(Song.self)
        #expect(try reader.fetchAll(Song.self).map(\.title).sorted() == ["other", "pool a", "pool b"])
        reader.close()
    }

    /// More than 1,000 reservations of this process since its last save (a
    /// bulk import: one class past ~4.1 million inserts, or ~112 classes each
    /// past 8,176, before one save). Its own reservations count as saves it
    /// "missed" (they never move the known version), so the save's catch-up
    /// finds more than the log keeps and throws saveConflict; no other process
    /// saved at all, and the save can never succeed (a refresh takes the whole
    /// store in, which makes every unsaved insert a permanent conflict).
    /// Reservations are forced here by dropping the open range before each
    /// insert, as each ran out.
    @Test func overAThousandOwnReservationsBeforeASaveMakeItFailForever() throws {
        let name = TestRedis.newStoreName()
        let store = try ObjectStore(backend: TestRedis.backend(store: name))
        try store.register(Song.self)
        let reservations = try #require(store.rowReservations)
        for index in 0..<1_001 {
            reservations.discardAll()   // the range spent: the next insert reserves
            let song = Song(); song.title = "\(index)"
            store.insert(song)
        }
        #expect(throws: Never.self) { try store.save() }
        store.close()
    }

    /// A failed compare-and-set still runs the INCR, LPUSH and PUBLISH queued
    /// after the EVAL in the same MULTI: every lost race counts up the version,
    /// logs and announces a "save" that changed nothing (waking every other
    /// open, filling the 1,000-entry log under contention). Here another
    /// process updates the row between this one's HGET and EVAL, once: two
    /// updates went in, but the version counts three.
    @Test func aLostCompareAndSetIsNotLoggedAsASave() throws {
        let name = TestRedis.newStoreName()
        let setup = try ObjectStore(backend: TestRedis.backend(store: name))
        try setup.register(Song.self)
        setup.close()
        let backend = try TestRedis.backend(store: name)
        let other = try TestRedis.backend(store: name)
        let key = withUnsafeBytes(of: UInt32(1).littleEndian, Array.init)
        let version0 = try Self.version(name)
        // The transform runs after the HGET: another process changes the row
        // before the EVAL, once, so the first attempt fails.
        var interfered = false
        _ = try backend.updateRecord(inTable: Song.storedName, forKey: key) { old in
            if !interfered {
                interfered = true
                _ = try other.updateRecord(inTable: Song.storedName, forKey: key) { bytes in
                    var metadata = try bytes!.withUnsafeBytes { try ClassMetadata(bytes: $0, location: RecordLocation(file: name)) }
                    metadata.lastRowID += 16
                    return metadata.bytes
                }
            }
            return old!
        }
        // Two updates went in (the other's, then this one's second try).
        #expect(try Self.version(name) - version0 == 2, "a failed compare-and-set was counted (and logged, announced) as a save")
        backend.close(); other.close()
    }

    /// Another process restores the store from a backup that lacks a class
    /// (`ObjectStore.restore(from:to:)`, a `cabinet copy`) while this open
    /// holds a range of it. Its next reservation reads no metadata row, and
    /// writes one from its own memory (its class ID, its last row ID) into a
    /// hash the restored store does not list among its tables, with no
    /// version check against the restore. A later open registering the class
    /// finds that row and its class ID, which the restored store gave to
    /// another class: the class can no longer be registered.
    @Test func aReservationAfterARestoreThatDroppedTheClassWritesAStrayMetadataRow() throws {
        let name = TestRedis.newStoreName()
        let open = try ObjectStore(backend: TestRedis.backend(store: name))
        try open.register(Song.self)
        let first = Song(); first.title = "before"
        open.insert(first)                     // reserves rows 2...17
        try open.save()

        // The backup: a store of playlists alone (class ID 0, as Song's is here).
        let snapshot = MemoryBackend(name: "snapshot")
        let source = try ObjectStore(backend: snapshot)
        try source.register(Playlist.self)
        let playlist = Playlist(); playlist.title = "restored"
        source.insert(playlist)
        try source.save()
        source.close()
        let target = try TestRedis.backend(store: name)
        try ObjectStore.restore(from: snapshot, to: target)
        target.close()
        #expect(try !TestRedis.backend(store: name).tableNames().contains(Song.storedName))

        // The open store spends its range: the next insert reserves again.
        for index in 0..<16 {
            let song = Song(); song.title = "after \(index)"
            open.insert(song)
        }
        open.close()

        let after = try TestRedis.backend(store: name)
        #expect(try !after.tableNames().contains(Song.storedName))
        let fresh = try ObjectStore(backend: after)
        try fresh.register(Playlist.self)
        #expect(throws: Never.self) { try fresh.register(Song.self) }
        fresh.close()
    }

    /// Another process's reservation is logged and announced as a save of row
    /// 1 alone; a pool's change stream numbers it and hands its subscribers a
    /// `Change` with no class and no named buffer, though "saves that changed
    /// no row and no named buffer are not numbered". Every other process's
    /// reservation (and every lost compare-and-set) wakes subscribers so.
    @Test func anotherProcesssReservationIsNotAnEmptyChangeInAPoolsStream() async throws {
        let name = TestRedis.newStoreName()
        let setup = try ObjectStore(backend: TestRedis.backend(store: name))
        try setup.register(Song.self)
        setup.close()
        let pool = try StorePool(backend: TestRedis.backend(store: name), classes: [Song.self])
        let stream = pool.changes
        let other = try ObjectStore(backend: TestRedis.backend(store: name))
        try other.register(Song.self)
        let song = Song(); song.title = "theirs"
        other.insert(song)     // reserves: logged and announced
        try other.save()
        var iterator = stream.makeAsyncIterator()
        let first = await iterator.next()
        #expect(first?.classes.isEmpty == false, "the first change is \(String(describing: first))")
        #expect(first?.changes(of: Song.self)?.updated == [song.rowID])
        other.close()
        try await pool.close()
    }

    static func version(_ name: String) throws -> Int64 {
        let cli = Process()
        cli.executableURL = URL(fileURLWithPath: "/usr/bin/redis-cli")
        cli.arguments = ["-u", TestRedis.url, "GET", "{\(name)}/version"]
        let output = Pipe()
        cli.standardOutput = output
        try cli.run()
        cli.waitUntilExit()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return Int64(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }
}
