// What a flushed save flushes besides its own writes, seen in the shim's log
// (DurabilityFlushTests): not kill-point cases, scenarios whose unkilled run's
// system calls are read.
import Cabinet
import Foundation

/// A default save through the journal (its header written state 1, then 0,
/// unflushed), then a flushed save of one class, which writes no journal: it
/// must flush the journal first, or a power loss could keep the state 1 and
/// replay the older save over it.
struct FlushAfterJournal: Scenario {
    let name = "flush-after-journal"
    let classes: [StoredObject.Type] = [Song.self, Playlist.self]
    func prepare(_ work: Work) throws {
        let store = try open(work.store)
        defer { store.close() }
        let songs = insertSongs(5, "song", into: store)
        let list = Playlist()
        list.title = "A"
        list.songs = songs
        store.insert(list)
        try store.save()
    }
    func run(_ work: Work, _ steps: Steps) throws {
        let store = try open(work.store)
        defer { store.close() }
        let songs = try store.fetchAll(Song.self).sorted { $0.rowID < $1.rowID }
        let list = try store.fetchAll(Playlist.self)[0]
        steps.arm()
        songs[0].title = "song 0 (journaled)"
        list.title = "A (journaled)"
        try save(store, steps)
        songs[1].title = "song 1 (flushed)"
        try save(store, steps, durability: .flushed)
    }
}

/// A flushed save that changes Playlist only, in a store an earlier process
/// saved without a flush (Song, the catalog, the format marker): it must
/// flush those first, though this open never wrote them.
struct FlushEarlierOpen: Scenario {
    let name = "flush-earlier-open"
    let classes: [StoredObject.Type] = [Song.self, Playlist.self]
    func prepare(_ work: Work) throws {
        let store = try open(work.store)
        defer { store.close() }
        insertSongs(5, "song", into: store)
        let list = Playlist()
        list.title = "A"
        store.insert(list)
        try store.save()
    }
    func run(_ work: Work, _ steps: Steps) throws {
        let store = try open(work.store)
        defer { store.close() }
        let list = try store.fetchAll(Playlist.self)[0]
        steps.arm()
        list.songs = try store.fetchAll(Song.self)
        try save(store, steps, durability: .flushed)
    }
}

/// A flushed save, then a default save that crosses the bucket-growth
/// threshold: its rebuild must flush the new file before renaming it over the
/// one the flushed save made durable.
struct GrowAfterFlushed: Scenario {
    let name = "grow-after-flushed"
    let classes: [StoredObject.Type] = [Song.self]
    /// save-grow's store: 7 buckets, 10 songs, which 30 inserts outgrow.
    private let grow = SaveGrow()
    var tuning: TokyoCabinetBackend.Options { grow.tuning }
    func prepare(_ work: Work) throws { try grow.prepare(work) }
    func run(_ work: Work, _ steps: Steps) throws {
        let store = try open(work.store)
        defer { store.close() }
        let songs = try store.fetchAll(Song.self).sorted { $0.rowID < $1.rowID }
        songs[0].title = "song 0 (flushed)"
        try store.save(durability: .flushed)
        insertSongs(30, "new", into: store)
        steps.arm()
        try save(store, steps)
    }
}
