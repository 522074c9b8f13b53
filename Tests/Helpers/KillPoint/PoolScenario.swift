// A grouped commit through a StorePool: several write blocks queued behind a
// first one, committed together in one save (through the journal: two class
// files and the named buffers), one block among them throwing.
import Cabinet
import Dispatch
import Foundation
import Synchronization

struct Refused: Error {}

/// Set once the first block runs: the others are called only then, so that they queue behind it.
private final class Started: Sendable {
    let flag = Mutex(false)
}

/// Runs `body` (async) to its end from synchronous code: the child's scenarios are synchronous.
func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let done = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var result: Result<T, any Error>?
    Task {
        do { result = .success(try await body()) } catch { result = .failure(error) }
        done.signal()
    }
    done.wait()
    return try result!.get()
}

struct PoolGroup: Scenario {
    let name = "pool-group"
    let classes: [StoredObject.Type] = [Song.self, Playlist.self]
    let bufferNames = ["Favorite"]

    func prepare(_ work: Work) throws {
        try SaveMulti().prepare(work)
    }

    /// The blocks of the group, each idempotent (a retry after a failed commit,
    /// or a commit its journal finished, ends in the same state), and in any
    /// order the same (the queue's order is the tasks'), block 3 throwing.
    private var blocks: [@Sendable (ObjectStore) throws -> Void] {
        [
            { store in
                let songs = try store.fetchAll(Song.self).sorted { $0.rowID < $1.rowID }
                songs[0].title = "song 0 (edited)"
            },
            { store in
                if let last = try store.fetchAll(Song.self).first(where: { $0.title == "song 9" }) { store.delete(last) }
            },
            { store in
                guard try !store.fetchAll(Song.self).contains(where: { $0.title == "new 0" }) else { return }
                let songs = try store.fetchAll(Song.self).sorted { $0.rowID < $1.rowID }
                let added = insertSongs(3, "new", into: store)
                let lists = try store.fetchAll(Playlist.self).sorted { $0.rowID < $1.rowID }
                lists[0].songs += added
                lists[1].songs.removeLast()
                let list = Playlist()
                list.title = "C"
                list.songs = [songs[2], added[0]]
                store.insert(list)
                try store.setNamedBuffer(favorites([songs[2], added[1]], "v2"), forName: "Favorite")
            },
            { store in
                // Rolled back alone: none of this is saved.
                insertSongs(2, "thrown", into: store)
                for list in try store.fetchAll(Playlist.self) { list.title = "thrown" }
                throw Refused()
            },
        ]
    }

    func run(_ work: Work, _ steps: Steps) throws {
        try Self.runGroup(of: blocks, classes: classes, step: name, work, steps)
    }

    /// Opens a pool on the scenario's store, then, armed, runs `blocks` as one
    /// group (``runGroup(_:_:)``) as step `step`, and closes the pool.
    static func runGroup(of blocks: [@Sendable (ObjectStore) throws -> Void], classes: [StoredObject.Type], step: String,
                         _ work: Work, _ steps: Steps) throws {
        let pool = try StorePool(path: work.store, classes: classes, logger: childLogger)
        steps.arm()
        try steps.step(step) {
            try blocking { try await runGroup(pool, blocks) }
        }
        // A journal the group could not remove is finished here, or at the next open.
        try? blocking { try await pool.close() }
    }

    /// The first block holds the writer queue until every other is queued behind
    /// it, so all of them make one group, the same at every run.
    static func runGroup(_ pool: StorePool, _ blocks: [@Sendable (ObjectStore) throws -> Void]) async throws {
        let others = blocks.count - 1
        let started = Started()
        try await withThrowingTaskGroup(of: Void.self) { group in
            let first = blocks[0]
            group.addTask {
                try await pool.write { store in
                    started.flag.withLock { $0 = true }
                    while pool.queuedWrites < others { usleep(200) }
                    try first(store)
                }
            }
            // Child tasks start in any order: the others only once the first holds the writer.
            while !started.flag.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(1)) }
            for block in blocks.dropFirst() {
                group.addTask {
                    do {
                        try await pool.write(block)
                    } catch is Refused {
                        // The block that throws: expected.
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}
