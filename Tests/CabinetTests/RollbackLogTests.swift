@testable import CabinetStorage
import Foundation
import Testing

/// After a transaction is rolled back (a failed save), the writer still has the
/// file open: its header must say so again (Tokyo Cabinet's rollback writes back
/// the logged header, whose "open" flag it had cleared), so that a kill in the
/// later close never leads the next open to load a half-saved free-block pool;
/// and the spent log must be empty, so that readers in other processes do not
/// take it for a killed writer's transaction and refuse the store.
@Suite struct RollbackLogTests {
    private func flags(of path: String) throws -> UInt8 {
        try #require(TokyoCabinetDirectory.headerFlags(of: path))
    }

    private func logSize(of path: String) throws -> Int {
        try FileManager.default.attributesOfItem(atPath: path + ".wal")[.size] as? Int ?? -1
    }

    @Test(arguments: [false, true])
    func aRolledBackTransactionLeavesTheFileMarkedOpenAndItsLogEmpty(ordered: Bool) throws {
        let directory = try TemporaryDirectory()
        let backend = try TokyoCabinetBackend(directory: directory.path)
        defer { backend.close() }
        let table: any StorageTable = ordered ? try backend.openOrderedTable(named: "T.index") : try backend.openTable(named: "T")
        for fill in [UInt8(1), 2] {
            try table.beginTransaction()
            for row in UInt32(2)..<200 {
                try RawTokyoCabinet.rowKey(row).withUnsafeBytes { key in
                    try [UInt8](repeating: fill, count: 100).withUnsafeBytes { try table.setValue($0, forKey: key) }
                }
            }
            if fill == 1 { try table.commitTransaction() } else { try table.abortTransaction() }
        }
        #expect(try flags(of: table.path) & TokyoCabinetDirectory.openFlag != 0, "the writer still has the file open")
        #expect(try logSize(of: table.path) == 0)
        // What a reader in another process decides before it opens the file.
        #expect(throws: Never.self) { try TokyoCabinetTable.refuseInterruptedTransaction(table.path) }
        #expect(try table.recordCount == 198)
        let value = try RawTokyoCabinet.rowKey(2).withUnsafeBytes { key in try table.withValue(forKey: key) { Array($0) } }
        #expect(value == [UInt8](repeating: 1, count: 100), "the committed value, not the rolled-back one")
    }
}
