import Cabinet
import CabinetRedis
import CabinetStorage
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Big saves on Redis: a table's changes from `stagingThreshold` on go to a
/// staging key while the save is made, and the commit renames it over the
/// table, only if it is still the table as of the version the commit watches
/// plus this save's changes; else the changes go in the `MULTI` as always.
/// (The whole store suite runs with a threshold of 2 too: `TestRedis.options`.)
@Suite struct RedisStagedSaveTests {
    static func options(threshold: Int) -> RedisBackend.Options {
        var options = RedisBackend.Options()
        options.stagingThreshold = threshold
        return options
    }

    static func key(_ row: Int) -> [UInt8] { withUnsafeBytes(of: UInt32(row).littleEndian, Array.init) }
    static func value(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// Puts rows `rows` into `table` with values "prefix-row", inside the open transaction.
    static func put(_ rows: Range<Int>, _ prefix: String, into table: any StorageTable) throws {
        for row in rows {
            try value("\(prefix)-\(row)").withUnsafeBytes { value in
                try key(row).withUnsafeBytes { try table.setValue(value, forKey: $0) }
            }
        }
    }

    static func read(_ table: any StorageTable, _ row: Int) throws -> String? {
        try key(row).withUnsafeBytes { key in try table.withValue(forKey: key) { String(decoding: $0, as: UTF8.self) } }
    }

    /// The store's staging keys on the server (`SCAN`).
    static func stagings(_ server: RedisBackendTests.OwnServer, store: String) -> [String] {
        server.cli("--scan", "--pattern", "{\(store)}/staging/*").split(separator: "\n").map(String.init)
    }

    /// How many times the server ran `command` (`INFO commandstats`).
    static func calls(_ command: String, _ server: RedisBackendTests.OwnServer) -> Int {
        let stats = server.cli("INFO", "commandstats")
        guard let line = stats.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix("cmdstat_\(command):") }),
              let calls = line.split(separator: ",").first?.split(separator: "=").last else { return 0 }
        return Int(calls) ?? 0
    }

    /// Renames over a table: each stream is sealed by a rename of its own, so a
    /// staged save makes two, a save that staged and then sent its changes one.
    static func renames(_ server: RedisBackendTests.OwnServer) -> Int { calls("rename", server) / 2 }

    @Test func aBigSaveOfObjectsIsRenamedIntoPlaceAndReadsBackWhole() throws {
        let server = try RedisBackendTests.OwnServer()
        let name = TestRedis.newStoreName()
        let store = try ObjectStore(backend: RedisBackend(url: server.url, store: name, options: Self.options(threshold: 100)))
        try store.register(Song.self)
        for i in 0..<1_000 {
            let song = Song(); song.title = "song \(i)"; song.seconds = UInt32(i)
            store.insert(song)
        }
        try store.save()
        #expect(Self.renames(server) == 1, "the songs went in through their staging")
        #expect(Self.stagings(server, store: name).isEmpty, "no staging is left")
        store.close()

        let again = try ObjectStore(backend: RedisBackend(url: server.url, store: name))
        try again.register(Song.self)
        let songs = try again.fetchAll(Song.self)
        #expect(songs.count == 1_000)
        #expect(songs.allSatisfy { $0.title == "song \($0.seconds)" })
        again.close()
        #expect(try RedisBackend(url: server.url, store: name).storageProblems().isEmpty)
    }

    @Test func aSmallSaveIsNotStaged() throws {
        let server = try RedisBackendTests.OwnServer()
        let backend = try RedisBackend(url: server.url, store: TestRedis.newStoreName(), options: Self.options(threshold: 100))
        let table = try backend.openTable(named: "T")
        try table.beginTransaction()
        try Self.put(0..<99, "a", into: table)
        try table.commitTransaction()
        #expect(Self.renames(server) == 0)
        #expect(try Self.read(table, 98) == "a-98")
        backend.close()
    }

    @Test func aSaveOfAnotherProcessAfterTheCopyIsKept() throws {
        let server = try RedisBackendTests.OwnServer()
        let name = TestRedis.newStoreName()
        let a = try RedisBackend(url: server.url, store: name, options: Self.options(threshold: 10))
        let b = try RedisBackend(url: server.url, store: name, options: Self.options(threshold: 10))
        let tableA = try a.openTable(named: "T"), tableB = try b.openTable(named: "T")
        try tableA.beginTransaction()
        try Self.put(0..<50, "a", into: tableA)          // staged: a copy of the table as it was
        #expect(Self.stagings(server, store: name).count == 1)
        try tableB.beginTransaction()
        try Self.put(1_000..<1_005, "b", into: tableB)   // another process saves into the same table meanwhile
        try tableB.commitTransaction()
        try Self.put(50..<60, "a", into: tableA)
        try tableA.commitTransaction()
        // Renaming a's staging would have dropped b's records: they are there, and a's too.
        #expect(Self.renames(server) == 0, "the staging was older than the store: a's changes went in the MULTI")
        let check = try RedisBackend(url: server.url, store: name)
        let table = try check.openTable(named: "T")
        for row in 1_000..<1_005 { #expect(try Self.read(table, row) == "b-\(row)") }
        for row in 0..<60 { #expect(try Self.read(table, row) == "a-\(row)") }
        #expect(try table.recordCount == 65)
        #expect(Self.stagings(server, store: name).isEmpty, "the unused staging went with the save")
        a.close(); b.close(); check.close()
    }

    @Test func aStagingRemovedBeforeTheCommitIsNotRenamed() throws {
        let server = try RedisBackendTests.OwnServer()
        let name = TestRedis.newStoreName()
        let backend = try RedisBackend(url: server.url, store: name, options: Self.options(threshold: 10))
        let table = try backend.openTable(named: "T")
        try table.beginTransaction()
        try Self.put(0..<40, "old", into: table)
        try table.commitTransaction()
        try table.beginTransaction()
        try Self.put(0..<100, "new", into: table)
        let staging = try #require(Self.stagings(server, store: name).first)
        server.cli("UNLINK", staging)   // gone (as if evicted): a RENAME of it would fail inside the EXEC
        try table.commitTransaction()
        for row in [0, 39, 40, 99] { #expect(try Self.read(table, row) == "new-\(row)") }
        #expect(try table.recordCount == 100)
    }

    @Test func aStagingChangedBeforeTheCommitIsNotRenamed() throws {
        let server = try RedisBackendTests.OwnServer()
        let name = TestRedis.newStoreName()
        let backend = try RedisBackend(url: server.url, store: name, options: Self.options(threshold: 10))
        let table = try backend.openTable(named: "T")
        try table.beginTransaction()
        try Self.put(0..<30, "mine", into: table)
        let staging = try #require(Self.stagings(server, store: name).first)
        server.cli("HSET", staging, "stray", "field")   // not this process's: its length no longer matches
        try table.commitTransaction()
        #expect(Self.renames(server) == 0)
        #expect(try Array("stray".utf8).withUnsafeBytes { try table.withValue(forKey: $0) { _ in true } } == nil)
        #expect(try Self.read(table, 29) == "mine-29")
        #expect(try table.recordCount == 30)
    }

    @Test func removalsAndChangesOfRecordsThatWereThereGoThroughTheStaging() throws {
        let server = try RedisBackendTests.OwnServer()
        let name = TestRedis.newStoreName()
        let backend = try RedisBackend(url: server.url, store: name, options: Self.options(threshold: 10))
        let table = try backend.openTable(named: "T")
        try table.beginTransaction()
        try Self.put(0..<10, "first", into: table)
        try table.commitTransaction()
        let before = Self.renames(server)
        try table.beginTransaction()
        try Self.put(10..<40, "more", into: table)
        for row in [2, 3, 20] { _ = try Self.key(row).withUnsafeBytes { try table.removeValue(forKey: $0) } }
        try Self.put(5..<7, "changed", into: table)
        try Self.put(3..<4, "back", into: table)         // removed, then set again
        try table.commitTransaction()
        #expect(Self.renames(server) == before + 1, "staged")
        #expect(try Self.read(table, 0) == "first-0")
        #expect(try Self.read(table, 2) == nil && Self.read(table, 20) == nil)
        #expect(try Self.read(table, 3) == "back-3")
        #expect(try Self.read(table, 5) == "changed-5" && Self.read(table, 6) == "changed-6")
        #expect(try Self.read(table, 39) == "more-39")
        #expect(try table.recordCount == 38)
    }

    @Test func aTableBiggerThanTheSaveIsNotCopied() throws {
        let server = try RedisBackendTests.OwnServer()
        let name = TestRedis.newStoreName()
        let backend = try RedisBackend(url: server.url, store: name, options: Self.options(threshold: 10))
        let table = try backend.openTable(named: "T")
        try table.beginTransaction()
        try Self.put(0..<100, "big", into: table)
        try table.commitTransaction()
        let before = Self.renames(server)
        try table.beginTransaction()
        try Self.put(0..<20, "update", into: table)      // 20 changes to a table of 100: not staged
        #expect(Self.stagings(server, store: name).isEmpty)
        try table.commitTransaction()
        #expect(Self.renames(server) == before)
        #expect(try Self.read(table, 19) == "update-19" && Self.read(table, 20) == "big-20")
    }

    @Test func aTransactionRolledBackLeavesNoStagingAndNoChange() throws {
        let server = try RedisBackendTests.OwnServer()
        let name = TestRedis.newStoreName()
        let backend = try RedisBackend(url: server.url, store: name, options: Self.options(threshold: 10))
        let table = try backend.openTable(named: "T")
        try table.beginTransaction()
        try Self.put(0..<50, "dropped", into: table)
        #expect(Self.stagings(server, store: name).count == 1)
        try table.abortTransaction()
        #expect(Self.stagings(server, store: name).isEmpty)
        #expect(try Self.read(table, 0) == nil)
        #expect(try table.recordCount == 0)
    }

    @Test func aConflictingSaveWritesNothingAndKeepsItsChangesPending() throws {
        let server = try RedisBackendTests.OwnServer()
        let name = TestRedis.newStoreName()
        let a = try ObjectStore(backend: RedisBackend(url: server.url, store: name, options: Self.options(threshold: 10)))
        try a.register(Song.self)
        let first = Song(); first.title = "first"
        a.insert(first)
        try a.save()
        let b = try ObjectStore(backend: RedisBackend(url: server.url, store: name))
        try b.register(Song.self)
        let theirs = try #require(try b.fetch(Song.self, rowID: first.rowID))
        first.title = "mine"
        for i in 0..<50 { let song = Song(); song.title = "new \(i)"; a.insert(song) }
        theirs.title = "theirs"
        try b.save()
        expectCabinetError({ try a.save() }) { $0.code == .saveConflict }
        #expect(a.hasUnsavedChanges)
        #expect(Self.stagings(server, store: name).isEmpty, "the failed save's staging is removed")
        #expect(try b.count(of: Song.self) == 1, "nothing of the failed save is in")
        try a.refresh(discardingConflicts: true)
        try a.save()
        #expect(try a.count(of: Song.self) == 51)
        a.close(); b.close()
    }

    @Test func aSaveOfAnotherProcessToAnotherTableLeavesTheStagingGood() throws {
        let server = try RedisBackendTests.OwnServer()
        let name = TestRedis.newStoreName()
        let a = try RedisBackend(url: server.url, store: name, options: Self.options(threshold: 10))
        let b = try RedisBackend(url: server.url, store: name)
        let tableA = try a.openTable(named: "T"), otherB = try b.openTable(named: "U")
        try tableA.beginTransaction()
        try Self.put(0..<50, "a", into: tableA)
        try otherB.beginTransaction()
        try Self.put(0..<5, "b", into: otherB)      // another process saves another table meanwhile
        try otherB.commitTransaction()
        try tableA.commitTransaction()
        #expect(Self.renames(server) == 1, "the copy of T is as good as new: renamed")
        #expect(try Self.read(tableA, 49) == "a-49" && Self.read(otherB, 4) == "b-4")
        #expect(Self.stagings(server, store: name).isEmpty)
        a.close(); b.close()
    }

    @Test func aStagingAlwaysHasItsLifetimeWhileTheSaveIsMade() throws {
        let server = try RedisBackendTests.OwnServer()
        let name = TestRedis.newStoreName()
        let backend = try RedisBackend(url: server.url, store: name, options: Self.options(threshold: 10))
        let table = try backend.openTable(named: "T")
        try table.beginTransaction()
        // Removals of rows that are not there first: the staging starts as no key at all.
        for row in 0..<10 { _ = try Self.key(1_000_000 + row).withUnsafeBytes { try table.removeValue(forKey: $0) } }
        try Self.put(0..<600, "x", into: table)     // its first HSET makes it
        let staging = try #require(Self.stagings(server, store: name).first)
        let ttl = Int(server.cli("TTL", staging).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -9
        #expect(ttl > 0, "a staging without a lifetime would stay for ever if this process died now (TTL \(ttl))")
        try table.commitTransaction()
        #expect(server.cli("TTL", "{\(name)}:T").trimmingCharacters(in: .whitespacesAndNewlines) == "-1", "the table itself never expires")
        #expect(try table.recordCount == 600)
    }

    @Test func alternatingSetsAndRemovalsOfDifferentRowsGoInFewCommands() throws {
        let server = try RedisBackendTests.OwnServer()
        let backend = try RedisBackend(url: server.url, store: TestRedis.newStoreName(), options: Self.options(threshold: 10))
        let table = try backend.openTable(named: "T")
        try table.beginTransaction()
        try Self.put(0..<20, "base", into: table)
        try table.commitTransaction()
        let (sets, removals) = (Self.calls("hset", server), Self.calls("hdel", server))
        try table.beginTransaction()
        for row in 20..<1_020 {
            if row % 2 == 0 { try Self.put(row..<row + 1, "new", into: table) }
            else { _ = try Self.key(row - 20).withUnsafeBytes { try table.removeValue(forKey: $0) } }
        }
        try table.commitTransaction()
        #expect(Self.calls("hset", server) - sets <= 4 && Self.calls("hdel", server) - removals <= 4,
                "\(Self.calls("hset", server) - sets) HSETs, \(Self.calls("hdel", server) - removals) HDELs")
        #expect(try Self.read(table, 1_018) == "new-1018" && Self.read(table, 1) == nil && Self.read(table, 0) == "base-0")
    }

    /// A process killed (SIGKILL) at moments spread over a staged save of
    /// 100,000 records (from the staging's start to past the commit, as long as
    /// a save that is not killed takes here): its table is whole or absent, and
    /// whatever staging it left expires by itself.
    @Test func aProcessKilledInAStagedSaveLeavesItWholeOrAbsent() throws {
        let server = try RedisBackendTests.OwnServer()
        let name = TestRedis.newStoreName()
        let count = 100_000
        var generator = SystemRandomNumberGenerator()
        var outcomes: [String: Int] = [:]
        var duration: Duration = .zero
        let rounds = 9
        for round in 0..<rounds {
            let table = "T\(round)"
            let child = Process()
            child.executableURL = URL(fileURLWithPath: buildProductsDirectory + "/cabinet-test-big-save")
            child.arguments = [server.url, name, table, String(count)]
            let output = Pipe()
            child.standardOutput = output
            try child.run()
            let first = String(decoding: output.fileHandleForReading.availableLine(), as: UTF8.self)
            #expect(first == "staging", "round \(round): \(first)")
            if round == 0 {
                // Round 0 is not killed: how long the rest of a save takes.
                let clock = ContinuousClock(), start = clock.now
                child.waitUntilExit()
                duration = clock.now - start
            } else {
                let span = Double(duration.components.seconds) * 1e6 + Double(duration.components.attoseconds) / 1e12
                let slice = span * 1.2 / Double(rounds - 1)
                usleep(UInt32(slice * Double(round - 1) + Double.random(in: 0...slice, using: &generator)))
                kill(child.processIdentifier, SIGKILL)
                child.waitUntilExit()
            }
            let committed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).contains("committed")
            let check = try RedisBackend(url: server.url, store: name)
            let records = try check.hasTable(named: table) ? try check.openTable(named: table).recordCount : 0
            #expect(records == 0 || records == count, "round \(round): \(records) of \(count) records: a part of a save")
            if committed || round == 0 { #expect(records == count, "round \(round): an acknowledged save is missing") }
            if records == count {
                let stored = try check.openTable(named: table)
                #expect(try Self.read(stored, count - 1) == "\(table)-\(count - 1)" && Self.read(stored, 0) == "\(table)-0")
            }
            for leftover in Self.stagings(server, store: name) {
                let ttl = Int(server.cli("TTL", leftover).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -9
                #expect(ttl > 0, "round \(round): \(leftover) would never expire (TTL \(ttl))")
                server.cli("UNLINK", leftover)
            }
            outcomes[records == count ? "whole" : "absent", default: 0] += 1
            check.close()
        }
        print("big saves killed: \(outcomes), a whole save taking \(duration)")
    }

    @Test func verifyReportsAStagingLeftByAProcessThatDied() throws {
        let server = try RedisBackendTests.OwnServer()
        let name = TestRedis.newStoreName()
        let backend = try RedisBackend(url: server.url, store: name)
        _ = try backend.openTable(named: "T")
        let leftover = "{\(name)}/staging/0123456789abcdef:T"
        server.cli("HSET", leftover, "k", "v")
        let problems = try backend.storageProblems()
        #expect(problems.count == 1)
        #expect(problems.first?.reason.contains("staging of a big save") == true)
        #expect(problems.first?.reason.contains("UNLINK") == true)
        backend.close()
    }
}
