@testable import CabinetStorage
import CTokyoCabinet
import Foundation
import Testing

/// Ascending scans that read a B+ tree's pages in the map (``TokyoCabinetTreeScan``)
/// against Tokyo Cabinet's cursor: the same records in the same order for any
/// range, in either direction, pages beyond the map read with pread, pages only
/// Tokyo Cabinet's cache holds never skipped, and damaged files never read out
/// of bounds nor handed to Tokyo Cabinet.
@Suite struct TokyoCabinetTreeScanTests {
    typealias Record = [UInt8]
    /// Set by `make asan` and `make tsan`.
    static let sanitized = ProcessInfo.processInfo.environment["CABINET_SANITIZED"] != nil

    /// A tree of random keys over several levels, a third of them removed again
    /// (emptied leaves cut out of the tree).
    private func filled(_ directory: TemporaryDirectory, options: TokyoCabinetBackend.Options = .init(),
                        count: Int = 40_000, seed: UInt64 = 1) throws -> (TokyoCabinetBackend, TokyoCabinetOrderedTable, [[UInt8]]) {
        let backend = try TokyoCabinetBackend(directory: directory.path, options: options)
        let table = try #require(try backend.openOrderedTable(named: "T.index") as? TokyoCabinetOrderedTable)
        var random = SeededRandom(seed)
        func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next() % 7) } }
        var keys: [[UInt8]] = []
        try table.beginTransaction()
        for i in 0..<count {
            let key = bytes(Int(random.next() % 12)) + withUnsafeBytes(of: UInt32(i).bigEndian) { Array($0) }
            let value = bytes(Int(random.next() % 24))
            try key.withUnsafeBytes { k in try value.withUnsafeBytes { try table.setValue($0, forKey: k) } }
            keys.append(key)
        }
        try table.commitTransaction()
        try table.beginTransaction()
        // Whole runs removed (emptied leaves are cut out), and scattered keys.
        let sorted = keys.sorted { $0.lexicographicallyPrecedes($1) }
        let removed = Array(sorted[count / 3..<count / 2]) + sorted.filter { _ in random.next() % 5 == 0 }
        for key in removed { _ = try key.withUnsafeBytes { try table.removeValue(forKey: $0) } }
        try table.commitTransaction()
        return (backend, table, keys)
    }

    private func cursorRecords(_ table: TokyoCabinetOrderedTable, _ lower: [UInt8]?, _ upper: [UInt8]?, limit: Int = .max) throws -> [Record] {
        var out: [Record] = []
        try withBounds(lower, upper) { lower, upper in
            try table.cursorForEach(try #require(table.handle), from: lower, to: upper, descending: false) { key, value in
                out.append(Array(key) + [0xFF] + Array(value))
                return out.count < limit
            }
        }
        return out
    }

    private func mapRecords(_ table: TokyoCabinetOrderedTable, _ lower: [UInt8]?, _ upper: [UInt8]?, limit: Int = .max) throws -> ([Record], TokyoCabinetTreeScan.Outcome) {
        let bdb = try #require(table.handle)
        guard let bigEndian = table.mapScanByteOrder(bdb) else {
            Issue.record("this machine's trees are scanned in the map")
            return ([], .unsettled)
        }
        var out: [Record] = []
        var delivered: [UInt8]?
        let outcome = try withBounds(lower, upper) { lower, upper in
            try TokyoCabinetTreeScan.forEach(bdb, bigEndian: bigEndian, path: table.path, from: lower, to: upper, nodes: TokyoCabinetTreeNodes(),
                                         generation: 0, delivered: &delivered, isCurrent: { true }) { key, value in
                out.append(Array(key) + [0xFF] + Array(value))
                return out.count < limit
            }
        }
        return (out, outcome)
    }

    private func tableRecords(_ table: TokyoCabinetOrderedTable, _ lower: [UInt8]?, _ upper: [UInt8]?) throws -> [Record] {
        var out: [Record] = []
        try withBounds(lower, upper) { lower, upper in
            try table.forEach(from: lower, to: upper, descending: false) { key, value in
                out.append(Array(key) + [0xFF] + Array(value))
                return true
            }
        }
        return out
    }

    private func withBounds<R>(_ lower: [UInt8]?, _ upper: [UInt8]?, _ body: (UnsafeRawBufferPointer?, UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        switch (lower, upper) {
        case (nil, nil): return try body(nil, nil)
        case (let l?, nil): return try l.withUnsafeBytes { try body($0, nil) }
        case (nil, let u?): return try u.withUnsafeBytes { try body(nil, $0) }
        case (let l?, let u?): return try l.withUnsafeBytes { l in try u.withUnsafeBytes { try body(l, $0) } }
        }
    }

    @Test func everyRangeGivesTokyoCabinetsRecordsInItsOrder() throws {
        let directory = try TemporaryDirectory()
        let (backend, table, keys) = try filled(directory)
        defer { backend.close() }
        let bdb = try #require(table.handle)
        #expect(bdb.pointee.root > TokyoCabinetTreeScan.nodeIDBase, "a tree with inner nodes")
        var random = SeededRandom(9)
        let whole = try cursorRecords(table, nil, nil)
        let (mapWhole, outcome) = try mapRecords(table, nil, nil)
        #expect(outcome == .finished && mapWhole == whole && whole.count == Int(tcbdbrnum(bdb)))
        for round in 0..<300 {
            // Bounds that are keys, and bounds between keys (shorter, longer, past the end).
            func bound() -> [UInt8] {
                let key = keys[Int(random.next() % UInt64(keys.count))]
                switch random.next() % 3 {
                case 0: return key
                case 1: return Array(key.prefix(Int(random.next() % UInt64(key.count + 1))))
                default: return key + [UInt8(truncatingIfNeeded: random.next())]
                }
            }
            let lower = round % 10 == 0 ? nil : bound()
            let upper = round % 7 == 0 ? nil : bound()
            let limit = round % 3 == 0 ? Int(random.next() % 20) + 1 : .max
            let expected = try cursorRecords(table, lower, upper, limit: limit)
            let (found, outcome) = try mapRecords(table, lower, upper, limit: limit)
            #expect(outcome == .finished)
            #expect(found == expected, "range \(String(describing: lower))..<\(String(describing: upper)), limit \(limit)")
        }
        #expect(try tableRecords(table, nil, nil) == whole)
    }

    @Test func pagesBeyondTheMapAreReadWithPread() throws {
        let directory = try TemporaryDirectory()
        var options = TokyoCabinetBackend.Options()
        options.mappedSize = 400_000   // the buckets and a few pages: most leaves lie beyond the map
        let (backend, table, keys) = try filled(directory, options: options)
        defer { backend.close() }
        let whole = try cursorRecords(table, nil, nil)
        let (mapped, outcome) = try mapRecords(table, nil, nil)
        #expect(outcome == .finished && mapped == whole, "read to the end without Tokyo Cabinet")
        #expect(try tableRecords(table, nil, nil) == whole)
        let middle = Array(whole[whole.count / 2].prefix { $0 != 0xFF })
        #expect(try tableRecords(table, middle, nil) == Array(whole[(whole.count / 2)...]))
        try expectTableMatchesCursor(table, keys, rounds: 50, seed: 4)
    }

    /// Descending ranges through the table (in the map) against Tokyo Cabinet's cursor.
    @Test func descendingRangesGiveTokyoCabinetsRecordsInItsOrder() throws {
        let directory = try TemporaryDirectory()
        let (backend, table, keys) = try filled(directory, count: 20_000, seed: 7)
        defer { backend.close() }
        let bdb = try #require(table.handle)
        #expect(table.mapScanByteOrder(bdb) != nil)
        var random = SeededRandom(8)
        func descending(_ lower: [UInt8]?, _ upper: [UInt8]?, _ read: (UnsafeRawBufferPointer?, UnsafeRawBufferPointer?, (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws -> Void) throws -> [Record] {
            var out: [Record] = []
            try withBounds(lower, upper) { lower, upper in
                try read(lower, upper) { key, value in
                    out.append(Array(key) + [0xFF] + Array(value))
                    return out.count < 30
                }
            }
            return out
        }
        for round in 0..<200 {
            let lower = round % 5 == 0 ? nil : keys[Int(random.next() % UInt64(keys.count))]
            let upper = round % 7 == 0 ? nil : keys[Int(random.next() % UInt64(keys.count))] + (round % 2 == 0 ? [] : [0xFF])
            let expected = try descending(lower, upper) { try table.cursorForEach(bdb, from: $0, to: $1, descending: true, $2) }
            let found = try descending(lower, upper) { try table.forEach(from: $0, to: $1, descending: true, $2) }
            #expect(found == expected, "range \(String(describing: lower))..<\(String(describing: upper))")
        }
    }

    /// Single keys through the table (in the map) against Tokyo Cabinet's lookup.
    @Test func lookupsGiveTokyoCabinetsValues() throws {
        let directory = try TemporaryDirectory()
        let (backend, table, keys) = try filled(directory, count: 20_000, seed: 9)
        defer { backend.close() }
        let bdb = try #require(table.handle)
        for key in keys.prefix(3_000) + [[], [9, 9, 9, 9, 9, 9, 9]] {
            let mine = try key.withUnsafeBytes { try table.withValue(forKey: $0) { Array($0) } }
            var size: Int32 = 0
            let theirs = key.withUnsafeBytes { bytes -> [UInt8]? in
                guard let value = tcbdbget(bdb, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(bytes.count), &size) else { return nil }
                defer { free(value) }
                return Array(UnsafeRawBufferPointer(start: value, count: Int(size)))
            }
            #expect(mine == theirs)
        }
    }

    @Test func aWriteOutsideATransactionIsSeenBeforeAnySync() throws {
        let directory = try TemporaryDirectory()
        let (backend, table, _) = try filled(directory, count: 20_000)
        defer { backend.close() }
        let bdb = try #require(table.handle)
        #expect(table.mapScanByteOrder(bdb) != nil)
        // Only Tokyo Cabinet's cache holds this record until a sync: the map must not be read.
        let key: [UInt8] = [3, 3, 3]
        try key.withUnsafeBytes { k in try ([7, 7] as [UInt8]).withUnsafeBytes { try table.setValue($0, forKey: k) } }
        #expect(table.mapScanByteOrder(bdb) == nil)
        #expect(try tableRecords(table, [3, 3], [3, 4]).contains(key + [0xFF, 7, 7]))
        try table.sync()
        #expect(table.mapScanByteOrder(bdb) != nil)
        #expect(try mapRecords(table, [3, 3], [3, 4]).0.contains(key + [0xFF, 7, 7]))
        try table.beginTransaction()
        #expect(table.mapScanByteOrder(bdb) == nil, "in a transaction, pages may be in the cache only")
        _ = try key.withUnsafeBytes { try table.removeValue(forKey: $0) }
        #expect(try !tableRecords(table, [3, 3], [3, 4]).contains(key + [0xFF, 7, 7]))
        try table.commitTransaction()
        #expect(try !mapRecords(table, [3, 3], [3, 4]).0.contains(key + [0xFF, 7, 7]))
    }

    @Test func aTableChangedDuringItsScanIsFinishedByTheCursor() throws {
        let directory = try TemporaryDirectory()
        let (backend, table, _) = try filled(directory, count: 5_000)
        defer { backend.close() }
        var seen: [[UInt8]] = []
        try table.forEach(from: nil, to: nil, descending: false) { key, _ in
            seen.append(Array(key))
            if seen.count == 100 {
                // Against the contract, but never read from a stale page.
                try ([9] as [UInt8]).withUnsafeBytes { k in try ([1] as [UInt8]).withUnsafeBytes { try table.setValue($0, forKey: k) } }
            }
            return true
        }
        let ascending = zip(seen, seen.dropFirst()).allSatisfy { $0.lexicographicallyPrecedes($1) }
        #expect(ascending, "each key once, in order")
        #expect(seen.contains([9]), "the record written during the scan, read by the cursor that took over")
    }

    /// Random ranges through the table itself (its own node cache), against the cursor.
    private func expectTableMatchesCursor(_ table: TokyoCabinetOrderedTable, _ keys: [[UInt8]], rounds: Int, seed: UInt64) throws {
        var random = SeededRandom(seed)
        for _ in 0..<rounds {
            let lower = keys[Int(random.next() % UInt64(keys.count))]
            let upper = keys[Int(random.next() % UInt64(keys.count))] + [0xFF]
            #expect(try tableRecords(table, lower, upper) == cursorRecords(table, lower, upper))
        }
    }

    @Test func theTablesNodeCacheFollowsADeepTreeThroughCompactionAndReplacement() throws {
        let directory = try TemporaryDirectory()
        let (backend, table, keys) = try filled(directory, count: 160_000, seed: 11)
        defer { backend.close() }
        let bdb = try #require(table.handle)
        #expect(bdb.pointee.nnum > 1, "inner nodes below the root: the walk takes several levels")
        try expectTableMatchesCursor(table, keys, rounds: 100, seed: 1)   // fills the node cache
        // The compaction writes a new file and maps it: nodes parsed in the old map must not be read.
        try table.compact()
        try expectTableMatchesCursor(table, keys, rounds: 100, seed: 2)
        // A new empty file renamed over the table, then other records: none of the old nodes applies.
        try table.removeAll()
        try table.beginTransaction()
        for key in keys.prefix(30_000) {
            try (key + [1]).withUnsafeBytes { k in try ([2] as [UInt8]).withUnsafeBytes { try table.setValue($0, forKey: k) } }
        }
        try table.commitTransaction()
        try expectTableMatchesCursor(table, keys.prefix(30_000).map { $0 + [1] }, rounds: 100, seed: 3)
    }

    @Test func removesOutsideATransactionAreSeenBeforeAnySync() throws {
        let directory = try TemporaryDirectory()
        let (backend, table, keys) = try filled(directory, count: 20_000)
        defer { backend.close() }
        let sorted = keys.sorted { $0.lexicographicallyPrecedes($1) }
        var removed = 0
        for key in sorted[2_000..<9_000] where try key.withUnsafeBytes({ try table.removeValue(forKey: $0) }) { removed += 1 }
        #expect(removed > 0)
        #expect(try tableRecords(table, nil, nil) == cursorRecords(table, nil, nil))
        // A remove that finds nothing changes nothing: the map is still read.
        try table.sync()
        _ = try ([9, 9, 9] as [UInt8]).withUnsafeBytes { try table.removeValue(forKey: $0) }
        #expect(table.mapScanByteOrder(try #require(table.handle)) != nil)
    }

    @Test func aReaderRefusesATreeFileCutShort() throws {
        let directory = try TemporaryDirectory()
        let (backend, _, _) = try filled(directory, count: 6_000)
        backend.close()
        let path = directory.path + "/T.index"
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(truncate(path, off_t(size * 6 / 10)) == 0)
        var reading = TokyoCabinetBackend.Options()
        reading.readOnly = true
        let opened = try TokyoCabinetBackend(directory: directory.path, options: reading)
        defer { opened.close() }
        // Mapped past its end, the first read would be a bus error: the open says what is wrong instead.
        #expect(throws: CabinetError.self) { _ = try opened.openOrderedTable(named: "T.index") }
    }

    @Test func damagedFilesAreReadInBoundsOrRefusedNeverHandedToTokyoCabinet() throws {
        let directory = try TemporaryDirectory()
        let (backend, _, keys) = try filled(directory, count: 6_000, seed: 5)
        backend.close()
        let original = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/T.index"))
        var random = SeededRandom(6)
        var scanned = 0, compared = 0
        for round in 0..<60 {
            let copy = try TemporaryDirectory()
            var damaged = original
            for _ in 0..<(1 + round % 20) {
                damaged[256 + Int(random.next() % UInt64(damaged.count - 256))] = UInt8(truncatingIfNeeded: random.next())
            }
            try damaged.write(to: URL(fileURLWithPath: copy.path + "/T.index"))
            var reading = TokyoCabinetBackend.Options()
            reading.readOnly = true
            guard let opened = try? TokyoCabinetBackend(directory: copy.path, options: reading),
                  let table = try? opened.openOrderedTable(named: "T.index") as? TokyoCabinetOrderedTable,
                  let bdb = table.handle, table.mapScanByteOrder(bdb) != nil else { continue }
            defer { opened.close() }
            for _ in 0..<20 {
                let lower = keys[Int(random.next() % UInt64(keys.count))]
                scanned += 1
                // Damage on the way is an error naming the file; Tokyo Cabinet never sees it.
                guard let (found, outcome) = try? mapRecords(table, lower, nil, limit: 50) else { continue }
                _ = found.reduce(0) { $0 &+ $1.count }   // every byte handed out was readable
                #expect(outcome == .finished)
                // What the map read whole (every page on the way sound) is what Tokyo Cabinet's cursor gives.
                if let expected = try? cursorRecords(table, lower, nil, limit: 50) {
                    #expect(found == expected)
                    compared += 1
                }
            }
        }
        #expect(scanned > 0 && (compared > 0 || Self.sanitized))
    }

    @Test func pageKeysAreTokyoCabinetsHexadecimalIDs() {
        func text(_ key: TokyoCabinetTreeScan.PageKey) -> String { key.withBytes { String(decoding: $0, as: UTF8.self) } }
        #expect(text(TokyoCabinetTreeScan.leafKey(1)) == "1")
        #expect(text(TokyoCabinetTreeScan.leafKey(0xABC)) == "abc")
        #expect(text(TokyoCabinetTreeScan.leafKey(UInt64.max)) == "ffffffffffffffff")
        #expect(text(TokyoCabinetTreeScan.nodeKey(TokyoCabinetTreeScan.nodeIDBase + 0x1F)) == "#1f")
        func number(_ bytes: [UInt8]) -> (UInt64?, Int) {
            var cursor = 0
            let value = bytes.withUnsafeBytes { TokyoCabinetTreeScan.number($0, &cursor) }
            return (value, cursor)
        }
        // 300 = 44 + 2 * 128: the low seven bits stored as -(44) - 1, then 2.
        #expect(number([UInt8(bitPattern: -45), 2]) == (300, 2))
        #expect(number([0]) == (0, 1))
        #expect(number([UInt8(bitPattern: -1)]).0 == nil, "a number cut off by the page's end")
        #expect(number([UInt8](repeating: 0xFF, count: 12) + [1]).0 == nil, "more than 64 bits")
    }
}
