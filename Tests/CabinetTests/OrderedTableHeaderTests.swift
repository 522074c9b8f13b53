@testable import CabinetStorage
import Foundation
import Testing

/// Tokyo Cabinet's B+ tree rewrites its meta data in the file's header (zeroes it,
/// then writes each field) before its transaction's log begins, and at a sync or
/// a close with no transaction at all. A process killed in between left a header
/// with zeros in it that nothing could roll back (the crash torture found it).
/// These tests tear the header at those moments and take the files as a kill
/// would leave them: copied, with the writer still in the middle of its call.
@Suite struct OrderedTableHeaderTests {
    static let entries = 2_000

    /// A store directory with an index-like table `T.index` of `entries` committed entries.
    private func makeTable(_ directory: TemporaryDirectory) throws -> (TokyoCabinetBackend, TokyoCabinetOrderedTable) {
        let backend = try TokyoCabinetBackend(directory: directory.path + "/store")
        let table = try #require(try backend.openOrderedTable(named: "T.index") as? TokyoCabinetOrderedTable)
        try table.beginTransaction()
        for i in 0..<OrderedTableHeaderTests.entries {
            let key = Array("key \(100_000 + i)".utf8), value = [UInt8](repeating: UInt8(i % 251), count: 40)
            try key.withUnsafeBytes { k in try value.withUnsafeBytes { try table.setValue($0, forKey: k) } }
        }
        try table.commitTransaction()
        return (backend, table)
    }

    /// Zeroes the tree's meta data in the header (bytes 128 to 191), as a kill
    /// right after `tcbdbdumpmeta` cleared it leaves them: through the page cache,
    /// which the writer's map shares.
    private func tearHeader(_ path: String) throws {
        let fd = open(path, O_WRONLY)
        #expect(fd >= 0)
        defer { _ = Glibc.close(fd) }
        let zeros = [UInt8](repeating: 0, count: 64)
        #expect(zeros.withUnsafeBytes { pwrite(fd, $0.baseAddress, 64, 128) } == 64)
    }

    /// What a SIGKILL at this instant leaves on disk: the store's files as the page cache holds them.
    private func snapshot(_ store: String, to copy: String) throws {
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: store) where !name.hasPrefix(".cabinet-lock") {
            try FileManager.default.copyItem(atPath: store + "/" + name, toPath: copy + "/" + name)
        }
    }

    /// Opens the copy writable (which rolls back what the log holds) and reads every entry.
    private func expectWhole(_ copy: String) throws {
        let backend = try TokyoCabinetBackend(directory: copy)
        defer { backend.close() }
        let table = try backend.openOrderedTable(named: "T.index")
        #expect(table.recordCount == OrderedTableHeaderTests.entries)
        var seen = 0
        try table.forEach { key, value in
            #expect(String(decoding: key, as: UTF8.self) == "key \(100_000 + seen)")
            #expect(value.count == 40 && value.allSatisfy { $0 == UInt8(seen % 251) })
            seen += 1
            return true
        }
        #expect(seen == OrderedTableHeaderTests.entries)
    }

    @Test func aHeaderTornAsATransactionBeginsIsRolledBack() throws {
        let directory = try TemporaryDirectory()
        let (backend, table) = try makeTable(directory)
        try table.beginTransaction(headerLogged: {
            try tearHeader(table.path)
            try snapshot(directory.path + "/store", to: directory.path + "/killed")
        })
        try table.abortTransaction()
        backend.close()
        #expect(FileManager.default.fileExists(atPath: directory.path + "/killed/T.index.wal"), "the header's log is in the copy")
        try expectWhole(directory.path + "/killed")
        try expectWhole(directory.path + "/store")
    }

    @Test func aHeaderTornInASyncOrACloseIsRolledBack() throws {
        let directory = try TemporaryDirectory()
        let (backend, table) = try makeTable(directory)
        let handle = try #require(table.handleForTesting)
        try TokyoCabinetOrderedTable.withHeaderLogged(handle) {
            try tearHeader(table.path)
            try snapshot(directory.path + "/store", to: directory.path + "/killed")
        }
        #expect(try FileManager.default.attributesOfItem(atPath: table.path + ".wal")[.size] as? Int == 0,
                "the log is emptied after the call, so readers see no interrupted transaction")
        backend.close()
        #expect(!FileManager.default.fileExists(atPath: table.path + ".wal"), "a clean close removes the log")
        try expectWhole(directory.path + "/killed")
        try expectWhole(directory.path + "/store")
    }

    /// A writer killed in its close after clearing the "open" flag leaves the log
    /// behind; the next writable open removes it, so a reader does not take it
    /// for an interrupted transaction and a later kill cannot roll it back.
    @Test func aSpentLogBesideACleanFileIsRemovedAtTheNextWritableOpen() throws {
        let directory = try TemporaryDirectory()
        let (backend, table) = try makeTable(directory)
        let path = table.path
        backend.close()
        let header = try #require(FileHandle(forReadingAtPath: path)).readData(ofLength: 256)
        try (Data(count: 8) + Data(count: 12) + header).write(to: URL(fileURLWithPath: path + ".wal"))
        let reader = try TokyoCabinetBackend(directory: directory.path + "/store", options: { var o = TokyoCabinetBackend.Options(); o.readOnly = true; return o }())
        #expect(try reader.openOrderedTable(named: "T.index").recordCount == OrderedTableHeaderTests.entries, "a clean file's log is not a transaction")
        reader.close()
        let writer = try TokyoCabinetBackend(directory: directory.path + "/store")
        _ = try writer.openOrderedTable(named: "T.index")
        #expect(!FileManager.default.fileExists(atPath: path + ".wal"))
        writer.close()
        try expectWhole(directory.path + "/store")
    }
}
