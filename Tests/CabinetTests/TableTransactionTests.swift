@testable import Cabinet
import CabinetStorage
import Testing

/// The seam's rule for a table's transactions, on every backend: one at a time,
/// and a second begin leaves the open one as it was.
@Suite struct TableTransactionTests {
    @Test(arguments: BackendKind.allCases)
    func aSecondBeginThrowsAndTheOpenTransactionStillCommits(_ kind: BackendKind) throws {
        let directory = try TemporaryDirectory()
        let backend = try kind.newBackend(in: directory)
        defer { backend.close() }
        for table in [try backend.openTable(named: "T"), try backend.openOrderedTable(named: "O")] {
            try table.beginTransaction()
            try [UInt8]([1, 2]).withUnsafeBytes { value in try table.setValue(value, forRow: 7) }
            let error = expectCabinetError({ try table.beginTransaction() }) {
                $0.code == .backendFailure && "\($0)".contains("already open")
            }
            #expect(error != nil, "\(kind): \(table.path)")
            try [UInt8]([3]).withUnsafeBytes { value in try table.setValue(value, forRow: 8) }
            try table.commitTransaction()
            #expect(try table.withValue(forRow: 7) { Array($0) } == [1, 2], "\(kind): the first change kept")
            #expect(try table.withValue(forRow: 8) { Array($0) } == [3], "\(kind): the change after the refused begin kept")
            // The next transaction begins as usual, and an abort drops its change.
            try table.beginTransaction()
            try [UInt8]([9]).withUnsafeBytes { value in try table.setValue(value, forRow: 9) }
            try table.abortTransaction()
            #expect(try table.withValue(forRow: 9) { Array($0) } == nil, "\(kind)")
        }
    }
}
