@testable import Cabinet
import CabinetStorage
import Foundation
import Testing

/// A pool on a backend of each kind, for the live-data tests, holding tracks, accounts and vaults.
final class LivePoolFixture {
    let kind: BackendKind
    let directory: TemporaryDirectory
    let memory = MemoryBackend(name: "memory-live")
    let dictionary = DictionaryBackend.Contents(name: "dictionary-live")
    let redisStore = TestRedis.newStoreName()
    static let classes: [StoredObject.Type] = [Track.self, Account.self, Vault.self]
    /// Set by `make asan` and `make tsan`: everything about ten times slower.
    static let sanitized = ProcessInfo.processInfo.environment["CABINET_SANITIZED"] != nil

    /// A suite's time limit: three times as long under a sanitizer, where the
    /// observations' runs share two cores with the rest of the suite.
    static func timeLimit(minutes: Int) -> TimeLimitTrait.Duration {
        .minutes(minutes * (sanitized ? 3 : 1))
    }

    init(_ kind: BackendKind) throws {
        self.kind = kind
        directory = try TemporaryDirectory()
    }

    var storePath: String { directory.path + "/store" }

    func open() throws -> StorePool {
        switch kind {
        case .tokyoCabinet: return try StorePool(path: storePath, classes: Self.classes)
        case .memory: return try StorePool(backend: memory, classes: Self.classes)
        case .redis: return try StorePool(backend: TestRedis.backend(store: redisStore), classes: Self.classes)
        case .dictionary: return try StorePool(backend: DictionaryBackend(dictionary), classes: Self.classes)
        }
    }
}

struct TrackRow: Sendable, Equatable {
    let title: String
    let seconds: UInt32
}

private struct Refused: Error {}

/// Inserts tracks; their row IDs.
@discardableResult
func insertTracks(_ pool: StorePool, _ tracks: [(String, String, UInt32)]) async throws -> [UInt32] {
    try await pool.write { store in
        tracks.map { title, artist, seconds in
            let track = Track(title, by: artist, seconds: seconds)
            store.insert(track)
            return track.rowID
        }
    }
}

