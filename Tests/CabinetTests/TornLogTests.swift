@testable import CabinetStorage
import Foundation
import Testing

/// A writer killed inside the write(2) of a log entry leaves the entry cut short
/// (the kernel stops a killed process between the pages of a write). Tokyo
/// Cabinet's rollback then restores the entries before it but reports a failure,
/// and its open goes on with the header of the unfinished transaction over the
/// rolled-back file, which breaks at the next write. Cabinet drops the cut entry
/// (its region was never written: an entry goes to the log first) before the open.
@Suite struct TornLogTests {
    private func put(_ row: Int, _ fill: UInt8, into table: any StorageTable) throws {
        try RawTokyoCabinet.rowKey(UInt32(row)).withUnsafeBytes { key in
            try [UInt8](repeating: fill, count: 300).withUnsafeBytes { try table.setValue($0, forKey: key) }
        }
    }

    private func fill(of row: Int, in table: any StorageTable) throws -> UInt8? {
        try RawTokyoCabinet.rowKey(UInt32(row)).withUnsafeBytes { key in
            try table.withValue(forKey: key) { value in value.allSatisfy { $0 == value.first } && value.count == 300 ? value.first : 0 }
        } ?? nil
    }

    @Test func aLogEntryCutByAKillIsDroppedAndTheRollbackIsWhole() throws {
        let directory = try TemporaryDirectory()
        let store = directory.path + "/store", killed = directory.path + "/killed"
        let backend = try TokyoCabinetBackend(directory: store)
        let table = try backend.openTable(named: "Song")
        try table.beginTransaction()
        for row in 2..<302 { try put(row, 1, into: table) }
        try table.commitTransaction()
        // A transaction that rewrites records in place (each logged first) and appends more.
        try table.beginTransaction()
        for row in 2..<102 { try put(row, 2, into: table) }
        for row in 302..<402 { try put(row, 2, into: table) }
        // Killed while logging the next record: the log as it is now, plus part of that entry.
        try FileManager.default.createDirectory(atPath: killed, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: store) where name != ".cabinet-lock" {
            try FileManager.default.copyItem(atPath: store + "/" + name, toPath: killed + "/" + name)
        }
        let logged = try Data(contentsOf: URL(fileURLWithPath: store + "/Song.wal"))
        try put(102, 2, into: table)
        let entry = try Data(contentsOf: URL(fileURLWithPath: store + "/Song.wal")).dropFirst(logged.count)
        #expect(entry.count > 300, "the rewrite logged the record it replaced")
        let log = try #require(FileHandle(forWritingAtPath: killed + "/Song.wal"))
        try log.seekToEnd()
        try log.write(contentsOf: entry.prefix(entry.count / 2))
        try log.close()
        try table.abortTransaction()
        backend.close()

        let reopened = try TokyoCabinetBackend(directory: killed)
        defer { reopened.close() }
        let copy = try reopened.openTable(named: "Song")
        #expect(try copy.recordCount == 300, "the transaction is rolled back, header included")
        #expect(try (2..<302).allSatisfy { try fill(of: $0, in: copy) == 1 })
        #expect(try fill(of: 302, in: copy) == nil)
        #expect(!FileManager.default.fileExists(atPath: killed + "/Song.wal"), "the rollback finished and removed the log")
        // The file takes new records where it really ends.
        try copy.beginTransaction()
        for row in 302..<1_302 { try put(row, 3, into: copy) }
        try copy.commitTransaction()
        #expect(try copy.recordCount == 1_300)
        #expect(try (2..<302).allSatisfy { try fill(of: $0, in: copy) == 1 })
        #expect(try (302..<1_302).allSatisfy { try fill(of: $0, in: copy) == 3 })
    }

    @Test func theWholeLengthOfALogCountsOnlyWholeEntries() {
        func entry(_ size: Int, bigEndian: Bool) -> [UInt8] {
            let length = [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)]
            return [UInt8](repeating: 0, count: 8) + (bigEndian ? length : length.reversed()) + [UInt8](repeating: 9, count: size)
        }
        for bigEndian in [true, false] {
            let whole = [UInt8](repeating: 0, count: 8) + entry(256, bigEndian: bigEndian) + entry(700, bigEndian: bigEndian)
            #expect(TokyoCabinetLog.wholeLength(of: whole) == whole.count)
            #expect(TokyoCabinetLog.wholeLength(of: whole + entry(5_000, bigEndian: bigEndian).prefix(4_000)) == whole.count)
            #expect(TokyoCabinetLog.wholeLength(of: whole + [1, 2, 3]) == whole.count)
            #expect(TokyoCabinetLog.wholeLength(of: Array(whole.prefix(200))) == 0, "not even the header's entry")
        }
        #expect(TokyoCabinetLog.wholeLength(of: [UInt8](repeating: 0, count: 8) + entry(255, bigEndian: true) + [0]) == nil,
                "a first entry that is not the header: not a log this reading knows")
    }
}
