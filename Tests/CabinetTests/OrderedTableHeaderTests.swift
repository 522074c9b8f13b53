@testable import CabinetStorage
import CTokyoCabinet
import Foundation
import Testing

/// Tokyo Cabinet's B+ tree rewrites its meta data in the file's header (zeroes it,
/// then writes each field) before its transaction's log begins, and at a sync or
/// a close with no transaction at all. A process killed in between left a header
/// with zeros in it that nothing could roll back (the crash torture found it).
/// These tests tear the header at those moments, in the real calls, and take the
/// files as a kill would leave them: copied while the writer is inside its call.
@Suite struct OrderedTableHeaderTests {
    static let entries = 2_000

    private static func key(_ i: Int) -> [UInt8] { Array("key \(100_000 + i)".utf8) }
    private static func value(_ i: Int) -> [UInt8] { [UInt8](repeating: UInt8(i % 251), count: 40) }

    /// A store directory with an index-like table `T.index` holding entries `range`.
    private func makeTable(_ directory: TemporaryDirectory, _ range: Range<Int> = 0..<entries) throws -> (TokyoCabinetBackend, TokyoCabinetOrderedTable) {
        let backend = try TokyoCabinetBackend(directory: directory.path + "/store")
        let table = try #require(try backend.openOrderedTable(named: "T.index") as? TokyoCabinetOrderedTable)
        try put(range, into: table)
        return (backend, table)
    }

    private func put(_ range: Range<Int>, into table: any OrderedStorageTable) throws {
        try table.beginTransaction()
        for i in range {
            try Self.key(i).withUnsafeBytes { k in try Self.value(i).withUnsafeBytes { try table.setValue($0, forKey: k) } }
        }
        try table.commitTransaction()
    }

    /// Writes `bytes` at `offset` of the file through the page cache, which the writer's map shares.
    private func overwrite(_ path: String, at offset: Int, with bytes: [UInt8]) {
        let fd = open(path, O_WRONLY)
        #expect(fd >= 0)
        defer { _ = Glibc.close(fd) }
        #expect(bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(offset)) } == bytes.count)
    }

    /// Zeroes the tree's meta data in the header (bytes 128 to 191), as a kill
    /// right after `tcbdbdumpmeta` cleared it leaves them.
    private func tearHeader(_ path: String) {
        overwrite(path, at: 128, with: [UInt8](repeating: 0, count: 64))
    }