@Suite(.timeLimit(LivePoolFixture.timeLimit(minutes: 2))) struct LiveQueryTests {
    @Test(arguments: BackendKind.allCases)
    func aQueryGivesItsValueAtOnceThenAfterEachCommitThatChangesIt(_ kind: BackendKind) async throws {
        let fixture = try LivePoolFixture(kind)
        defer { withExtendedLifetime(fixture) {} }
        let pool = try fixture.open()
        try await insertTracks(pool, [("Bohemian Rhapsody", "Queen", 355), ("Imagine", "John Lennon", 183)])
        var queen = pool.observe { store in
            try store.fetch(Track.self, where: \.artist, equals: "Queen").map { TrackRow(title: $0.title, seconds: $0.seconds) }
        }.makeAsyncIterator()
        #expect(try await queen.next() == [TrackRow(title: "Bohemian Rhapsody", seconds: 355)])
        try await insertTracks(pool, [("Under Pressure", "Queen", 248)])
        #expect(try await queen.next()?.map(\.title) == ["Bohemian Rhapsody", "Under Pressure"])
        try await pool.write { store in
            let track = try #require(try store.fetch(Track.self, where: \.artist, equals: "Queen").first)
            track.artist = "Freddie"
        }
        #expect(try await queen.next()?.map(\.title) == ["Under Pressure"], "a row that left the query's range")
        try await pool.close()
        #expect(try await queen.next() == nil, "close() ends the sequence")
    }

    @Test(arguments: BackendKind.allCases)
    func aCommitOfAnotherClassOrOutsideTheRangeRunsNothing(_ kind: BackendKind) async throws {
        let fixture = try LivePoolFixture(kind)
        defer { withExtendedLifetime(fixture) {} }
        let pool = try fixture.open()
        let rows = try await insertTracks(pool, [("Short", "A", 100), ("Long", "B", 400), ("Other", "C", 900)])
        let account: UInt32 = try await pool.write { store in let account = Account(); store.insert(account); return account.rowID }
        var long = pool.observe { store in try store.fetch(Track.self, where: \.seconds, in: 300...600).map(\.title) }.makeAsyncIterator()
        #expect(try await long.next() == ["Long"])
        let runs = pool.core.hub.runs
        for i in 0..<10 {
            try await pool.write { store in try #require(try store.fetch(Account.self, rowID: account)).balance = Int64(i) }
        }
        // A track outside the range, staying outside; one outside the range, its title changed.
        try await pool.write { store in try #require(try store.fetch(Track.self, rowID: rows[0])).seconds = 200 }
        try await pool.write { store in try #require(try store.fetch(Track.self, rowID: rows[2])).title = "Still other" }
        #expect(pool.core.hub.runs == runs, "no commit touched what the query read")
        // A row of the result changed: runs again.
        try await pool.write { store in try #require(try store.fetch(Track.self, rowID: rows[1])).title = "Longer" }
        #expect(try await long.next() == ["Longer"])
        #expect(pool.core.hub.runs == runs + 1)
        // A row moved into the range: its new index key is in it.
        try await pool.write { store in try #require(try store.fetch(Track.self, rowID: rows[0])).seconds = 350 }
        #expect(try await long.next() == ["Short", "Longer"])
        try await pool.close()
    }

    @Test(arguments: BackendKind.allCases)
    func everyValueSeesWholeSavesAcrossTwoClasses(_ kind: BackendKind) async throws {
        let fixture = try LivePoolFixture(kind)
        defer { withExtendedLifetime(fixture) {} }
        let pool = try fixture.open()
        let rows: (UInt32, UInt32) = try await pool.write { store in
            let account = Account(); account.balance = 1_000
            let vault = Vault()
            store.insert(account); store.insert(vault)
            return (account.rowID, vault.rowID)
        }
        let sums = pool.observe { store in
            let account = try store.fetch(Account.self, rowID: rows.0)?.balance ?? -1_000_000
            let vault = try store.fetch(Vault.self, rowID: rows.1)?.balance ?? -1_000_000
            return (account + vault, vault)
        }
        let watcher = Task {
            var seen: [(Int64, Int64)] = []
            for try await value in sums {
                seen.append(value)
                if value.1 == 100 { break }
            }
            return seen
        }
        for _ in 0..<100 {
            try await pool.write { store in
                try #require(try store.fetch(Account.self, rowID: rows.0)).balance -= 1
                try #require(try store.fetch(Vault.self, rowID: rows.1)).balance += 1
            }
        }
        let seen = try await watcher.value
        #expect(seen.allSatisfy { $0.0 == 1_000 }, "never half a transfer")
        #expect(seen.map(\.1) == seen.map(\.1).sorted(), "in commit order")
        #expect(seen.last?.1 == 100)
        try await pool.close()
    }

    @Test(arguments: BackendKind.allCases)
    func oneObjectFollowsItsChangesAndIsNilOnceDeleted(_ kind: BackendKind) async throws {
        let fixture = try LivePoolFixture(kind)
        defer { withExtendedLifetime(fixture) {} }
        let pool = try fixture.open()
        let row = try await insertTracks(pool, [("One", "A", 1)])[0]
        var titles = pool.observe(Track.self, rowID: row, { track in track.title }).makeAsyncIterator()
        #expect(try await titles.next() == "One")
        try await pool.write { store in try #require(try store.fetch(Track.self, rowID: row)).title = "Two" }
        #expect(try await titles.next() == "Two")
        let runs = pool.core.hub.runs
        try await insertTracks(pool, [("Another", "B", 2)])
        #expect(pool.core.hub.runs == runs, "another row of the class is not this object")
        try await pool.write { store in store.delete(try #require(try store.fetch(Track.self, rowID: row))) }
        #expect(try await titles.next() == .some(nil))
        var missing = pool.observe(Track.self, rowID: 9_999, { $0.title }).makeAsyncIterator()
        #expect(try await missing.next() == .some(nil), "a row not there yet")
        try await pool.close()
    }

    @Test(arguments: BackendKind.allCases)
    func aBurstOfCommitsGivesTheLatestValueNotABacklog(_ kind: BackendKind) async throws {
        let fixture = try LivePoolFixture(kind)
        defer { withExtendedLifetime(fixture) {} }
        let pool = try fixture.open()
        let account: UInt32 = try await pool.write { store in let account = Account(); store.insert(account); return account.rowID }
        var balances = pool.observe { store in try store.fetch(Account.self, rowID: account)?.balance ?? -1 }.makeAsyncIterator()
        #expect(try await balances.next() == 0)
        // Nobody reads while the commits land: 10,000 in memory, 2,000 on files and on the server (for time;
        // a tenth of those under a sanitizer, ten times slower, where the burst still outruns the runs).
        let commits = (kind == .memory ? 10_000 : 2_000) / (LivePoolFixture.sanitized ? 10 : 1)
        for i in 1...commits {
            try await pool.write { store in try #require(try store.fetch(Account.self, rowID: account)).balance = Int64(i) }
        }
        var received: [Int64] = []
        while let value = try await balances.next() {
            received.append(value)
            if value == Int64(commits) { break }
        }
        #expect(received.count <= 3, "the newest value, not one per commit: \(received.count)")
        #expect(received == received.sorted())
        try await pool.close()
    }

    @Test(arguments: BackendKind.allCases)
    func cancellingOrBreakingEndsTheObservation(_ kind: BackendKind) async throws {
        let fixture = try LivePoolFixture(kind)
        defer { withExtendedLifetime(fixture) {} }
        let pool = try fixture.open()
        try await insertTracks(pool, [("One", "A", 1)])
        for try await _ in pool.observe({ store in try store.count(of: Track.self) }) { break }
        let task = Task {
            for try await _ in pool.observe({ store in try store.count(of: Track.self) }) {}
        }
        try await Task.sleep(for: .milliseconds(50))
        task.cancel()
        try await task.value
        // Gone from the hub once their consumers went away.
        for _ in 0..<100 where pool.core.hub.count > 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(pool.core.hub.count == 0)
        try await pool.close()
    }

    @Test(arguments: BackendKind.allCases)
    func aBlockThatThrowsEndsWithItsErrorAndOneThatChangesObjectsIsRefused(_ kind: BackendKind) async throws {
        let fixture = try LivePoolFixture(kind)
        defer { withExtendedLifetime(fixture) {} }
        let pool = try fixture.open()
        await #expect(throws: Refused.self) {
            for try await _ in pool.observe({ _ -> Int in throw Refused() }) {}
        }
        let error = await #expect(throws: CabinetError.self) {
            for try await _ in pool.observe({ store in store.insert(Track("Sneaky", by: "X")) }) {}
        }
        #expect(error?.code == .readOnly)
        #expect(try await pool.read { store in try store.count(of: Track.self) } == 0)
        // The writer goes on.
        try await insertTracks(pool, [("After", "A", 1)])
        try await pool.close()
    }

    @Test func observingAClosedPoolEndsAtOnce() async throws {
        let fixture = try LivePoolFixture(.memory)
        let pool = try fixture.open()
        try await pool.close()
        var values = pool.observe { store in try store.count(of: Track.self) }.makeAsyncIterator()
        #expect(try await values.next() == nil)
    }
}

@Suite(.timeLimit(LivePoolFixture.timeLimit(minutes: 2))) struct LiveQueryOtherClientTests {
    /// Another client of the Redis server (another machine, as far as the pool
    /// can tell): its commits reach the pool's observations through the server's pub/sub.
    @Test func aRedisClientsCommitsReachAnotherClientsObservations() async throws {
        let fixture = try LivePoolFixture(.redis)
        let pool = try fixture.open()
        try await insertTracks(pool, [("Bohemian Rhapsody", "Queen", 355)])
        var queen = pool.observe { store in try store.fetch(Track.self, where: \.artist, equals: "Queen").map(\.title) }.makeAsyncIterator()
        var long = pool.observeResults(Track.self, where: \.seconds, in: 300...600) { $0.title }.makeAsyncIterator()
        #expect(try await queen.next() == ["Bohemian Rhapsody"])
        #expect(try await long.next()?.rows == ["Bohemian Rhapsody"])

        let other = try ObjectStore(backend: TestRedis.backend(store: fixture.redisStore))
        try other.register(Track.self, Account.self, Vault.self)
        let runs = pool.core.hub.runs
        other.insert(Account())
        try other.save()
        let track = Track("Under Pressure", by: "Queen", seconds: 248)
        other.insert(track)
        try other.save()
        #expect(try await queen.next() == ["Bohemian Rhapsody", "Under Pressure"])
        #expect(pool.core.hub.runs == runs + 1, "the account's commit ran neither observation")
        track.seconds = 400
        try other.save()
        let update = try #require(try await long.next())
        #expect(update.rows == ["Bohemian Rhapsody", "Under Pressure"])
        #expect(update.inserted == [1])
        other.close()
        try await pool.close()
    }
}

@Suite(.timeLimit(LivePoolFixture.timeLimit(minutes: 2))) struct StoreLiveQueryTests {
    private static func open(_ kind: BackendKind, _ directory: TemporaryDirectory, redisStore: String) throws -> ObjectStore {
        let store: ObjectStore
        switch kind {
        case .tokyoCabinet: store = try ObjectStore(path: directory.path + "/store")
        case .memory: store = try ObjectStore(backend: MemoryBackend())
        case .redis: store = try ObjectStore(backend: TestRedis.backend(store: redisStore))
        case .dictionary: store = try ObjectStore(backend: DictionaryBackend())
        }
        try store.register(Track.self, Account.self)
        return store
    }

    @Test(arguments: BackendKind.allCases)
    func aStoresLiveQueryRunsAfterItsSavesThatChangeIt(_ kind: BackendKind) throws {
        let directory = try TemporaryDirectory()
        let store = try Self.open(kind, directory, redisStore: TestRedis.newStoreName())
        defer { store.close() }
        let queen = Track("Bohemian Rhapsody", by: "Queen", seconds: 355)
        store.insert(queen)
        store.insert(Track("Imagine", by: "John Lennon", seconds: 183))
        try store.save()
        var seen: [[String]] = []
        let observer = try store.observe(Track.self, where: \.artist, equals: "Queen") { tracks in seen.append(tracks.map(\.title)) }
        var long: [[String]] = []
        try store.observe(Track.self, where: \.seconds, in: 300...600) { tracks in long.append(tracks.map(\.title)) }
        var one: [String?] = []
        try store.observe(Track.self, rowID: queen.rowID) { track in one.append(track?.title) }
        #expect(seen == [["Bohemian Rhapsody"]] && long == [["Bohemian Rhapsody"]] && one == ["Bohemian Rhapsody"], "at once")

        store.insert(Account())
        try store.save()
        #expect(seen.count == 1 && long.count == 1 && one.count == 1, "another class: nothing runs")
        store.insert(Track("Under Pressure", by: "Queen", seconds: 248))
        try store.save()
        #expect(seen.last == ["Bohemian Rhapsody", "Under Pressure"])
        #expect(long.count == 1 && one.count == 1, "outside the range, another row")
        queen.title = "Bohemian Rhapsody (live)"
        try store.save()
        #expect(seen.count == 3 && long.last == ["Bohemian Rhapsody (live)"] && one.last == "Bohemian Rhapsody (live)")
        observer.cancel()
        store.delete(queen)
        try store.save()
        #expect(seen.count == 3, "cancelled")
        #expect(long.last == [] && one.last == .some(nil))
        // Undo is a change like any other: saved, it is a commit.
        try store.undoManager.undo()
        try store.save()
        #expect(one.last == "Bohemian Rhapsody (live)" && long.last == ["Bohemian Rhapsody (live)"])
        // And so is redo.
        try store.undoManager.redo()
        try store.save()
        #expect(one.last == .some(nil) && long.last == [])
    }

    @Test func aRedisStoreHearsOfAnotherClientsSavesAtItsNextRefresh() throws {
        let name = TestRedis.newStoreName()
        let directory = try TemporaryDirectory()
        let store = try Self.open(.redis, directory, redisStore: name)
        defer { store.close() }
        let other = try Self.open(.redis, directory, redisStore: name)
        defer { other.close() }
        var seen: [[String]] = []
        try store.observe(Track.self, where: \.artist, equals: "Queen") { tracks in seen.append(tracks.map(\.title)) }
        other.insert(Track("Under Pressure", by: "Queen", seconds: 248))
        try other.save()
        // A read takes the save in; the live query hears of it at the refresh.
        _ = try store.count(of: Account.self)
        try store.refresh()
        #expect(seen == [[], ["Under Pressure"]])
    }
}

@Suite(.timeLimit(LivePoolFixture.timeLimit(minutes: 2))) struct LiveQueryDuplicateTests {
    @Test(arguments: BackendKind.allCases)
    func removingDuplicatesDeliversOnlyValuesThatDiffer(_ kind: BackendKind) async throws {
        let fixture = try LivePoolFixture(kind)
        defer { withExtendedLifetime(fixture) {} }
        let pool = try fixture.open()
        let row = try await insertTracks(pool, [("One", "Queen", 100)])[0]
        let titles = pool.observe { store in try store.fetch(Track.self, where: \.artist, equals: "Queen").map(\.title) }
        var values = titles.removingDuplicates().makeAsyncIterator()
        #expect(try await values.next() == ["One"])
        // Runs again (a row of its result changed), but the titles are the same: nothing delivered.
        try await pool.write { store in try #require(try store.fetch(Track.self, rowID: row)).seconds = 200 }
        try await pool.write { store in try #require(try store.fetch(Track.self, rowID: row)).title = "Two" }
        #expect(try await values.next() == ["Two"])
        try await pool.close()
    }
}
