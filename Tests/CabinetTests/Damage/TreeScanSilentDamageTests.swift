@testable import CabinetStorage
import Foundation
import Testing

/// A B+ tree page carries no checksum, so a damaged key can't be caught by its
/// bytes; its order gives it away. A key damaged out of order misleads a leaf's
/// binary search, and a scan that started past it, or stopped at it, would leave
/// keys out of its answer without an error. Such a scan throws instead, in
/// either direction.
@Suite struct TreeScanSilentDamageTests {
    /// The records of `[lower, upper)` as the store's index reads them, in `descending` order or not.
    private func scan(_ directory: String, from lower: [UInt8], below upper: [UInt8], descending: Bool) throws -> [[UInt8]] {
        var reading = TokyoCabinetBackend.Options()
        reading.readOnly = true
        let backend = try TokyoCabinetBackend(directory: directory, options: reading)
        defer { backend.close() }
        let table = try backend.openOrderedTable(named: "T.index")
        var found: [[UInt8]] = []
        try lower.withUnsafeBytes { lower in
            try upper.withUnsafeBytes { upper in
                try table.forEach(from: lower, to: upper, descending: descending) { key, _ in
                    found.append(Array(key))
                    return true
                }
            }
        }
        return found
    }

    @Test func aScanOverAKeyZeroedInItsLeafThrowsNotMissesRows() throws {
        let directory = try TemporaryDirectory()
        let keys = try writtenIndexTree(directory, count: 3_000)
        let original = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/T.index"))
        var random = SeededRandom(41)
        var damagedScans = 0
        for _ in 0..<12 {
            // One key's bytes zeroed where its leaf holds them: it now sorts first.
            let victim = keys[Int(random.next() % UInt64(keys.count))]
            guard let at = original.firstRange(of: Data(victim)) else { continue }
            var damaged = original
            damaged.replaceSubrange(at, with: Data(count: victim.count))
            let copy = try TemporaryDirectory()
            try damaged.write(to: URL(fileURLWithPath: copy.path + "/T.index"))
            // The victim's artist: an equality query's range, and the victim's own key alone.
            let prefix = Array(victim.prefix { $0 != 0 }) + [0]
            for (lower, upper) in [(prefix, Array(prefix.dropLast()) + [1]), (victim, victim + [0])] {
                for descending in [false, true] {
                    damagedScans += 1
                    #expect(throws: CabinetError.self, "a scan of \(lower)..<\(upper) must not answer without the victim") {
                        _ = try scan(copy.path, from: lower, below: upper, descending: descending)
                    }
                }
            }
        }
        #expect(damagedScans >= 24)
        // And the undamaged file answers every one of those ranges whole.
        let prefix = Array("artist5".utf8) + [0]
        let expected = keys.filter { $0.starts(with: prefix) }
        #expect(try scan(directory.path, from: prefix, below: Array("artist5".utf8) + [1], descending: false) == expected)
        #expect(try scan(directory.path, from: prefix, below: Array("artist5".utf8) + [1], descending: true) == expected.reversed())
    }
}
