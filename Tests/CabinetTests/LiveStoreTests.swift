import Cabinet
import Foundation
import Synchronization
import Testing
import TortureModels

/// Other processes on a live store: a writer process (`cabinet-test-writer`)
/// keeps the store and saves when told, while this process, and the `cabinet`
/// tool, read it. Each save moves 1 from Left to Right (they add up to 1,000)
/// and appends a Receipt whose serial counts the receipts.
@Suite struct LiveStoreTests {
    private let tool = cabinetToolPath

    /// Checks one read of the store: the balances add up, the receipts run 1…N
    /// whole, and the last one carries Left's balance. Returns N.
    @discardableResult
    private func checkWholeSave(_ reader: ObjectStore) throws -> Int {
        try reader.reading {
            let left = try #require(try reader.fetchAll(TortureLeft.self).first)
            let right = try #require(try reader.fetchAll(TortureRight.self).first)
            let count = try reader.count(of: TortureReceipt.self)
            guard left.balance + right.balance == 1_000 else {
                throw Mismatch("Left \(left.balance) + Right \(right.balance) ≠ 1000")
            }
            if count > 0 {
                let last = try #require(try reader.fetch(TortureReceipt.self, rowID: UInt32(count + 1)), "receipt \(count)")
                guard last.serial == UInt64(count), last.leftBalance == left.balance else {
                    throw Mismatch("\(count) receipts, the last is \(last.serial) with Left \(last.leftBalance), Left is \(left.balance)")
                }
            }
            guard try reader.fetch(TortureReceipt.self, rowID: UInt32(count + 2)) == nil else { throw Mismatch("a receipt past \(count)") }
            // The index file, read in the same read: the same save as the records.
            let indexed = try reader.count(TortureReceipt.self, where: \.leftBalance, equals: left.balance)
            let newest = try reader.fetch(TortureReceipt.self, where: \.serial, in: 0...UInt64.max, limit: 1, descending: true).first?.serial ?? 0
            guard newest == UInt64(count), count == 0 || indexed >= 1 else {
                throw Mismatch("the index's newest receipt is \(newest) and \(indexed) have Left's balance; the records have \(count)")
            }
            return count
        }
    }

    private struct Mismatch: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    private static func openReader(_ path: String) throws -> ObjectStore {
        let reader = try ObjectStore(path: path, readOnly: true)
        try reader.register(TortureLeft.self, TortureRight.self, TortureReceipt.self)
        return reader
    }

    @Test func aReaderSeesOnlyWholeSavesWhileTheWriterKeepsSaving() throws {
        let directory = try TemporaryDirectory()
        let writer = try LiveWriter(directory.path)
        _ = try writer.send("saves 3")
        let reader = try LiveStoreTests.openReader(directory.path)
        defer { reader.close() }
        writer.tell("loop")
        var counts = Set<Int>()
        var problems: [String] = []
        let deadline = Date().addingTimeInterval(1.5)
        while Date() < deadline && problems.count < 3 {
            do {
                counts.insert(try checkWholeSave(reader))
                // One scan is one read by itself: every receipt up to the last, none torn.
                let receipts = try reader.fetchAll(TortureReceipt.self).map(\.serial).sorted()
                if receipts != Array(1...UInt64(receipts.count)) { problems.append("receipts \(receipts.prefix(3))… are not 1…\(receipts.count)") }
            } catch {
                problems.append("\(error)")
            }
        }
        let looped = try writer.send("save")
        _ = writer.readLine()
        #expect(problems.isEmpty, "\(problems)")
        #expect(counts.count >= 3, "the reader saw the writer's saves as they came (\(counts.count) states; \(looped))")
        _ = try writer.send("quit")
    }

