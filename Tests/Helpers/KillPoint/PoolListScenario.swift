// A StorePool group commit of big ordered relationships: the blocks of the group
// keep the lists they save in memory (PendingLists), and the group's commit
// writes each list once, in the journal with the records: appends to a list of
// 5,000 by two blocks, a deleted owner, a list copied from one a block before
// changed, and a block that throws.
import Cabinet

struct PoolList: Scenario {
    let name = "pool-list"
    let classes: [StoredObject.Type] = [Song.self, Shelf.self]
    let bufferNames = ["Favorite"]

    /// save-list's shelves, and a named buffer: a pool opens every table it may
    /// write up front, the named buffers' too, so the old state has that table.
    func prepare(_ work: Work) throws {
        try SaveList().prepare(work)
        let store = try open(work.store)
        defer { store.close() }
        let songs = try store.fetchAll(Song.self).sorted { $0.rowID < $1.rowID }
        try store.setNamedBuffer(favorites([songs[0]], "v1"), forName: "Favorite")
        try store.save()
    }

    /// Each block idempotent (a retry after a failed commit, or a commit its
    /// journal finished, ends in the same state) and, after the first, the same in
    /// any order; block 3 throws. Only the first and the last insert.
    private var blocks: [@Sendable (ObjectStore) throws -> Void] {
        [
            { store in
                guard try !store.fetchAll(Song.self).contains(where: { $0.title == "pool 0" }) else { return }
                let added = insertSongs(1, "pool", into: store)
                let shelves = try Self.shelves(store)
                shelves["big"]?.songs.append(added[0])
                shelves["shrinks"]?.songs.append(added[0])
            },
            { store in
                let songs = try store.fetchAll(Song.self).sorted { $0.rowID < $1.rowID }
                guard let big = try Self.shelves(store)["big"], big.songs.count == 5_001 else { return }
                big.songs.append(songs[3])
            },
            { store in
                if let deleted = try Self.shelves(store)["deleted"] { store.delete(deleted) }
            },
            { store in
                // Rolled back alone: none of this is saved.
                let added = insertSongs(1, "thrown", into: store)
                try Self.shelves(store)["shrinks"]?.songs.append(added[0])
                throw Refused()
            },
            { store in
                let shelves = try Self.shelves(store)
                guard shelves["copy"] == nil, let shrinks = shelves["shrinks"] else { return }
                let songs = try store.fetchAll(Song.self).sorted { $0.rowID < $1.rowID }
                let copy = Shelf()
                copy.title = "copy"
                copy.songs = shrinks.songs
                copy.songs.append(songs[1])
                store.insert(copy)
            },
        ]
    }

    private static func shelves(_ store: ObjectStore) throws -> [String: Shelf] {
        Dictionary(uniqueKeysWithValues: try store.fetchAll(Shelf.self).map { ($0.title, $0) })
    }

    func run(_ work: Work, _ steps: Steps) throws {
        try PoolGroup.runGroup(of: blocks, classes: classes, step: name, work, steps)
    }
}
