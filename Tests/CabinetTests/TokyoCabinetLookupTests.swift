@testable import CabinetStorage
import CTokyoCabinet
import Foundation
import Testing

/// Cabinet's own lookup in Tokyo Cabinet's map (``TokyoCabinetLookup``) against
/// Tokyo Cabinet's answers: every key it finds, it finds with Tokyo Cabinet's
/// value, every key it calls absent Tokyo Cabinet lacks too; damaged files never make it
/// read out of bounds, and what it calls damaged is never handed to Tokyo Cabinet.
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

    /// Row keys take an unrolled path of the bucket and hash byte (`bucketAndHash`):
    /// with Tokyo Cabinet's own numbers, every row is found where Tokyo Cabinet put it.
    @Test func everyFourByteRowKeyIsFoundWhereTokyoCabinetPutIt() throws {
        let directory = try TemporaryDirectory()
        var options = TokyoCabinetBackend.Options()
        options.bucketCount = 17
        let backend = try TokyoCabinetBackend(directory: directory.path, options: options)
        defer { backend.close() }
        let table = try #require(try backend.openTable(named: "Rows") as? TokyoCabinetTable)
        let rows = (0..<3_000).map { UInt32($0) &* 2_654_435_761 }
        try table.transaction {
            for row in rows { try withUnsafeBytes(of: row) { try table.setValue($0, forRow: row) } }
        }
        let hdb = try #require(table.handle)
        guard let bigEndian = TokyoCabinetLookup.byteOrder(of: hdb) else {
            Issue.record("this machine's files are read here")
            return
        }
        for row in rows {
            let outcome = withUnsafeBytes(of: row.littleEndian) { TokyoCabinetLookup.find(hdb, key: $0, bigEndian: bigEndian) }
            guard case .found(let bytes) = outcome else {
                Issue.record("row \(row) not found: \(outcome)")
                continue
            }
            #expect(bytes.loadUnaligned(as: UInt32.self) == row)
        }
        // The same numbers as the loop every other key length takes.
        for row in rows.prefix(200) {
            withUnsafeBytes(of: row.littleEndian) { key in
                var index: UInt64 = 19_780_211
                for byte in key { index = index &* 37 &+ UInt64(byte) }
                let (bucket, hash) = TokyoCabinetHashHeader.bucketAndHash(of: key, bucketCount: 17)
                #expect(bucket == index % 17 && hash == TokyoCabinetHashHeader.hashByte(of: key))
            }
        }
    }

    @Test(arguments: [UInt64(1), 2])
    func everyKeyItFindsHasTokyoCabinetsValueAndEveryKeyItCallsAbsentIsAbsent(_ seed: UInt64) throws {
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
            #expect(outcome == .absent, "a removed or absent key is settled as absent, as Tokyo Cabinet says")
            #expect(try key.withUnsafeBytes { try table.withValue(forKey: $0) { _ in true } } == nil)
            #expect(tchdbvsiz(hdb, key, Int32(key.count)) == -1 && tchdbecode(hdb) == TCENOREC)
        }
    }

    @Test func damagedFilesAreNeverReadOutOfBounds() throws {
        let directory = try TemporaryDirectory()
        let (backend, _, kept, _) = try filled(directory, seed: 3)
        backend.close()
        let opened = try forEachDamagedCopy(of: directory.path + "/Keys", copies: 40, changes: 30, seed: 4) { hdb, bigEndian in
            for key in kept.keys {
                switch key.withUnsafeBytes({ TokyoCabinetLookup.find(hdb, key: $0, bigEndian: bigEndian) }) {
                case .found(let bytes): _ = bytes.reduce(0, &+)   // every byte it hands out is readable
                case .absent:
                    // "No record" only where Tokyo Cabinet's own walk finds none either.
                    #expect(tchdbvsiz(hdb, key, Int32(key.count)) == -1)
                case .unsettled, .damaged: break
                }
            }
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

/// The batch walk that warms a batch of lookups (``TokyoCabinetLookup/prefetch(_:keys:bigEndian:rounds:)``)
/// and the batched row reads built on it.
@Suite struct TokyoCabinetPrefetchTests {
    @Test func theWalkReachesEveryRecordThereAndNoKeyThatIsNot() throws {
        let directory = try TemporaryDirectory()
        var options = TokyoCabinetBackend.Options()
        options.bucketCount = 97   // trees of about 40 records: deep walks
        let backend = try TokyoCabinetBackend(directory: directory.path, options: options)
        defer { backend.close() }
        let table = try #require(try backend.openTable(named: "Rows") as? TokyoCabinetTable)
        try table.transaction {
            for row in UInt32(1)...4_000 where row % 5 != 0 {
                let value = [UInt8](repeating: UInt8(truncatingIfNeeded: row), count: Int(row % 300))
                try value.withUnsafeBytes { try table.setValue($0, forRow: row) }
            }
        }
        let hdb = try #require(table.handle)
        let bigEndian = try #require(TokyoCabinetLookup.byteOrder(of: hdb) as Bool?)
        let present = (UInt32(1)...4_000).filter { $0 % 5 != 0 }
        let absent = (UInt32(1)...4_000).filter { $0 % 5 == 0 } + [0, 4_001, .max]
        #expect(TokyoCabinetLookup.prefetch(hdb, keys: TokyoCabinetLookup.RowKeys(rows: present), bigEndian: bigEndian, rounds: .max)
                == present.count, "every record followed to its value")
        #expect(TokyoCabinetLookup.prefetch(hdb, keys: TokyoCabinetLookup.RowKeys(rows: absent), bigEndian: bigEndian, rounds: .max) == 0)
        let byteKeys = present.map { withUnsafeBytes(of: $0.littleEndian, Array.init) }
        #expect(TokyoCabinetLookup.prefetch(hdb, keys: TokyoCabinetLookup.ByteKeys(keys: byteKeys), bigEndian: bigEndian, rounds: .max)
                == present.count)
        // Bounded: a round follows each key one step, so one round reaches no value (the first reads the buckets).
        #expect(TokyoCabinetLookup.prefetch(hdb, keys: TokyoCabinetLookup.RowKeys(rows: present), bigEndian: bigEndian, rounds: 1) == 0)

        // Read by rows, as by one key at a time, missing rows as nil, in the order asked.
        let asked = (present.prefix(300) + absent.prefix(50)).shuffled()
        var got: [Int: [UInt8]?] = [:]
        try table.withValues(forRows: asked) { index, value in got[index] = .some(value.map(Array.init)) }
        for (index, row) in asked.enumerated() {
            let one = try table.withValue(forRow: row) { Array($0) }
            #expect(got[index] == .some(one), "row \(row)")
        }
    }

    @Test func theWalkOverADamagedFileNeverReadsOutOfBounds() throws {
        let directory = try TemporaryDirectory()
        let backend = try TokyoCabinetBackend(directory: directory.path)
        let table = try #require(try backend.openTable(named: "Rows") as? TokyoCabinetTable)
        try table.transaction {
            for row in UInt32(1)...3_000 {
                try [UInt8](repeating: 7, count: Int(row % 90)).withUnsafeBytes { try table.setValue($0, forRow: row) }
            }
        }
        backend.close()
        let walked = try forEachDamagedCopy(of: directory.path + "/Rows", copies: 30, changes: 20, seed: 11) { hdb, bigEndian in
            let reached = TokyoCabinetLookup.prefetch(hdb, keys: TokyoCabinetLookup.RowKeys(rows: Array(1...3_100)), bigEndian: bigEndian)
            #expect(reached <= 3_000)
        }
        #expect(walked > 0)
    }
}