    @Test func aReaderSeesLaterSavesAlsoOnceTheirFilesAreRebuilt() throws {
        let directory = try TemporaryDirectory()
        let receipts = directory.path + "/Receipt"
        let writer = try LiveWriter(directory.path, buckets: 7)
        _ = try writer.send("saves 2")
        let reader = try LiveStoreTests.openReader(directory.path)
        defer { reader.close() }
        #expect(try checkWholeSave(reader) == 2)
        let left = try #require(try reader.fetchAll(TortureLeft.self).first)   // kept across the writer's saves
        #expect(left.balance == 998)

        // Records added to the same file: the reader's handle knew a shorter file.
        let inode = try inodeNumber(receipts)
        #expect(try writer.send("saves 3") == "saved 5")
        #expect(try inodeNumber(receipts) == inode, "no rebuild yet")
        #expect(try checkWholeSave(reader) == 5)
        #expect(try reader.fetch(TortureLeft.self, rowID: left.rowID) === left && left.balance == 995, "a kept object takes the last save")

        // 100 receipts overfill 7 buckets: the file is rebuilt and renamed over the old one.
        #expect(try writer.send("grow 100") == "saved 105")
        #expect(try inodeNumber(receipts) != inode, "the Receipt file was replaced")
        #expect(try checkWholeSave(reader) == 105)
        #expect(try reader.fetchAll(TortureReceipt.self).count == 105)

        let rebuilt = try inodeNumber(receipts)
        #expect(try writer.send("compact") == "compacted")
        #expect(try inodeNumber(receipts) != rebuilt)
        #expect(try checkWholeSave(reader) == 105)
        _ = try writer.send("quit")
    }

    @Test func theCabinetToolReadsAndBacksUpALiveStore() throws {
        let directory = try TemporaryDirectory()
        let backup = directory.path + "-backup"
        defer { try? FileManager.default.removeItem(atPath: backup) }
        let writer = try LiveWriter(directory.path)
        _ = try writer.send("saves 5")
        writer.tell("loop")
        let info = try run(tool, ["info", directory.path])
        #expect(info.status == 0 && info.output.contains("Receipt"), "\(info.output)")
        let verify = try run(tool, ["verify", directory.path])
        #expect(verify.status == 0 && verify.output.contains("no damage found"), "\(verify.output)")
        let copy = try run(tool, ["backup", directory.path, backup])
        #expect(copy.status == 0, "\(copy.output)")
        _ = try writer.send("save")
        _ = writer.readLine()
        _ = try writer.send("quit")

        #expect(try StoreVerifier.verify(path: backup).isEmpty)
        let restored = try LiveStoreTests.openReader(backup)
        defer { restored.close() }
        #expect(try checkWholeSave(restored) >= 5, "the backup holds a whole save")
    }

    @Test func aSecondWriterIsRefusedNamingTheWriter() throws {
        let directory = try TemporaryDirectory()
        let backup = directory.path + "-backup"
        defer { try? FileManager.default.removeItem(atPath: backup) }
        let writer = try LiveWriter(directory.path)
        _ = try writer.send("save")
        #expect(try run(tool, ["backup", directory.path, backup]).status == 0)
        #expect(throws: CabinetError.storeLocked(path: directory.path, pid: writer.pid)) { _ = try ObjectStore(path: directory.path) }
        for arguments in [["compact", directory.path], ["restore", backup, directory.path]] {
            let refused = try run(tool, arguments)
            #expect(refused.status == 1 && refused.output.contains("locked by process \(writer.pid)"), "\(arguments[0]): \(refused.output)")
        }
        _ = try writer.send("quit")
    }

