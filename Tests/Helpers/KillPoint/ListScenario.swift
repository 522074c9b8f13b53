// A save of big ordered relationships: an append to a list of 5,000 (a leaf,
// the inner nodes above it and the root rewritten, the old ones deleted), a list
// that shrinks back inline (its nodes deleted), a new out-of-line list and a
// deleted owner, with a song edited beside them: one journaled save.
import Cabinet

struct SaveList: Scenario {
    let name = "save-list"
    let classes: [StoredObject.Type] = [Song.self, Shelf.self]

    /// Shelves: "big" holds 5,000 references cycling through the 20 songs (ten
    /// leaves under an inner root: the same paths as 100,000, whose sweep is in
    /// docs/CRASHPOINTS.md, at a twentieth of the cost per point), "shrinks" 600,
    /// "deleted" 400 (all three out of line).
    func prepare(_ work: Work) throws {
        let store = try open(work.store)
        defer { store.close() }
        let songs = insertSongs(20, "song", into: store)
        for (title, count) in [("big", 5_000), ("shrinks", 600), ("deleted", 400)] {
            let shelf = Shelf()
            shelf.title = title
            shelf.songs = StoredList((0..<count).map { songs[$0 % songs.count] })
            store.insert(shelf)
        }
        try store.save()
    }

    func run(_ work: Work, _ steps: Steps) throws {
        let store = try open(work.store)
        defer { store.close() }
        let songs = try store.fetchAll(Song.self).sorted { $0.rowID < $1.rowID }
        let shelves = Dictionary(uniqueKeysWithValues: try store.fetchAll(Shelf.self).map { ($0.title, $0) })
        guard let big = shelves["big"], let shrinks = shelves["shrinks"], let deleted = shelves["deleted"] else {
            throw MissingShelf(found: Array(shelves.keys))
        }
        songs[0].title = "song 0 (edited)"
        let added = insertSongs(2, "new", into: store)
        big.songs.append(contentsOf: added)
        big.songs[2_500] = added[0]
        big.songs.remove(at: 10)
        shrinks.songs.removeLast(400)
        store.delete(deleted)
        let fresh = Shelf()
        fresh.title = "fresh"
        fresh.songs = StoredList((0..<300).map { songs[($0 * 7) % songs.count] })
        store.insert(fresh)
        steps.arm()
        try save(store, steps)
    }
}

/// The prepared store lacks a shelf: the setup, not the operation, is wrong.
struct MissingShelf: Error, CustomStringConvertible {
    let found: [String]
    var description: String { "the prepared store has the shelves \(found.sorted()), not big, shrinks and deleted" }
}