/// Opens `copies` copies of the hash file at `path`, each with up to `changes`
/// random bytes changed past the header's first fields (damage there is Tokyo
/// Cabinet's own open to refuse), read-only, and calls `body` with each that
/// opens and is read through the map; returns how many did.
func forEachDamagedCopy(of path: String, copies: Int, changes: Int, seed: UInt64,
                        _ body: (UnsafeMutablePointer<TCHDB>, Bool) throws -> Void) throws -> Int {
    let original = try Data(contentsOf: URL(fileURLWithPath: path))
    let name = URL(fileURLWithPath: path).lastPathComponent
    var random = SeededRandom(seed)
    var opened = 0
    for round in 0..<copies {
        let copy = try TemporaryDirectory()
        var damaged = original
        for _ in 0..<(1 + round % changes) {
            let at = 64 + Int(random.next() % UInt64(damaged.count - 64))
            damaged[at] = UInt8(truncatingIfNeeded: random.next())
        }
        try damaged.write(to: URL(fileURLWithPath: copy.path + "/" + name))
        var reading = TokyoCabinetBackend.Options()
        reading.readOnly = true
        guard let backend = try? TokyoCabinetBackend(directory: copy.path, options: reading),
              let table = try? backend.openTable(named: name) as? TokyoCabinetTable, let hdb = table.handle,
              let bigEndian = TokyoCabinetLookup.byteOrder(of: hdb) else { continue }
        opened += 1
        defer { backend.close() }
        try body(hdb, bigEndian)
    }
    return opened
}
