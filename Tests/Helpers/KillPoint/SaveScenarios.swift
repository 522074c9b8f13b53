// The saves: one file, several files (journaled), one that grows the buckets,
// the first save of a new store, and the first save after a class is added.
import Cabinet
import Foundation

/// Inserts `count` songs titled `prefix 0`, `prefix 1`, ….
@discardableResult
func insertSongs(_ count: Int, _ prefix: String, into store: ObjectStore) -> [Song] {
    (0..<count).map { i in
        let song = Song()
        song.title = "\(prefix) \(i)"
        song.seconds = UInt32(100 + i)
        store.insert(song)
        return song
    }
}

/// A named buffer: a list of songs and a label.
func favorites(_ songs: [Song], _ label: String) -> DataBuffer {
    var buffer = DataBuffer()
    buffer.writeReferences(songs)
    buffer.writeString(label)
    return buffer
}

extension Scenario {
    /// The save of `store`'s changes as a step: memory must keep them if it fails.
    func save(_ store: ObjectStore, _ steps: Steps, durability: CommitDurability = .asOpened) throws {
        try steps.step("save", memory: { try describe(store, self) }, pending: { store.hasUnsavedChanges }) {
            try store.save(durability: durability)
        }
    }
}

/// One class file: updates, inserts and deletes in one save (no journal).
struct SaveOne: Scenario {
    let name = "save-one"
    let classes: [StoredObject.Type] = [Song.self]
    func prepare(_ work: Work) throws {
        let store = try open(work.store)
        defer { store.close() }
        insertSongs(20, "song", into: store)
        try store.save()
    }
    func run(_ work: Work, _ steps: Steps) throws {
        let store = try open(work.store)
        defer { store.close() }
        let songs = try store.fetchAll(Song.self).sorted { $0.rowID < $1.rowID }
        for song in songs[0..<5] { song.title += " (edited)" }
        for song in songs[5..<8] { store.delete(song) }
        insertSongs(5, "new", into: store)
        steps.arm()
        try save(store, steps)
    }
}

/// Two classes and a named buffer: a save through the journal.
struct SaveMulti: Scenario {
    let name = "save-multi"
    let classes: [StoredObject.Type] = [Song.self, Playlist.self]
    let bufferNames = ["Favorite"]
    func prepare(_ work: Work) throws {
        let store = try open(work.store)
        defer { store.close() }
        let songs = insertSongs(10, "song", into: store)
        for (title, range) in [("A", 0..<5), ("B", 5..<10)] {
            let list = Playlist()
            list.title = title
            list.songs = Array(songs[range])
            store.insert(list)
        }
        try store.setNamedBuffer(favorites([songs[0], songs[1]], "v1"), forName: "Favorite")
        try store.save()
    }
    func run(_ work: Work, _ steps: Steps) throws {
        let store = try open(work.store)
        defer { store.close() }
        let songs = try store.fetchAll(Song.self).sorted { $0.rowID < $1.rowID }
        let lists = try store.fetchAll(Playlist.self).sorted { $0.rowID < $1.rowID }
        songs[0].title = "song 0 (edited)"
        lists[1].songs.removeLast()
        store.delete(songs[9])
        let added = insertSongs(3, "new", into: store)
        lists[0].songs += added
        let list = Playlist()
        list.title = "C"
        list.songs = [songs[2], added[0]]
        store.insert(list)
        try store.setNamedBuffer(favorites([songs[2], added[1]], "v2"), forName: "Favorite")
        steps.arm()
        try save(store, steps)
    }
}

/// A save that crosses the bucket-growth threshold (records > 3 × buckets), so
/// the class file is rebuilt by Tokyo Cabinet's optimize during the save.
struct SaveGrow: Scenario {
    let name = "save-grow"
    let classes: [StoredObject.Type] = [Song.self]
    /// Files created with 7 buckets: 30 inserts cross the threshold (21 records).
    var tuning: TokyoCabinetBackend.Options {
        var tuning = TokyoCabinetBackend.Options()
        tuning.bucketCount = 7
        return tuning
    }
    func prepare(_ work: Work) throws {
        let store = try open(work.store)
        defer { store.close() }
        insertSongs(10, "song", into: store)
        try store.save()
    }
    func run(_ work: Work, _ steps: Steps) throws {
        let store = try open(work.store)
        defer { store.close() }
        let songs = try store.fetchAll(Song.self).sorted { $0.rowID < $1.rowID }
        songs[0].title = "song 0 (edited)"
        store.delete(songs[1])
        insertSongs(30, "new", into: store)
        steps.arm()
        try save(store, steps)
    }
}

