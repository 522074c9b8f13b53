import Cabinet
import Foundation
import Testing
import TortureModels

/// Observations in a read-only pool of another process than the store's writer
/// (`cabinet-test-writer`): the writer announces each commit in
/// `.cabinet-commits`, which the pool watches (inotify), so values follow its
/// saves without a polling loop.
@Suite(.timeLimit(LivePoolFixture.timeLimit(minutes: 2))) struct LiveOtherProcessTests {
    private struct Balances: Sendable, Equatable {
        let sum: Int64
        let receipts: Int
        let newest: UInt64
    }

    @Test func aReadOnlyPoolSeesEachCommitOfTheWriterProcessWhole() async throws {
        let directory = try TemporaryDirectory()
        let writer = try LiveWriter(directory.path)
        _ = try writer.send("saves 2")
        let pool = try StorePool(path: directory.path, readOnly: true, classes: [TortureLeft.self, TortureRight.self, TortureReceipt.self])
        var values = pool.observe { store -> Balances in
            let left = try store.fetchAll(TortureLeft.self).first?.balance ?? 0
            let right = try store.fetchAll(TortureRight.self).first?.balance ?? 0
            let newest = try store.fetch(TortureReceipt.self, where: \.serial, in: 0...UInt64.max, limit: 1, descending: true).first?.serial ?? 0
            return Balances(sum: left + right, receipts: try store.count(of: TortureReceipt.self), newest: newest)
        }.makeAsyncIterator()
        #expect(try await values.next() == Balances(sum: 1_000, receipts: 2, newest: 2))
        for serial in 3...6 {
            _ = try writer.send("save")
            let started = ContinuousClock.now
            var value = try #require(try await values.next())
            // A value from before the announcement may still be on its way; the next is the save's.
            while value.receipts < serial { value = try #require(try await values.next()) }
            print("commit of another process seen after \(ContinuousClock.now - started)")
            #expect(value == Balances(sum: 1_000, receipts: serial, newest: UInt64(serial)), "whole saves, in order")
        }
        // A write block is refused; the pool closes while the writer goes on.
        await #expect(throws: CabinetError.self) { try await pool.write { store in store.insert(TortureRight()) } }
        try await pool.close()
        #expect(try await values.next() == nil)
        _ = try writer.send("quit")
    }

    @Test func theWritersCommitsAreAnnouncedInTheStoreDirectory() throws {
        let directory = try TemporaryDirectory()
        let writer = try LiveWriter(directory.path)
        _ = try writer.send("save")
        let first = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/.cabinet-commits"))
        _ = try writer.send("save")
        let second = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/.cabinet-commits"))
        #expect(first.prefix(8) == Data("CBNTCMTS".utf8))
        let number = { (data: Data) in data[8..<16].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
        #expect(number(second) == number(first) + 1)
        #expect(String(decoding: second, as: UTF8.self).contains("Receipt"), "names the tables the commit changed")
        _ = try writer.send("quit")
    }
}
