@testable import Cabinet
import CabinetStorage
import Dispatch
import Foundation
import Synchronization
import Testing

private struct Refused: Error {}

/// A value the test's tasks and the pool's queue share, behind a pthread
/// mutex that ThreadSanitizer sees (see `PlainMutex`).
final class Shared<Value: Sendable>: Sendable {
    let value: Locked<Value>
    init(_ value: Value) { self.value = Locked(value) }
    var current: Value { value.withLock { $0 } }
}

/// A pool with `Song` and `Playlist`, on `kind`, or on a `FailingBackend` (Tokyo Cabinet) when `failing` is given.
private func openPool(_ kind: BackendKind, _ directory: TemporaryDirectory, failing: FailingBackend? = nil) throws -> StorePool {
    let classes: [StoredObject.Type] = [Song.self, Playlist.self]
    if let failing { return try StorePool(backend: failing, classes: classes) }
    switch kind {
    case .tokyoCabinet: return try StorePool(path: directory.path + "/store", classes: classes)
    case .memory: return try StorePool(backend: MemoryBackend(), classes: classes)
    case .redis: return try StorePool(backend: TestRedis.backend(), classes: classes)
    case .dictionary: return try StorePool(backend: DictionaryBackend(), classes: classes)
    }
}

private func titles(_ pool: StorePool) async throws -> Set<String> {
    try await pool.read { store in Set(try store.fetchAll(Song.self).map(\.title)) }
}

/// Runs `blocks` as one commit group: the first holds the writer queue until
/// every other has been called, so they all wait for it and run back to back.
/// Each block's result, by index.
func runGrouped<T: Sendable>(_ pool: StorePool, _ blocks: [@Sendable (ObjectStore) throws -> T]) async -> [Result<T, any Error>] {
    let others = blocks.count - 1
    let started = Shared(false)
    return await withTaskGroup(of: (Int, Result<T, any Error>).self) { group in
        let first = blocks[0]
        group.addTask {
            do {
                return (0, .success(try await pool.write { store in
                    started.value.withLock { $0 = true }
                    while pool.core.writersArriving < others { usleep(200) }
                    return try first(store)
                }))
            } catch {
                return (0, .failure(error))
            }
        }
        while !started.current { try? await Task.sleep(for: .milliseconds(1)) }
        for index in 1..<blocks.count {
            let block = blocks[index]
            group.addTask {
                do { return (index, .success(try await pool.write(block))) } catch { return (index, .failure(error)) }
            }
            // Called in order: tasks start in any order, and blocks run in the order they queued.
            // (A minute at most: a block refused before it queued would never count.)
            let deadline = ContinuousClock.now + .seconds(60)
            while pool.queuedWrites < index && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(1)) }
        }
        var results = [Result<T, any Error>?](repeating: nil, count: blocks.count)
        for await (index, result) in group { results[index] = result }
        return results.map { $0! }
    }
}

private func insertSong(_ title: String) -> @Sendable (ObjectStore) throws -> UInt32 {
    { store in
        let song = Song(); song.title = title
        store.insert(song)
        return song.rowID
    }
}

@Suite struct StorePoolGroupCommitTests {
    @Test(arguments: BackendKind.allCases)
    func manyConcurrentWritersAllLand(_ kind: BackendKind) async throws {
        let directory = try TemporaryDirectory()
        let pool = try openPool(kind, directory)
        let callers = 16, each = 25
        try await withThrowingTaskGroup(of: Void.self) { group in
            for caller in 0..<callers {
                group.addTask {
                    for index in 0..<each {
                        let row = try await pool.write(insertSong("\(caller)-\(index)"))
                        // Told only after the commit: a read now sees it.
                        let seen = try await pool.read { store in try store.fetch(Song.self, rowID: row)?.title }
                        #expect(seen == "\(caller)-\(index)")
                    }
                }
            }
            try await group.waitForAll()
        }
        let expected = Set((0..<callers).flatMap { caller in (0..<each).map { "\(caller)-\($0)" } })
        #expect(try await titles(pool) == expected)
        #expect(pool.core.group.commits <= callers * each)
        try await pool.close()
        if kind == .tokyoCabinet {
            let reopened = try openPool(kind, directory)
            #expect(try await titles(reopened) == expected)
            try await reopened.close()
        }
    }

