@testable import Cabinet
import CabinetStorage
import Testing

/// Rules of the seam that its documentation states and every backend keeps:
/// a closed backend's services refusing to read or write; a batch's catalog
/// entries committed with it. And one of the built-in backends' tables
/// (``TransactionalTable``, not part of the seam): their transactions one at a
/// time, a second begin leaving the open one as it was.
@Suite struct SeamContractTests {
    /// The backends whose tables have transactions: the dictionary backend, written
    /// from the seam's documentation alone, commits batches without any.
    static let transactional = BackendKind.allCases.filter { $0 != .dictionary }

    @Test func theDictionaryBackendsTablesHaveNoTransactions() throws {
        let directory = try TemporaryDirectory()
        let backend = try BackendKind.dictionary.newBackend(in: directory)
        defer { backend.close() }
        #expect(!(try backend.openTable(named: "T") is any TransactionalTable))
    }

    @Test(arguments: transactional)
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

    @Test(arguments: BackendKind.allCases)
    func aClosedBackendsServicesThrowStoreClosed(_ kind: BackendKind) throws {
        let directory = try TemporaryDirectory()
        let backend = try kind.newBackend(in: directory)
        let services = backend.services
        try services.writeFormatMarker("checksummed")
        backend.close()
        // The memory backend is its own store and may keep serving (StorageBackend.close()).
        guard kind != .memory else { return }
        let calls: [(String, () throws -> Void)] = [
            ("writeJournal", { try services.writeJournal([1, 2, 3]) }),
            ("readJournal", { _ = try services.readJournal() }),
            ("removeJournal", { try services.removeJournal() }),
            ("readFormatMarker", { _ = try services.readFormatMarker() }),
            ("writeFormatMarker", { try services.writeFormatMarker("plain") }),
            ("readCatalog", { _ = try services.readCatalog() }),
            ("writeCatalog", { try services.writeCatalog(StoreCatalog()) }),
        ]
        for (name, call) in calls {
            #expect(errorCode(of: call) == .storeClosed, "\(kind): \(name)")
        }
        // Nothing was written after the close: the marker is the one written before it.
        let reopened = try kind.reopen(backend)
        defer { reopened.close() }
        #expect(try reopened.services.readFormatMarker() == "checksummed", "\(kind)")
        #expect(try reopened.services.readJournal() == nil, "\(kind)")
    }

    /// A batch's catalog additions join the catalog with its changes; one that
    /// gives a tag another table holds is refused whole, nothing of it written.
    @Test(arguments: BackendKind.allCases)
    func aBatchCatalogsItsTablesAndAClashingOneWritesNothing(_ kind: BackendKind) throws {
        let directory = try TemporaryDirectory()
        let backend = try kind.newBackend(in: directory)
        defer { backend.close() }
        var first = WriteBatch()
        first.set([1], forKey: [1, 0, 0, 0], inTable: "Song")
        first.addToCatalog(table: "Song", tag: 3)
        try backend.commit(first)
        var onlyCatalog = WriteBatch()
        onlyCatalog.addToCatalog(table: "NamedBuffers", tag: nil)
        try backend.commit(onlyCatalog)
        #expect(try backend.services.readCatalog()?.tables == ["Song": 3, "NamedBuffers": nil], "\(kind)")

        var clashing = WriteBatch()
        clashing.set([2], forKey: [1, 0, 0, 0], inTable: "Album")
        clashing.set([9], forKey: [1, 0, 0, 0], inTable: "Song")
        clashing.addToCatalog(table: "Album", tag: 3)
        #expect(errorCode(of: { try backend.commit(clashing) }) == .saveConflict, "\(kind)")
        #expect(try backend.services.readCatalog()?.tables == ["Song": 3, "NamedBuffers": nil], "\(kind)")
        #expect(try backend.openTable(named: "Song").withValue(forRow: 1) { Array($0) } == [1], "\(kind): nothing of the clashing batch")
        #expect(try !backend.hasTable(named: "Album") || backend.openTable(named: "Album").withValue(forRow: 1) { _ in true } == nil, "\(kind)")
        #expect(!backend.hasUnfinishedCommit, "\(kind)")
    }
}
