import Cabinet
import Foundation
import Testing
import TortureModels

/// A child process saves across three files in a loop; we SIGKILL it at random
/// moments and check that every acknowledged save is there, whole, and that no
/// save was half applied. `make torture` runs 1,000 rounds (CABINET_TORTURE_ROUNDS).
@Suite struct CrashTortureTests {
    /// On Tokyo Cabinet (a journal across four files) and on Redis (one MULTI/EXEC).
    @Test(arguments: [BackendKind.tokyoCabinet, .redis])
    func savesKilledAtRandomMomentsAreWholeOrAbsent(_ kind: BackendKind) throws {
        let rounds = Int(ProcessInfo.processInfo.environment["CABINET_TORTURE_ROUNDS"] ?? "") ?? 100
        let directory = try TemporaryDirectory()
        let store = kind == .redis ? TestRedis.url + "/" + TestRedis.newStoreName() : directory.path + "/store"
        var generator = SystemRandomNumberGenerator()
        var lastAcknowledged: UInt64 = 0
        var verified: (count: UInt64, lastRow: UInt32) = (0, 0)
        var killedWithJournal = 0
        for round in 0..<rounds {
            let child = Process()
            child.executableURL = URL(fileURLWithPath: buildProductsDirectory + "/cabinet-torture")
            child.arguments = [store, String(round + 1)]
            let output = Pipe()
            child.standardOutput = output
            try child.run()
            // Wait until it is saving, then kill it somewhere in the next 20 ms (a few dozen saves).
            let first = output.fileHandleForReading.availableLine()
            usleep(UInt32.random(in: 0...20_000, using: &generator))
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
            let printed = String(decoding: first, as: UTF8.self) + "\n"
                + String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            if let last = printed.split(separator: "\n").last(where: { $0.hasPrefix("ack ") }), let serial = UInt64(last.dropFirst(4)) {
                lastAcknowledged = max(lastAcknowledged, serial)
            }
            if (try? TokyoCabinetBackend.hasPendingJournal(inDirectory: store)) == true { killedWithJournal += 1 }
            verified = try verify(store, acknowledged: lastAcknowledged, from: verified, round: round)
        }
        // The last check reads every receipt again, in case a kill damaged an old one.
        _ = try verify(store, acknowledged: lastAcknowledged, from: (0, 0), round: rounds)
        #expect(lastAcknowledged > UInt64(rounds), "the child made progress")
        print("torture (\(kind)): \(rounds) kills, \(lastAcknowledged) acknowledged saves, \(killedWithJournal) kills left a journal to replay")
    }

    /// Checks the store after a kill; receipts up to `from` (their count, and
    /// the row of the last) were checked before. Receipts are inserted one per
    /// save, so in row order their serials are 1, 2, 3…: on Tokyo Cabinet receipt
    /// N has row N + 1; on Redis each run of the child takes its rows from
    /// ranges it reserved, after those of the runs before, with gaps between.
    /// - Returns: the number of receipts now checked, and the row of the last.
    private func verify(_ path: String, acknowledged: UInt64, from checked: (count: UInt64, lastRow: UInt32), round: Int) throws -> (count: UInt64, lastRow: UInt32) {
        let store = try openTortureStore(path)      // replays a journal the kill left behind
        defer { store.close() }
        store.undoManager.isEnabled = false
        try store.register(TortureLeft.self, TortureRight.self, TortureReceipt.self)
        let count = UInt64(try store.count(of: TortureReceipt.self))
        #expect(count >= acknowledged, "round \(round): an acknowledged save was lost")
        #expect(count >= checked.count, "round \(round): receipts that were there before are gone")
        guard count > 0 else { return (0, 0) }
        let lefts = try store.fetchAll(TortureLeft.self), rights = try store.fetchAll(TortureRight.self)
        let left = try #require(lefts.first, "round \(round): receipts without a Left object")
        let right = try #require(rights.first, "round \(round): receipts without a Right object")
        #expect(lefts.count == 1 && rights.count == 1)
        #expect(left.balance + right.balance == 1_000, "round \(round): the invariant broke")
        var serial = checked.count, lastRow = checked.lastRow
        try store.enumerate(TortureReceipt.self, startingAfter: checked.lastRow) { receipt, _ in
            serial += 1
            lastRow = receipt.rowID
            #expect(receipt.serial == serial, "round \(round): receipt \(serial) is missing (row \(receipt.rowID) holds \(receipt.serial))")
            if !receipt.padding.allSatisfy({ $0 == UInt8(truncatingIfNeeded: receipt.serial) }) {
                Issue.record("round \(round): receipt \(receipt.serial) is torn")
            }
            if receipt.serial == count {
                #expect(receipt.leftBalance == left.balance, "round \(round): the balances and the last receipt disagree")
            }
        }
        #expect(serial == count, "round \(round): \(count) receipts counted, \(serial) in row order")
        // The index file was saved with the records: it finds every receipt, the last by Left's balance.
        #expect(try store.count(TortureReceipt.self, where: \.serial, equals: count) == 1, "round \(round): the index lost receipt \(count)")
        #expect(try store.fetch(TortureReceipt.self, where: \.serial, in: 0...UInt64.max, limit: 1, descending: true).first?.serial == count)
        #expect(try store.fetch(TortureReceipt.self, where: \.leftBalance, equals: left.balance).contains { $0.serial == count })
        if round % 5 == 0 {
            let problems = try store.verifyIndexes()
            #expect(problems.isEmpty, "round \(round): \(problems.prefix(3))")
        }
        return (count, lastRow)
    }
}