    @Test(arguments: BackendKind.allCases)
    func aThrowingBlockInAGroupSavesNothingWhileTheOthersCommitTogether(_ kind: BackendKind) async throws {
        let directory = try TemporaryDirectory()
        let pool = try openPool(kind, directory)
        _ = try await pool.write(insertSong("before"))
        let commitsBefore = pool.core.group.commits
        let results = await runGrouped(pool, [
            insertSong("a"),
            { @Sendable store in
                // Sees the group's earlier block, as if it were saved.
                let seen = try store.fetchAll(Song.self).map(\.title)
                #expect(Set(seen) == ["before", "a"])
                let song = Song(); song.title = "b"; store.insert(song)
                return song.rowID
            },
            { @Sendable store in
                let song = Song(); song.title = "thrown"; store.insert(song)
                let list = Playlist(); list.title = "thrown"; list.songs = [song]; store.insert(list)
                try store.fetchAll(Song.self).first { $0.title == "a" }.map { $0.title = "changed by thrown" }
                throw Refused()
            },
            { @Sendable store in
                let seen = Set(try store.fetchAll(Song.self).map(\.title))
                #expect(seen == ["before", "a", "b"])
                let song = Song(); song.title = "c"; store.insert(song)
                let list = Playlist(); list.title = "list"; list.songs = [song]; store.insert(list)
                return song.rowID
            },
        ])
        #expect(pool.core.group.commits == commitsBefore + 1, "the group's blocks were committed in one save")
        #expect(throws: Refused.self) { try results[2].get() }
        let rows = try [0, 1, 3].map { try results[$0].get() }
        #expect(Set(rows).count == 3, "every committed insert has a row of its own")
        #expect(try await titles(pool) == ["before", "a", "b", "c"])
        let lists = try await pool.read { store in try store.fetchAll(Playlist.self).map { "\($0.title):\($0.songs.map(\.title))" } }
        #expect(lists == ["list:[\"c\"]"])
        // The next write carries on from the committed state.
        _ = try await pool.write(insertSong("after"))
        #expect(try await titles(pool) == ["before", "a", "b", "c", "after"])
        try await pool.close()
    }

    /// A group's commit that fails fails every block in it, nothing of them is
    /// written, and the next writes work: one table (a transaction) and two (the journal).
    @Test(arguments: ["one-file", "several-files"])
    func aFailedCommitFailsEveryBlockInTheGroupAndLosesNothingAfterIt(_ mode: String) async throws {
        let directory = try TemporaryDirectory()
        let backend = FailingBackend(try TokyoCabinetBackend(directory: directory.path + "/store"))
        let pool = try openPool(.tokyoCabinet, directory, failing: backend)
        // Touched only by the writer queue from here (the blocks set its failures).
        nonisolated(unsafe) let failing = backend
        _ = try await pool.write(insertSong("before"))
        let changes = pool.changes
        var blocks: [@Sendable (ObjectStore) throws -> UInt32] = (0..<4).map { index in
            { store in
                let song = Song(); song.title = "lost \(index)"; store.insert(song)
                if mode == "several-files" {
                    let list = Playlist(); list.title = "lost \(index)"; list.songs = [song]; store.insert(list)
                }
                return song.rowID
            }
        }
        let first = blocks[0]
        // Set on the writer queue, which the backend's tables run on.
        blocks[0] = { store in
            if mode == "one-file" { failing.failCommitOf = "Song" } else { failing.failAfterJournal = true }
            return try first(store)
        }
        let results = await runGrouped(pool, blocks)
        for result in results {
            #expect(throws: CabinetError.self) { try result.get() }
        }
        #expect(try await titles(pool) == ["before"])
        let next = try await pool.write(insertSong("after"))
        #expect(try await pool.read { store in try store.fetch(Song.self, rowID: next)?.title } == "after")
        #expect(try await titles(pool) == ["before", "after"])
        // Only the save after the failed group is announced.
        var iterator = changes.makeAsyncIterator()
        let change = await iterator.next()
        #expect(change?.changes(of: Song.self)?.inserted == [next])
        try await pool.close()
        let reopened = try openPool(.tokyoCabinet, directory)
        #expect(try await titles(reopened) == ["before", "after"])
        try await reopened.close()
    }

    /// A group whose commit is decided but not finished (its journal is whole, one
    /// file has its part, the other refused it twice): every block is told
    /// `saveNotFinished`, and the next write block, before it reads anything,
    /// finds every block of that group saved, in both files, so nothing it
    /// stages over them can undo part of that save.
    @Test func aGroupLeftInItsJournalIsFinishedBeforeTheNextWriteBlockReads() async throws {
        let directory = try TemporaryDirectory()
        let backend = FailingBackend(try TokyoCabinetBackend(directory: directory.path + "/store"))
        let pool = try openPool(.tokyoCabinet, directory, failing: backend)
        nonisolated(unsafe) let failing = backend
        _ = try await pool.write(insertSong("before"))
        var blocks: [@Sendable (ObjectStore) throws -> UInt32] = (0..<3).map { index in
            { store in
                let song = Song(); song.title = "decided \(index)"; store.insert(song)
                let list = Playlist(); list.title = "decided \(index)"; list.songs = [song]; store.insert(list)
                return song.rowID
            }
        }
        let first = blocks[0]
        blocks[0] = { store in
            // The journal's second file refuses its commit, and again when the commit tries to finish it at once.
            failing.failCommitOf = "Song"
            failing.commitFailures = 2
            return try first(store)
        }
        let results = await runGrouped(pool, blocks)
        for result in results {
            #expect(errorCode(of: { _ = try result.get() }) == .saveNotFinished)
        }
        let seen = try await pool.write { store in
            (Set(try store.fetchAll(Song.self).map(\.title)), Set(try store.fetchAll(Playlist.self).map(\.title)))
        }
        let decided: Set<String> = ["decided 0", "decided 1", "decided 2"]
        #expect(seen.0 == decided.union(["before"]))
        #expect(seen.1 == decided)
        try await pool.close()
        #expect(try StoreVerifier.verify(path: directory.path + "/store").isEmpty)
    }