    /// What a SIGKILL at this instant leaves on disk: the store's files as the page cache holds them.
    private func snapshot(_ store: String, to copy: String) throws {
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: store) where name != ".cabinet-lock" {
            try FileManager.default.copyItem(atPath: store + "/" + name, toPath: copy + "/" + name)
        }
    }

    /// Opens the copy writable (which rolls back what its log holds), checks it holds
    /// exactly the entries `range`, then writes more and reads everything again.
    private func expectWhole(_ copy: String, _ range: Range<Int> = 0..<entries) throws {
        let backend = try TokyoCabinetBackend(directory: copy)
        defer { backend.close() }
        let table = try backend.openOrderedTable(named: "T.index")
        func check(_ range: Range<Int>) throws {
            #expect(try table.recordCount == range.count)
            var seen = range.lowerBound
            try table.forEach { key, value in
                #expect(Array(key) == Self.key(seen) && Array(value) == Self.value(seen))
                seen += 1
                return true
            }
            #expect(seen == range.upperBound)
        }
        try check(range)
        try put(range.upperBound..<(range.upperBound + 3_000), into: table)
        try check(range.lowerBound..<(range.upperBound + 3_000))
    }

    @Test func aHeaderTornAsATransactionBeginsIsRolledBack() throws {
        let directory = try TemporaryDirectory()
        let (backend, table) = try makeTable(directory)
        table.whileHeaderLogged = { [path = table.path] in
            tearHeader(path)
            try snapshot(directory.path + "/store", to: directory.path + "/killed")
        }
        try table.beginTransaction()
        table.whileHeaderLogged = nil
        try table.abortTransaction()
        backend.close()
        #expect(FileManager.default.fileExists(atPath: directory.path + "/killed/T.index.wal"), "the header's log is in the copy")
        try expectWhole(directory.path + "/killed")
        try expectWhole(directory.path + "/store")
    }

    @Test func aHeaderTornInASyncIsRolledBackAndTheLogIsEmptiedAfter() throws {
        let directory = try TemporaryDirectory()
        let (backend, table) = try makeTable(directory)
        table.whileHeaderLogged = { [path = table.path] in
            tearHeader(path)
            try snapshot(directory.path + "/store", to: directory.path + "/killed")
        }
        try table.sync()
        #expect(try FileManager.default.attributesOfItem(atPath: table.path + ".wal")[.size] as? Int == 0,
                "emptied after the sync, so readers see no interrupted transaction")
        backend.close()
        try expectWhole(directory.path + "/killed")
        try expectWhole(directory.path + "/store")
    }

    /// A close also saves the free-block pool (the free space inside the file) just
    /// before it clears the "open" flag; a kill can leave that half written, part of
    /// an older pool whose blocks now hold live pages. Rolled back from the header's
    /// log, the file must not load it.
    @Test func aCloseKilledWithItsHeaderOrItsFreeSpaceTornIsRolledBack() throws {
        let directory = try TemporaryDirectory()
        let (backend, first) = try makeTable(directory)
        var table = first
        // Free space: the pages of the first half, emptied.
        try table.beginTransaction()
        for i in 0..<(Self.entries / 2) { _ = try Self.key(i).withUnsafeBytes { try table.removeValue(forKey: $0) } }
        try table.commitTransaction()
        backend.close()
        let poolOffset = TokyoCabinetDirectory.headerSize + 65_521 * 4
        let oldPool = try #require(FileHandle(forReadingAtPath: table.path)).readData(ofLength: poolOffset + 2).suffix(2)
        #expect(oldPool != Data([0, 0]), "the clean close saved a pool of free blocks")
        // The next session reuses that space for live pages, then closes.
        let backend2 = try TokyoCabinetBackend(directory: directory.path + "/store")
        table = try #require(try backend2.openOrderedTable(named: "T.index") as? TokyoCabinetOrderedTable)
        try put(Self.entries..<(Self.entries + 1_000), into: table)
        table.whileHeaderLogged = { [path = table.path] in
            tearHeader(path)
            overwrite(path, at: poolOffset, with: Array(oldPool))   // the old pool, as a torn save leaves it
            try snapshot(directory.path + "/store", to: directory.path + "/killed")
        }
        backend2.close()
        let live = Array((Self.entries / 2)..<(Self.entries + 1_000))
        for path in [directory.path + "/killed", directory.path + "/store"] {
            let reopened = try TokyoCabinetBackend(directory: path)
            let copy = try reopened.openOrderedTable(named: "T.index")
            #expect(try copy.recordCount == live.count)
            // Enough new pages to take any free block a wrong pool would offer.
            try put((Self.entries * 10)..<(Self.entries * 10 + 4_000), into: copy)
            var seen: [[UInt8]] = []
            try copy.forEach { key, _ in seen.append(Array(key)); return true }
            #expect(seen == (live + Array((Self.entries * 10)..<(Self.entries * 10 + 4_000))).map(Self.key))
            reopened.close()
        }
    }

    /// A writer killed in its close after clearing the "open" flag leaves the log of
    /// the header behind; the next writable open removes it, so a reader does not
    /// take it for an interrupted transaction and a later kill cannot roll it back.
    /// A longer log there held a transaction a close was rolling back: the file is
    /// then built again by its owner.
    @Test func aSpentLogBesideACleanFileIsRemovedAndALongerOneMarksTheFileDamaged() throws {
        let directory = try TemporaryDirectory()
        let (backend, table) = try makeTable(directory)
        let path = table.path
        var headerLog = Data()
        table.whileHeaderLogged = { headerLog = try Data(contentsOf: URL(fileURLWithPath: path + ".wal")) }
        backend.close()
        #expect(headerLog.count == TokyoCabinetLog.headerEntrySize)
        // One more entry (2 bytes at offset 0), its length in the byte order of the header's (256).
        let two: [UInt8] = Array(headerLog[16..<20]) == [0, 0, 1, 0] ? [0, 0, 0, 2] : [2, 0, 0, 0]
        for (log, damaged) in [(headerLog, false), (headerLog + Data([UInt8](repeating: 0, count: 8) + two + [7, 7]), true)] {
            try log.write(to: URL(fileURLWithPath: path + ".wal"))
            var readOnly = TokyoCabinetBackend.Options()
            readOnly.readOnly = true
            let reader = try TokyoCabinetBackend(directory: directory.path + "/store", options: readOnly)
            #expect(try reader.openOrderedTable(named: "T.index").recordCount == Self.entries, "a clean file's log is no transaction")
            reader.close()
            let writer = try TokyoCabinetBackend(directory: directory.path + "/store")
            #expect(try writer.openOrderedTable(named: "T.index").isDamaged == damaged)
            #expect(!FileManager.default.fileExists(atPath: path + ".wal"))
            writer.close()
        }
        try expectWhole(directory.path + "/store")
    }
}
