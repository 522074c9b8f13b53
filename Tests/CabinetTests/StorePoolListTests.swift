@testable import Cabinet
import Foundation
import Testing

/// Appends to one out-of-line `StoredList` from write blocks committed as one
/// group: each block rewrites the right-hand path of the tree the block before it
/// staged (and deletes the nodes that one wrote), so the committed tree must be
/// the last block's, with no node lost or orphaned.
@Suite struct StorePoolListTests {
    @Test(arguments: BackendKind.allCases)
    func appendsFromAGroupOfWriteBlocksAllLandInOrder(_ kind: BackendKind) async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/store"
        let classes: [StoredObject.Type] = [Song.self, Shelf.self]
        let memory = MemoryBackend()
        let open = { () throws -> StorePool in
            kind == .tokyoCabinet ? try StorePool(path: path, classes: classes) : try StorePool(backend: memory, classes: classes)
        }
        let pool = try open()
        let shelfRow: UInt32 = try await pool.write { store in
            let shelf = Shelf(); shelf.name = "big"
            shelf.songs = StoredList((0..<1_000).map { i in let song = Song(); song.title = "seed \(i)"; store.insert(song); return song })
            store.insert(shelf)
            return shelf.rowID
        }
        let writers = 8, each = 10
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    for index in 0..<each {
                        _ = try await pool.write { store in
                            guard let shelf = try store.fetch(Shelf.self, rowID: shelfRow) else { throw MissingShelf() }
                            let song = Song(); song.title = "\(writer)-\(index)"; store.insert(song)
                            shelf.songs.append(song)
                            return song.rowID
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(pool.core.group.commits < 1 + writers * each, "some appends were committed together")
        let read = { @Sendable (store: ObjectStore) throws -> [String] in
            guard let shelf = try store.fetch(Shelf.self, rowID: shelfRow) else { return [] }
            var songs = shelf.songs
            try songs.loadAll()
            return songs.map(\.title)
        }
        let titles = try await pool.read(read)
        #expect(titles.count == 1_000 + writers * each)
        #expect(Array(titles.prefix(1_000)) == (0..<1_000).map { "seed \($0)" })
        // Each writer's appends land in the order it made them.
        for writer in 0..<writers {
            let mine = titles.dropFirst(1_000).filter { $0.hasPrefix("\(writer)-") }
            #expect(mine == (0..<each).map { "\(writer)-\($0)" })
        }
        try await pool.close()
        if kind == .tokyoCabinet {
            #expect(try StoreVerifier.verify(path: path).isEmpty)
        } else {
            #expect(try StoreVerifier.verify(memory).isEmpty)
        }
        let reopened = try open()
        #expect(try await reopened.read(read) == titles)
        try await reopened.close()
    }
}

extension StorePoolListTests {
    /// Write blocks that append one after another take the big list's right-hand
    /// path from the nodes the block before read or wrote (`ListNodeCache`), not
    /// from their records, and the list saved is the same.
    @Test(arguments: BackendKind.allCases)
    func laterBlocksTakeTheListNodesEarlierBlocksReadOrWrote(_ kind: BackendKind) async throws {
        let fixture = try StoreFixture(kind)
        let pool = try fixture.pool(Song.self, Shelf.self)
        let shelfRow = try await pool.write(Self.bigShelf)
        let hitsBefore = pool.core.group.listNodes.hits
        for index in 0..<20 { _ = try await pool.write(Self.append("new \(index)", to: shelfRow)) }
        // Each append after the first takes at least the root's child and the last leaf from the cache.
        #expect(pool.core.group.listNodes.hits - hitsBefore >= 2 * 19)
        let expected = (0..<1_000).map { "seed \($0)" } + (0..<20).map { "new \($0)" }
        #expect(try await pool.read(Self.titles(shelfRow)) == expected)
        try await pool.close()
        let reopened = try fixture.pool(Song.self, Shelf.self)
        #expect(try await reopened.read(Self.titles(shelfRow)) == expected)
        try await reopened.close()
    }

    /// A group whose commit fails leaves no node of it in the cache: the next
    /// block reads the list as committed, and its append lands after the last saved one.
    @Test func aFailedCommitEmptiesTheCacheAndTheNextAppendReadsTheListAsCommitted() async throws {
        let directory = try TemporaryDirectory()
        let backend = FailingBackend(try TokyoCabinetBackend(directory: directory.path + "/store"))
        let pool = try StorePool(backend: backend, classes: [Song.self, Shelf.self])
        nonisolated(unsafe) let failing = backend   // set on the writer queue only
        let shelfRow = try await pool.write(Self.bigShelf)
        _ = try await pool.write(Self.append("kept", to: shelfRow))
        #expect(pool.core.group.listNodes.count > 0)
        let lost = Self.append("lost", to: shelfRow)
        await #expect(throws: CabinetError.self) {
            _ = try await pool.write { store in
                failing.failAfterJournal = true
                return try lost(store)
            }
        }
        #expect(pool.core.group.listNodes.count == 0)
        _ = try await pool.write(Self.append("after", to: shelfRow))
        #expect(try await pool.read(Self.titles(shelfRow)).suffix(2) == ["kept", "after"])
        try await pool.close()
        #expect(try StoreVerifier.verify(path: directory.path + "/store").isEmpty)
    }

    /// A shelf of 1,000 songs (an out-of-line list of two leaves); its row.
    @Sendable static func bigShelf(_ store: ObjectStore) -> UInt32 {
        let shelf = Shelf(); shelf.name = "big"
        shelf.songs = StoredList((0..<1_000).map { i in let song = Song(); song.title = "seed \(i)"; store.insert(song); return song })
        store.insert(shelf)
        return shelf.rowID
    }

    static func append(_ title: String, to shelfRow: UInt32) -> @Sendable (ObjectStore) throws -> UInt32 {
        { store in
            guard let shelf = try store.fetch(Shelf.self, rowID: shelfRow) else { throw MissingShelf() }
            let song = Song(); song.title = title; store.insert(song)
            shelf.songs.append(song)
            return song.rowID
        }
    }

    static func titles(_ shelfRow: UInt32) -> @Sendable (ObjectStore) throws -> [String] {
        { store in
            guard let shelf = try store.fetch(Shelf.self, rowID: shelfRow) else { return [] }
            var songs = shelf.songs
            try songs.loadAll()
            return songs.map(\.title)
        }
    }
}

private struct MissingShelf: Error {}