    @Test(arguments: BackendKind.allCases)
    func changesDeliverEachBlockOfAGroupOnceInCommitOrder(_ kind: BackendKind) async throws {
        let directory = try TemporaryDirectory()
        let pool = try openPool(kind, directory)
        let changes = pool.changes
        let order = Shared<[Int]>([])
        let blocks: [@Sendable (ObjectStore) throws -> UInt32] = (0..<8).map { index in
            { store in
                order.value.withLock { $0.append(index) }
                if index == 5 { throw Refused() }
                return try insertSong("\(index)")(store)
            }
        }
        let results = await runGrouped(pool, blocks)
        let ranOrder = order.current
        #expect(ranOrder.first == 0 && ranOrder.count == 8)
        let expected = ranOrder.filter { $0 != 5 }.map { try! results[$0].get() }
        var received: [StorePool.Change] = []
        for await change in changes {
            received.append(change)
            if received.count == expected.count { break }
        }
        #expect(received.map { $0.changes(of: Song.self)?.inserted ?? [] } == expected.map { [$0] })
        #expect(received.map(\.sequence) == Array(1...UInt64(expected.count)))
        try await pool.close()
    }

    /// An upgrade or a compaction in a block writes the real tables: the group
    /// so far is committed first, and the blocks before it are told so.
    @Test func aCompactionInsideAGroupCommitsTheBlocksBeforeIt() async throws {
        let directory = try TemporaryDirectory()
        let pool = try openPool(.tokyoCabinet, directory)
        let results = await runGrouped(pool, [
            insertSong("a"),
            { @Sendable store in
                let song = Song(); song.title = "b"; store.insert(song)
                try store.save()
                try store.compact()
                let later = Song(); later.title = "c"; store.insert(later)
                return later.rowID
            },
            insertSong("d"),
        ])
        for result in results { _ = try result.get() }
        #expect(try await titles(pool) == ["a", "b", "c", "d"])
        try await pool.close()
    }
    /// A write block's context is closed by its caller once the commit is
    /// done, off the writer queue: by the time `write` returns, the block's
    /// objects are freed, whether the block saved or threw, and so is every
    /// object of a group's blocks, each closed on its own caller's thread.
    @Test(arguments: BackendKind.allCases)
    func aWriteBlocksObjectsAreFreedByTheTimeItsCallerIsTold(_ kind: BackendKind) async throws {
        let directory = try TemporaryDirectory()
        let pool = try openPool(kind, directory)
        let saved = WeakObjects()
        let row = try await pool.write { store in
            let song = Song(); song.title = "kept"
            let list = Playlist(); list.title = "mix"; list.songs = [song]
            store.insert(song); store.insert(list)
            saved.add(song); saved.add(list)
            return song.rowID
        }
        #expect(saved.alive == 0, "the saved block's objects are freed when write returns")
        let thrown = WeakObjects()
        await #expect(throws: Refused.self) {
            try await pool.write { store in
                let song = try #require(try store.fetch(Song.self, rowID: row))
                song.title = "changed, then thrown"
                thrown.add(song)
                throw Refused()
            }
        }
        #expect(thrown.alive == 0, "the thrown block's objects are freed when write throws")
        let grouped = WeakObjects()
        let results = await runGrouped(pool, (0..<6).map { index in
            { @Sendable store in
                let song = Song(); song.title = "grouped \(index)"; store.insert(song)
                grouped.add(song)
                return song.rowID
            }
        })
        for result in results { _ = try result.get() }
        #expect(grouped.alive == 0)
        #expect(try await titles(pool) == Set(["kept"] + (0..<6).map { "grouped \($0)" }))
        try await pool.close()
    }
}

/// Weak references to objects made inside blocks, to see them freed from outside.
private final class WeakObjects: Sendable {
    private struct Reference: @unchecked Sendable { weak var object: StoredObject? }
    private let references = Mutex<[Reference]>([])
    func add(_ object: StoredObject) { references.withLock { $0.append(Reference(object: object)) } }
    var alive: Int { references.withLock { $0.count(where: { $0.object != nil }) } }
}
