@testable import CabinetStorage
import Foundation
import Testing

/// Debian's Tokyo Cabinet calls `sched_yield` every 256th assert it passes;
/// Cabinet points that one import of that one library at a function that
/// returns at once (TokyoCabinetYields). These tests run on the library
/// `make deps` installs, Debian's, which imports it. One at a time: one of them
/// puts the slot back for a moment, which the others would see.
@Suite(.serialized) struct TokyoCabinetYieldsTests {
    @Test func openingAStorePointsTokyoCabinetsSchedYieldAtTheSkippingFunction() throws {
        let directory = try TemporaryDirectory()
        let backend = try TokyoCabinetBackend(directory: directory.path + "/store")
        _ = try backend.openTable(named: "Song")
        #expect(TokyoCabinetYields.skip() == .skipped)
        #expect(TokyoCabinetYields.importIsSkipped("sched_yield") == true)
    }

    @Test func tokyoCabinetsYieldsReachTheSkippingFunctionAndItsRecordsAreIntact() throws {
        let directory = try TemporaryDirectory()
        let backend = try TokyoCabinetBackend(directory: directory.path + "/store")
        let table = try backend.openTable(named: "Song")
        let before = TokyoCabinetYields.skippedYields
        // Thousands of asserts pass in these calls: some of them yield.
        try table.beginTransaction()
        for row in 2..<5_002 {
            try RawTokyoCabinet.rowKey(UInt32(row)).withUnsafeBytes { key in
                try [UInt8](repeating: UInt8(truncatingIfNeeded: row), count: 40).withUnsafeBytes { try table.setValue($0, forKey: key) }
            }
        }
        try table.commitTransaction()
        for row in 2..<5_002 {
            let fill = try RawTokyoCabinet.rowKey(UInt32(row)).withUnsafeBytes { key in
                try table.withValue(forKey: key) { value in value.count == 40 && value.allSatisfy { $0 == value.first } ? value.first : nil }
            }
            #expect(fill == UInt8(truncatingIfNeeded: row))
        }
        #expect(TokyoCabinetYields.skippedYields > before)
    }

    @Test func onlyThatImportIsRedirected() throws {
        let directory = try TemporaryDirectory()
        _ = try TokyoCabinetBackend(directory: directory.path + "/store").openTable(named: "Song")
        // Its other imports are as the loader bound them; a name it does not import has no slot.
        #expect(TokyoCabinetYields.importIsSkipped("malloc") == false)
        #expect(TokyoCabinetYields.importIsSkipped("sched_yiel") == nil)
        #expect(TokyoCabinetYields.importIsSkipped("no_such_import_of_tokyo_cabinet") == nil)
    }

    /// The review of the first version found that a lazy binding that raced the
    /// first skip() went unnoticed for the life of the process.
    @Test func aSlotPutBackByTheLoaderIsSkippedAgainAtTheNextOpen() throws {
        let directory = try TemporaryDirectory()
        _ = try TokyoCabinetBackend(directory: directory.path + "/a").openTable(named: "Song")
        #expect(TokyoCabinetYields.putBackForTesting())
        // Another open looks again (a process would otherwise keep the yields for good).
        _ = try TokyoCabinetBackend(directory: directory.path + "/b").openTable(named: "Song")
        #expect(TokyoCabinetYields.importIsSkipped("sched_yield") == true)
    }

    @Test func theEnvironmentVariableKeepsTheYields() {
        #expect(TokyoCabinetYields.keeps(environmentValue: "keep"))
        #expect(TokyoCabinetYields.keeps(environmentValue: "KEEP"))
        #expect(!TokyoCabinetYields.keeps(environmentValue: nil))
        #expect(!TokyoCabinetYields.keeps(environmentValue: ""))
        #expect(!TokyoCabinetYields.keeps(environmentValue: "skip"))
        guard case .kept(let reason) = TokyoCabinetYields.install(keeping: true) else {
            Issue.record("keeping did not keep the yields")
            return
        }
        #expect(reason.contains(TokyoCabinetYields.environmentVariable))
    }
}

/// The environment variable in a process of its own (the review of the first
/// version found it tested only as a string).
@Suite struct TokyoCabinetYieldsProcessTests {
    private func runHelper(keeping: Bool) throws -> String {
        let directory = try TemporaryDirectory()
        let child = Process()
        child.executableURL = URL(fileURLWithPath: buildProductsDirectory + "/cabinet-test-yields")
        child.arguments = [directory.path + "/store"]
        var environment = ProcessInfo.processInfo.environment
        environment[TokyoCabinetYields.environmentVariable] = keeping ? "keep" : nil
        child.environment = environment
        let output = Pipe()
        child.standardOutput = output
        try child.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        child.waitUntilExit()
        #expect(child.terminationStatus == 0)
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func aProcessSkipsThemUnlessTheEnvironmentSaysKeep() throws {
        #expect(try runHelper(keeping: false) == "skipped | slot skipped | 1000 records")
        #expect(try runHelper(keeping: true) == "kept: \(TokyoCabinetYields.environmentVariable)=keep | slot bound | 1000 records")
    }
}
