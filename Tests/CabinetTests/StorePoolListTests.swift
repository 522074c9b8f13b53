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
private struct MissingShelf: Error {}
