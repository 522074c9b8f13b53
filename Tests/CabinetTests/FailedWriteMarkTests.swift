@testable import CabinetStorage
import Foundation
import Testing

/// A writer whose log write failed rolls the file back and rebuilds it from its
/// records (Tokyo Cabinet may have changed a bucket it could not log). Killed
/// inside that recovery, the next writable open must finish it: Tokyo Cabinet's
/// close clears the header's "open" flag before it rolls back, so a kill there
/// leaves a file half rolled back whose header says no writer has it, and only
/// the failed-write flag (`HDBFFATAL`) tells. The kill-point harness finds such
/// states by killing real processes (docs/CRASHPOINTS.md); this test makes one
/// directly, from a copy of a directory taken mid-transaction.
@Suite struct FailedWriteMarkTests {
    private func put(_ table: any StorageTable, rows: Range<UInt32>, fill: UInt8) throws {
        for row in rows {
            try RawTokyoCabinet.rowKey(row).withUnsafeBytes { key in
                try [UInt8](repeating: fill, count: 100).withUnsafeBytes { try table.setValue($0, forKey: key) }
            }
        }
    }

    private func value(_ table: any StorageTable, row: UInt32) throws -> [UInt8]? {
        try RawTokyoCabinet.rowKey(row).withUnsafeBytes { key in try table.withValue(forKey: key) { Array($0) } }
    }

    /// Sets or clears bits of the header's flags byte (offset 33) of the file at `path`.
    private func setFlags(of path: String, to flags: UInt8) throws {
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(TokyoCabinetDirectory.flagsOffset))
        try handle.write(contentsOf: [flags])
    }

    @Test func aCloseKilledInsideItsRollbackAfterAFailedWriteIsRolledBackAndRebuiltAtTheNextOpen() throws {
        let directory = try TemporaryDirectory()
        let store = directory.path + "/store", copy = directory.path + "/copy"
        let backend = try TokyoCabinetBackend(directory: store)
        let table = try backend.openTable(named: "T")
        // 48 records committed, then a transaction that changes each and adds more: the
        // file holds its changes (written through the shared map), the log the old pages.
        for (rows, fill) in [(UInt32(2)..<50, UInt8(1)), (2..<80, 2)] {
            try table.beginTransaction()
            try put(table, rows: rows, fill: fill)
            if fill == 1 { try table.commitTransaction() }
        }
        try FileManager.default.copyItem(atPath: store, toPath: copy)
        try table.abortTransaction()
        backend.close()

        // As a close leaves the file just before it rolls back: the "open" flag
        // cleared, the failed-write flag set, the whole log beside it.
        let copied = copy + "/T"
        try setFlags(of: copied, to: TokyoCabinetDirectory.fatalFlag)
        #expect(try FileManager.default.attributesOfItem(atPath: copied + ".wal")[.size] as? Int ?? 0 > TokyoCabinetLog.headerEntrySize)
        // A reader must not read it half rolled back.
        #expect(throws: CabinetError.self) { try TokyoCabinetTable.refuseInterruptedTransaction(copied) }

        let reopened = try TokyoCabinetBackend(directory: copy)
        defer { reopened.close() }
        let rolledBack = try reopened.openTable(named: "T")
        #expect(try rolledBack.recordCount == 48, "the transaction's new records are gone")
        #expect(try value(rolledBack, row: 2) == [UInt8](repeating: 1, count: 100), "the committed value, not the failed transaction's")
        #expect(try value(rolledBack, row: 60) == nil)
        var seen = 0
        try rolledBack.forEach { _, value in
            seen += 1
            return value.allSatisfy { $0 == 1 }
        }
        #expect(seen == 48)
        // Rebuilt: the flag went with the old file, and no log is left to roll back.
        let flags = try #require(TokyoCabinetDirectory.headerFlags(of: copied))
        #expect(flags & TokyoCabinetDirectory.fatalFlag == 0)
        #expect(throws: Never.self) { try TokyoCabinetTable.refuseInterruptedTransaction(copied) }
    }
}
