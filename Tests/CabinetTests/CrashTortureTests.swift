import Cabinet
import Foundation
import Testing

// The classes of the torture child (Tests/Helpers/Torture), read back here.
final class TortureLeft: StoredObject {
    override class var storedName: String { "Left" }
    @Stored var balance: Int64 = 0
    override func read(from buffer: inout DataBuffer) throws { balance = try buffer.readInt64() }
    override func write(to buffer: inout DataBuffer) { buffer.writeInt64(balance) }
}

final class TortureRight: StoredObject {
    override class var storedName: String { "Right" }
    @Stored var balance: Int64 = 0
    override func read(from buffer: inout DataBuffer) throws { balance = try buffer.readInt64() }
    override func write(to buffer: inout DataBuffer) { buffer.writeInt64(balance) }
}

final class TortureReceipt: StoredObject {
    override class var storedName: String { "Receipt" }
    @Stored var serial: UInt64 = 0
    @Stored var leftBalance: Int64 = 0
    @Stored var padding: [UInt8] = []
    override func read(from buffer: inout DataBuffer) throws {
        serial = try buffer.readUInt64()
        leftBalance = try buffer.readInt64()
        padding = try buffer.readBytes()
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeUInt64(serial)
        buffer.writeInt64(leftBalance)
        buffer.writeBytes(padding)
    }
}

/// A child process saves across three files in a loop; we SIGKILL it at random
/// moments and check that every acknowledged save is there, whole, and that no
/// save was half applied. `make torture` runs 1,000 rounds (CABINET_TORTURE_ROUNDS).
@Suite struct CrashTortureTests {
    @Test func savesKilledAtRandomMomentsAreWholeOrAbsent() throws {
        let rounds = Int(ProcessInfo.processInfo.environment["CABINET_TORTURE_ROUNDS"] ?? "") ?? 100
        let directory = try TemporaryDirectory()
        let store = directory.path + "/store"
        var generator = SystemRandomNumberGenerator()
        var lastAcknowledged: UInt64 = 0
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
            if FileManager.default.fileExists(atPath: store + "/" + TokyoCabinetBackend.journalFileName) { killedWithJournal += 1 }
            try verify(store, acknowledged: lastAcknowledged, round: round)
        }
        #expect(lastAcknowledged > UInt64(rounds), "the child made progress")
        print("torture: \(rounds) kills, \(lastAcknowledged) acknowledged saves, \(killedWithJournal) kills left a journal to replay")
    }

    private func verify(_ path: String, acknowledged: UInt64, round: Int) throws {
        let store = try ObjectStore(path: path)      // replays a journal the kill left behind
        defer { store.close() }
        store.undoManager.isEnabled = false
        try store.register(TortureLeft.self, TortureRight.self, TortureReceipt.self)
        let lefts = try store.fetchAll(TortureLeft.self), rights = try store.fetchAll(TortureRight.self)
        let receipts = try store.fetchAll(TortureReceipt.self).sorted { $0.serial < $1.serial }
        if receipts.isEmpty {
            #expect(acknowledged == 0, "round \(round): acknowledged saves are missing")
            return
        }
        let left = try #require(lefts.first, "round \(round): receipts without a Left object")
        let right = try #require(rights.first, "round \(round): receipts without a Right object")
        #expect(lefts.count == 1 && rights.count == 1)
        #expect(left.balance + right.balance == 1_000, "round \(round): the invariant broke")
        #expect(receipts.map(\.serial) == Array(1...UInt64(receipts.count)), "round \(round): a save is missing in the middle")
        #expect(UInt64(receipts.count) >= acknowledged, "round \(round): an acknowledged save was lost")
        #expect(receipts.last?.leftBalance == left.balance, "round \(round): the balances and the last receipt disagree")
        for receipt in receipts where !receipt.padding.allSatisfy({ $0 == UInt8(truncatingIfNeeded: receipt.serial) }) {
            Issue.record("round \(round): receipt \(receipt.serial) is torn")
        }
    }
}
