@testable import CabinetStorage
import Foundation
import Testing

/// Cabinet's own lookup in Tokyo Cabinet's map (``TokyoCabinetLookup``) against
/// Tokyo Cabinet's answers: every key it finds, it finds with Tokyo Cabinet's
/// value; every other key it leaves to Tokyo Cabinet; damaged files never make it
/// read out of bounds.
@Suite struct TokyoCabinetLookupTests {
    /// A table of random keys (deep bucket trees: few buckets), a quarter removed again.
    private func filled(_ directory: TemporaryDirectory, seed: UInt64) throws -> (TokyoCabinetBackend, TokyoCabinetTable, [[UInt8]: [UInt8]], [[UInt8]]) {
        var options = TokyoCabinetBackend.Options()
        options.bucketCount = 17
        let backend = try TokyoCabinetBackend(directory: directory.path, options: options)
        let table = try #require(try backend.openTable(named: "Keys") as? TokyoCabinetTable)
        var random = SeededRandom(seed)
        var kept: [[UInt8]: [UInt8]] = [:]
        var removed: [[UInt8]] = []
        func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) } }
        try table.transaction {
            for i in 0..<6_000 {
                let key = bytes(Int(random.next() % 41)) + withUnsafeBytes(of: UInt32(i)) { Array($0) }
                let value = bytes(Int(random.next() % 300))
                try key.withUnsafeBytes { k in try value.withUnsafeBytes { try table.setValue($0, forKey: k) } }
                kept[key] = value
            }
            for key in kept.keys.shuffled(using: &random).prefix(1_500) {
                _ = try key.withUnsafeBytes { try table.removeValue(forKey: $0) }
                kept[key] = nil
                removed.append(key)
            }
        }
        return (backend, table, kept, removed)
    }

    @Test(arguments: [UInt64(1), 2])
    func everyKeyItFindsHasTokyoCabinetsValueAndItLeavesTheRestToIt(_ seed: UInt64) throws {
        let directory = try TemporaryDirectory()
        let (backend, table, kept, removed) = try filled(directory, seed: seed)
        defer { backend.close() }
        let hdb = try #require(table.handle)
        guard let bigEndian = TokyoCabinetLookup.byteOrder(of: hdb) else {
            Issue.record("this machine's files are read here")
            return
        }
        var found = 0
        for (key, value) in kept {
            let outcome = key.withUnsafeBytes { TokyoCabinetLookup.find(hdb, key: $0, bigEndian: bigEndian) }
            if case .found(let bytes) = outcome {
                found += 1
                #expect(Array(bytes) == value)
            }
            #expect(try key.withUnsafeBytes { try table.withValue(forKey: $0) { Array($0) } } == value)
        }
        #expect(found == kept.count, "every record is found without Tokyo Cabinet")
        for key in removed + [[], [1, 2, 3]] {
            let outcome = key.withUnsafeBytes { TokyoCabinetLookup.find(hdb, key: $0, bigEndian: bigEndian) }
            guard case .unsettled = outcome else {
                Issue.record("a removed or absent key was found")
                continue
            }
            #expect(try key.withUnsafeBytes { try table.withValue(forKey: $0) { _ in true } } == nil)
        }
    }

    @Test func damagedFilesAreLeftToTokyoCabinetWithoutReadingOutOfBounds() throws {
        let directory = try TemporaryDirectory()
        let (backend, _, kept, _) = try filled(directory, seed: 3)
        backend.close()
        let original = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/Keys"))
        var random = SeededRandom(4)
        var opened = 0
        for round in 0..<40 {
            let copy = try TemporaryDirectory()
            var damaged = original
            for _ in 0..<(1 + round % 30) {
                // Past the header's first fields (damage there is Tokyo Cabinet's own open to refuse).
                let at = 64 + Int(random.next() % UInt64(damaged.count - 64))
                damaged[at] = UInt8(truncatingIfNeeded: random.next())
            }
            try damaged.write(to: URL(fileURLWithPath: copy.path + "/Keys"))
            var reading = TokyoCabinetBackend.Options()
            reading.readOnly = true
            guard let backend = try? TokyoCabinetBackend(directory: copy.path, options: reading),
                  let table = try? backend.openTable(named: "Keys") as? TokyoCabinetTable, let hdb = table.handle,
                  let bigEndian = TokyoCabinetLookup.byteOrder(of: hdb) else { continue }
            opened += 1
            for key in kept.keys {
                if case .found(let bytes) = key.withUnsafeBytes({ TokyoCabinetLookup.find(hdb, key: $0, bigEndian: bigEndian) }) {
                    _ = bytes.reduce(0, &+)   // every byte it hands out is readable
                }
            }
            backend.close()
        }
        #expect(opened > 0)
    }

    @Test(arguments: [false, true])
    func tablesReadThroughTheMapFromTheirOpenOnAndAfterAReopen(_ concurrent: Bool) throws {
        let directory = try TemporaryDirectory()
        var options = TokyoCabinetBackend.Options()
        options.concurrentReads = concurrent
        let backend = try TokyoCabinetBackend(directory: directory.path, options: options)
        defer { backend.close() }
        let table = try #require(try backend.openTable(named: "Keys") as? TokyoCabinetTable)
        #expect(table.readsThroughMap, "from the open on")
        try table.transaction { try [UInt8]([1]).withUnsafeBytes { k in try [UInt8]([2]).withUnsafeBytes { try table.setValue($0, forKey: k) } } }
        table.reopenAfterFailure()
        #expect(table.readsThroughMap, "after a reopen")
        #expect(try [UInt8]([1]).withUnsafeBytes { try table.withValue(forKey: $0) { Array($0) } } == [2])
    }
}