/// A store that syncs every commit (`syncOnCommit`: each file, the journal and the
/// directory flushed): a journaled save of two classes and a named buffer that
/// also grows Song's buckets, so every fsync of the durable path is a point.
/// `save-flushed` is the same save asking for it alone (`save(durability:
/// .flushed)`) on a store opened without `syncOnCommit`.
struct SaveSynced: Scenario {
    /// The save asks to be flushed; the store does not sync on commit.
    var flushedSave = false
    var name: String { flushedSave ? "save-flushed" : "save-synced" }
    let classes: [StoredObject.Type] = [Song.self, Playlist.self]
    let bufferNames = ["Favorite"]
    var tuning: TokyoCabinetBackend.Options {
        var tuning = TokyoCabinetBackend.Options()
        tuning.bucketCount = 7
        tuning.syncOnCommit = !flushedSave
        return tuning
    }
    func prepare(_ work: Work) throws {
        let store = try open(work.store)
        defer { store.close() }
        let songs = insertSongs(10, "song", into: store)
        let list = Playlist()
        list.title = "A"
        list.songs = Array(songs[0..<5])
        store.insert(list)
        try store.setNamedBuffer(favorites([songs[0]], "v1"), forName: "Favorite")
        try store.save()
    }
    func run(_ work: Work, _ steps: Steps) throws {
        let store = try open(work.store)
        defer { store.close() }
        let songs = try store.fetchAll(Song.self).sorted { $0.rowID < $1.rowID }
        let list = try store.fetchAll(Playlist.self)[0]
        songs[0].title = "song 0 (edited)"
        let added = insertSongs(30, "new", into: store)
        list.title = "A (edited)"
        list.songs.append(added[0])
        try store.setNamedBuffer(favorites([added[1]], "v2"), forName: "Favorite")
        steps.arm()
        try save(store, steps, durability: flushedSave ? .flushed : .asOpened)
    }
}

/// The first save of a store whose directory does not exist yet. Before it:
/// no store, or one that opens with no objects.
struct SaveFirst: Scenario {
    let name = "save-first"
    let classes: [StoredObject.Type] = [Song.self, Playlist.self]
    let bufferNames = ["Favorite"]
    var emptyIsAbsent: Bool { true }
    func prepare(_ work: Work) throws {}
    func run(_ work: Work, _ steps: Steps) throws {
        steps.arm()
        var opened: ObjectStore?
        try steps.step("open") { opened = try ObjectStore(path: work.store, logger: childLogger) }
        guard let store = opened else { return }
        defer { store.close() }
        try steps.step("register") { try store.register(Song.self, Playlist.self) }
        let songs = insertSongs(5, "song", into: store)
        let list = Playlist()
        list.title = "first"
        list.songs = songs
        store.insert(list)
        try store.setNamedBuffer(favorites([songs[4]], "first"), forName: "Favorite")
        try save(store, steps)
    }
}

/// An app update adds a class: the store has Song only; the new app registers
/// Playlist too (creating its file) and saves both.
struct SaveNewClass: Scenario {
    let name = "save-new-class"
    let classes: [StoredObject.Type] = [Song.self, Playlist.self]
    func prepare(_ work: Work) throws {
        let store = try ObjectStore(path: work.store, logger: childLogger)
        defer { store.close() }
        try store.register(Song.self)
        insertSongs(10, "song", into: store)
        try store.save()
    }
    func run(_ work: Work, _ steps: Steps) throws {
        steps.arm()
        var opened: ObjectStore?
        try steps.step("open") { opened = try ObjectStore(path: work.store, logger: childLogger) }
        guard let store = opened else { return }
        defer { store.close() }
        store.undoManager.isEnabled = false
        try steps.step("register") { try store.register(Song.self, Playlist.self) }
        let songs = try store.fetchAll(Song.self).sorted { $0.rowID < $1.rowID }
        songs[0].title = "song 0 (edited)"
        let list = Playlist()
        list.title = "new in this release"
        list.songs = Array(songs[0..<4])
        store.insert(list)
        try save(store, steps)
    }
}
