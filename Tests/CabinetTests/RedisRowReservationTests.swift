@testable import Cabinet
import CabinetRedis
import CabinetStorage
import Foundation
import Testing

/// Processes inserting into one class of a Redis store at the same moment:
/// each takes its rows from a range it reserved on the server (the class's
/// metadata row raised by compare-and-set), so no two hand out the same row
/// and neither save conflicts. Each "process" is a backend of its own, as in
/// `RedisOtherProcessesTests`; one test runs real threads.
@Suite struct RedisRowReservationTests {
    static func open(_ name: String) throws -> ObjectStore {
        let store = try ObjectStore(backend: TestRedis.backend(store: name))
        try store.register(Song.self)
        return store
    }

    /// The class's last row ID on the server, as `cabinet info` reads it.
    static func lastRowID(_ name: String) throws -> UInt32? {
        let backend = try TestRedis.backend(store: name)
        defer { backend.close() }
        return try StoreInfo(backend: backend).tables.first { $0.name == Song.storedName }?.lastRowID
    }

    @Test func twoProcessesInsertingAtOnceNeverShareARowAndBothSave() throws {
        let name = TestRedis.newStoreName()
        let a = try Self.open(name), b = try Self.open(name)
        let mine = Song(), theirs = Song(), kept = Song()
        mine.title = "mine"; theirs.title = "theirs"; kept.title = "kept"
        a.insert(mine); a.insert(kept)
        b.insert(theirs)
        #expect(Set([mine.rowID, kept.rowID, theirs.rowID]).count == 3, "rows \(mine.rowID), \(kept.rowID), \(theirs.rowID)")
        try b.save()
        try a.save()   // no conflict: a's rows are its own, and neither save wrote the metadata row

        let reader = try Self.open(name)
        #expect(try reader.fetchAll(Song.self).map(\.title).sorted() == ["kept", "mine", "theirs"])
        // The metadata row covers every row saved (an open checks the row after it is free).
        let last = try #require(try Self.lastRowID(name))
        #expect(last >= max(mine.rowID, kept.rowID, theirs.rowID))
        #expect(try StoreVerifier.verify(TestRedis.backend(store: name)).isEmpty)
        // A later open takes rows after every range reserved so far.
        let later = Song(); later.title = "later"
        reader.insert(later)
        #expect(later.rowID > last)
        try reader.save()
        reader.close(); a.close(); b.close()
    }

    /// Four processes (threads, each with a store and connections of its own)
    /// insert 300 songs each, saving every 10, all at once: every save lands,
    /// no row is handed out twice, nothing is lost.
    @Test func manyProcessesInsertingAtOnceAllLand() throws {
        let name = TestRedis.newStoreName()
        try Self.open(name).close()   // the class registered once, as a service's deployment would
        let failures = Failures()
        DispatchQueue.concurrentPerform(iterations: 4) { process in
            do {
                let store = try Self.open(name)
                defer { store.close() }
                for batch in 0..<30 {
                    for index in 0..<10 {
                        let song = Song(); song.title = "\(process)-\(batch * 10 + index)"
                        store.insert(song)
                    }
                    try store.save()
                }
            } catch {
                failures.add("process \(process): \(error)")
            }
        }
        #expect(failures.all.isEmpty, "\(failures.all)")
        let reader = try Self.open(name)
        let titles = try reader.fetchAll(Song.self).map(\.title)
        #expect(titles.count == 1_200)
        #expect(Set(titles).count == 1_200)
        #expect(try StoreVerifier.verify(TestRedis.backend(store: name)).isEmpty)
        reader.close()
    }

    /// A pool's write block and another process insert into one class at the
    /// same moment (the other's save lands while the block runs): both land.
    @Test func aPoolsWriteBlockAndAnotherProcessInsertAtOnceAndBothLand() async throws {
        let name = TestRedis.newStoreName()
        let first = try Self.open(name)
        let song = Song(); song.title = "first"
        first.insert(song)
        try first.save()
        let pool = try StorePool(backend: TestRedis.backend(store: name), classes: [Song.self])
        let other = OtherProcess(store: try Self.open(name), song: Song())
        other.song.title = "theirs"
        let mine: UInt32 = try await pool.write { store in
            let mine = Song(); mine.title = "mine"
            store.insert(mine)
            other.store.insert(other.song)   // used from the pool's writer thread while the test waits: one thread at a time
            try other.store.save()
            return mine.rowID
        }
        #expect(mine != other.song.rowID)
        // The pool's next blocks take their rows from the same range.
        let next: UInt32 = try await pool.write { store in
            let again = Song(); again.title = "again"
            store.insert(again)
            return again.rowID
        }
        #expect(next == mine + 1)
        try await pool.close()
        let reader = try Self.open(name)
        #expect(try reader.fetchAll(Song.self).map(\.title).sorted() == ["again", "first", "mine", "theirs"])
        reader.close(); first.close(); other.store.close()
    }