    @Test func aReaderWaitsForTheWritersTransactionAndNeverRollsItBack() throws {
        let directory = try TemporaryDirectory()
        let log = directory.path + "/Left.wal"
        let writer = try LiveWriter(directory.path)
        _ = try writer.send("saves 2")
        writer.tell("pause")
        #expect(writer.readLine() == "paused")
        // Inside the transaction: Tokyo Cabinet's log holds it, and an open of the file now would roll it back.
        #expect(try fileSize(log) >= 264)

        let seen = Mutex<Int64?>(nil)
        let path = directory.path
        Thread {
            let balance = try? LiveStoreTests.openReader(path).fetchAll(TortureLeft.self).first?.balance
            seen.withLock { $0 = balance ?? -1 }
        }.start()
        usleep(300_000)
        #expect(seen.withLock { $0 } == nil, "the reader waits for the commit")
        #expect(try fileSize(log) >= 264, "the writer's transaction is still there")

        #expect(try writer.send("go") == "saved 2")
        for _ in 0..<500 where seen.withLock({ $0 }) == nil { usleep(10_000) }
        #expect(seen.withLock { $0 } == 997, "the reader sees the save it waited for")
        #expect(try fileSize(log) == 0, "the writer's log is still its own, emptied by its commit")
        #expect(try writer.send("save") == "saved 3")
        _ = try writer.send("quit")
        let store = try LiveStoreTests.openReader(directory.path)
        defer { store.close() }
        #expect(try checkWholeSave(store) == 3)
        #expect(try store.fetchAll(TortureLeft.self).first?.balance == 996)
    }

    @Test func aKilledWritersTransactionIsReportedAsBefore() throws {
        let directory = try TemporaryDirectory()
        let writer = try LiveWriter(directory.path)
        _ = try writer.send("saves 2")
        let reader = try LiveStoreTests.openReader(directory.path)
        #expect(try checkWholeSave(reader) == 2)
        writer.tell("pause")
        #expect(writer.readLine() == "paused")
        writer.kill()

        let pending: (CabinetError) -> Bool = { $0.code == .recoveryPending && ($0.reason ?? "").contains("Left.wal") }
        #expect(expectCabinetError({ _ = try reader.fetchAll(TortureLeft.self) }, where: pending) != nil, "a reader already open")
        #expect(expectCabinetError({ _ = try LiveStoreTests.openReader(directory.path) }, where: pending) != nil, "a reader opening")
        let info = try run(tool, ["info", directory.path])
        #expect(info.status == 0 && info.output.contains("transaction to roll back"), "\(info.output)")
        reader.close()

        let store = try ObjectStore(path: directory.path)     // rolls the transaction back
        try store.register(TortureLeft.self, TortureRight.self, TortureReceipt.self)
        #expect(try store.fetchAll(TortureLeft.self).first?.balance == 998)
        store.close()
    }
}

/// The writer process of the live-store tests (`Tests/Helpers/LiveWriter`): one
/// command per line in, one answer per command out.
final class LiveWriter {
    private let process = Process()
    private let input = Pipe(), output = Pipe()
    let pid: Int32

    init(_ path: String, buckets: Int? = nil) throws {
        process.executableURL = URL(fileURLWithPath: buildProductsDirectory + "/cabinet-test-writer")
        process.arguments = [path] + (buckets.map { ["\($0)"] } ?? [])
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        pid = process.processIdentifier
        let first = String(decoding: output.fileHandleForReading.availableLine(), as: UTF8.self)
        guard first == "ready \(pid)" else { throw CocoaError(.fileReadUnknown, userInfo: ["line": first]) }
    }

    /// Sends a command without waiting for its answer.
    func tell(_ command: String) {
        input.fileHandleForWriting.write(Data((command + "\n").utf8))
    }

    /// The next line the writer prints.
    func readLine() -> String {
        String(decoding: output.fileHandleForReading.availableLine(), as: UTF8.self)
    }

    /// Sends a command and returns its answer.
    func send(_ command: String) throws -> String {
        tell(command)
        let answer = readLine()
        if command == "quit" { process.waitUntilExit() }
        return answer
    }

    func kill() {
        _ = Foundation.kill(pid, SIGKILL)
        process.waitUntilExit()
    }

    deinit {
        if process.isRunning { kill() }
    }
}

func inodeNumber(_ path: String) throws -> UInt64 {
    var status = stat()
    guard lstat(path, &status) == 0 else { throw CocoaError(.fileReadNoSuchFile) }
    return UInt64(status.st_ino)
}

func fileSize(_ path: String) throws -> Int64 {
    var status = stat()
    guard lstat(path, &status) == 0 else { throw CocoaError(.fileReadNoSuchFile) }
    return Int64(status.st_size)
}
