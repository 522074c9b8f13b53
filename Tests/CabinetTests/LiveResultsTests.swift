@testable import Cabinet
import CabinetStorage
import Foundation
import Synchronization
import Testing

/// `observeResults` and its diffs: applied in order to the rows shown so far,
/// the updates give exactly the query's rows, over random inserts, updates,
/// deletes and moves.
@Suite(.timeLimit(LivePoolFixture.timeLimit(minutes: 3))) struct LiveResultsTests {
    /// Applies `update` to `shown` as a list UI does: deletions from the end, then insertions, then modifications.
    private static func apply<Row>(_ update: ResultsUpdate<Row>, to shown: inout [Row]) {
        for position in update.deleted.reversed() { shown.remove(at: position) }
        for position in update.inserted { shown.insert(update.rows[position], at: position) }
        for position in update.modified { shown[position] = update.rows[position] }
    }

    @Test func theDiffTurnsTheOldRowsIntoTheNewOnesOverRandomChanges() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let old = (0..<Int.random(in: 0...12, using: &generator)).map { _ in UInt32.random(in: 1...20, using: &generator) }
            let oldRows = Array(Set(old)).shuffled(using: &generator).map { RowIdentity(row: $0, content: Int.random(in: 0...1, using: &generator)) }
            var newRows = oldRows.filter { _ in Bool.random(using: &generator) }
            newRows = newRows.map { Bool.random(using: &generator) ? RowIdentity(row: $0.row, content: 5) : $0 }
            for row in UInt32(21)...UInt32(21 + Int.random(in: 0...3, using: &generator)) {
                newRows.insert(RowIdentity(row: row, content: 0), at: Int.random(in: 0...newRows.count, using: &generator))
            }
            if newRows.count > 1, Bool.random(using: &generator) { newRows.swapAt(0, newRows.count - 1) }
            let diff = ResultsDiff(from: oldRows, to: newRows)
            var shown = oldRows
            for position in diff.deleted.reversed() { shown.remove(at: position) }
            for position in diff.inserted { shown.insert(newRows[position], at: position) }
            for position in diff.modified { shown[position] = newRows[position] }
            #expect(shown == newRows, "\(oldRows) → \(newRows): \(diff)")
            // A kept row is modified exactly when its content changed.
            let kept = Set(newRows.indices).subtracting(diff.inserted)
            let changed = kept.filter { position in oldRows.first { $0.row == newRows[position].row }?.content != newRows[position].content }
            #expect(Set(diff.modified) == changed)
            #expect(oldRows.count - diff.deleted.count == newRows.count - diff.inserted.count, "as many kept on each side")
        }
    }

    @Test(arguments: BackendKind.allCases)
    func appliedInOrderTheUpdatesGiveTheQuerysRows(_ kind: BackendKind) async throws {
        let fixture = try LivePoolFixture(kind)
        defer { withExtendedLifetime(fixture) {} }
        let pool = try fixture.open()
        var rows = try await insertTracks(pool, (0..<20).map { ("t\($0)", "A", UInt32.random(in: 0...100)) })
        var updates = pool.observeResults(Track.self, where: \.seconds, in: 30...70) { TrackRow(title: $0.title, seconds: $0.seconds) }.makeAsyncIterator()
        var shown: [TrackRow] = []
        var generator = SystemRandomNumberGenerator()
        for step in 0..<60 {
            let changes = Int.random(in: 1...4, using: &generator)
            rows = try await pool.write { [rows] store in
                var rows = rows
                for _ in 0..<changes {
                    switch Int.random(in: 0..<4) {
                    case 0:
                        let track = Track("n\(step)", by: "B", seconds: UInt32.random(in: 0...100))
                        store.insert(track)
                        rows.append(track.rowID)
                    case 1 where !rows.isEmpty:
                        let row = rows.remove(at: Int.random(in: 0..<rows.count))
                        if let track = try store.fetch(Track.self, rowID: row) { store.delete(track) }
                    case 2 where !rows.isEmpty:
                        try store.fetch(Track.self, rowID: rows.randomElement()!)?.title = "u\(step)"    // content only
                    default:
                        if let row = rows.randomElement() { try store.fetch(Track.self, rowID: row)?.seconds = UInt32.random(in: 0...100) }   // moves
                    }
                }
                return rows
            }
            // Read until the update that shows what the store holds now (a slow reader may skip some).
            let expected = try await pool.read { store in
                try store.fetch(Track.self, where: \.seconds, in: 30...70).map { TrackRow(title: $0.title, seconds: $0.seconds) }
            }
            while shown != expected {
                let update = try #require(try await updates.next())
                Self.apply(update, to: &shown)
                #expect(shown == update.rows, "applied in order, the diff gives the update's rows")
            }
            #expect(shown == expected)
        }
        try await pool.close()
    }

    @Test(arguments: BackendKind.allCases)
    func closingThePoolWhileValuesAreDeliveredEndsEveryLoop(_ kind: BackendKind) async throws {
        let fixture = try LivePoolFixture(kind)
        defer { withExtendedLifetime(fixture) {} }
        let pool = try fixture.open()
        try await insertTracks(pool, [("a", "A", 40)])
        let started = StartedCount()
        let readers = (0..<8).map { _ in
            Task {
                var count = 0
                for try await _ in pool.observeResults(Track.self, where: \.seconds, in: 0...100, { $0.title }) {
                    if count == 0 { started.increment() }
                    count += 1
                    try await Task.sleep(for: .milliseconds(1))   // slower than the writer
                }
                return count
            }
        }
        while started.value < readers.count { try await Task.sleep(for: .milliseconds(5)) }
        let writer = Task {
            for i in 0..<200 { _ = try? await insertTracks(pool, [("w\(i)", "W", 50)]) }
        }
        try await Task.sleep(for: .milliseconds(50))
        try await pool.close()
        for reader in readers { #expect(try await reader.value >= 1) }
        await writer.value
        #expect(pool.core.hub.count == 0, "nothing left behind")
    }
}

/// How many observers got their first value.
private final class StartedCount: Sendable {
    private let count = Atomic<Int>(0)
    func increment() { count.add(1, ordering: .sequentiallyConsistent) }
    var value: Int { count.load(ordering: .sequentiallyConsistent) }
}