    /// When a reservation fails (here the backend refuses it; in life the server
    /// is unreachable at the insert), the insert takes the next row it knows, as
    /// with one writer, and its save writes the metadata row: a row another
    /// process saved first is a conflict, never overwritten, and the object,
    /// inserted anew after a refresh, lands.
    @Test func anInsertWhoseReservationFailedConflictsInsteadOfOverwriting() throws {
        let name = TestRedis.newStoreName()
        let refusing = ReservationFailingBackend(try TestRedis.backend(store: name))
        let a = try ObjectStore(backend: refusing)
        try a.register(Song.self)
        let b = try ObjectStore(backend: ReservationFailingBackend(try TestRedis.backend(store: name)))
        try b.register(Song.self)
        let mine = Song(), theirs = Song(), kept = Song()
        mine.title = "mine"; theirs.title = "theirs"; kept.title = "kept"
        a.insert(mine); a.insert(kept)
        b.insert(theirs)
        #expect(refusing.refusals > 0)
        #expect(mine.rowID == theirs.rowID)   // both took the row after the last they knew
        try b.save()
        let conflict = expectCabinetError({ try a.save() }) { $0.code == .saveConflict }
        #expect(conflict != nil)

        try a.refresh(discardingConflicts: true)
        #expect(throws: CabinetError.self) { try a.save() }   // an insert is never discarded
        a.delete(mine)
        let again = Song(); again.title = "mine"
        a.insert(again)
        #expect(again.rowID > kept.rowID && again.rowID > theirs.rowID)
        try a.save()

        let reader = try Self.open(name)
        #expect(try reader.fetchAll(Song.self).map(\.title).sorted() == ["kept", "mine", "theirs"])
        reader.close(); a.close(); b.close()
    }

    /// Damaged bytes in the metadata row on the server, under an open store:
    /// its reservation reads them and refuses them (a checksum that does not
    /// match), nothing traps, and the insert takes the next row the store knows;
    /// a new open refuses the row with an error naming the class and the row.
    @Test func aDamagedMetadataRowOnTheServerIsRefusedNotTrusted() throws {
        let name = TestRedis.newStoreName()
        let captured = LoggingTests.Captured()
        let store = try ObjectStore(backend: TestRedis.backend(store: name), logger: captured.logger())
        try store.register(Song.self)
        let before = Song(); before.title = "before"
        store.insert(before)
        try store.save()
        let raw = try TestRedis.backend(store: name)
        let table = try raw.openTable(named: Song.storedName)
        try table.beginTransaction()
        try [UInt8](repeating: 0xEE, count: 18).withUnsafeBytes { value in
            try withUnsafeBytes(of: UInt32(1).littleEndian) { try table.apply(value, forKey: $0) }
        }
        try table.commitTransaction()
        raw.close()

        // The first range (16 rows) spent, the next reservation reads the damaged row.
        var rows: [UInt32] = []
        for index in 0..<20 {
            let after = Song(); after.title = "after \(index)"
            store.insert(after)
            rows.append(after.rowID)
        }
        #expect(rows == rows.sorted() && Set(rows).count == 20 && rows[0] > before.rowID)
        let warnings = captured.all.filter { $0.level == .warning && $0.metadata["cabinet.code"] == "malformedMetadata" }
        #expect(warnings.count == 1, "\(captured.all.map(\.message))")
        #expect(warnings.first?.metadata["cabinet.class"] == Song.storedName)
        let refused = expectCabinetError({ _ = try Self.open(name) }) { $0.code == .malformedMetadata }
        #expect(refused?.location?.className == Song.storedName)
        #expect(refused?.location?.rowID == 1)
        store.close()
    }
}

/// Another process's store and object, handed to a pool's block (`@unchecked`:
/// only that block uses them, while the test waits for it).
private final class OtherProcess: @unchecked Sendable {
    let store: ObjectStore
    let song: Song
    init(store: ObjectStore, song: Song) { (self.store, self.song) = (store, song) }
}

/// Failures seen on several threads.
private final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func add(_ failure: String) { lock.withLock { list.append(failure) } }
    var all: [String] { lock.withLock { list } }
}
