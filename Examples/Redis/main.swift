// The Redis sample of docs/SERVICES.md, line for line, with a few lines between them so
// that it runs against a redis-server on 127.0.0.1:6379
// (`redis-server --port 6379 &`, then `swift run RedisExample`).
// Tests/CabinetTests/ReadmeExampleTests.swift checks that every README sample
// is kept in Examples/ or Tests/.
import Cabinet
import CabinetRedis

final class Song: StoredObject {
    @Stored var title = ""
    override func read(from buffer: inout DataBuffer) throws { title = try buffer.readString() }
    override func write(to buffer: inout DataBuffer) { buffer.writeString(title) }
}

final class Playlist: StoredObject {
    @Stored var title = ""
    @Stored var songs: [Song] = []
    override func read(from buffer: inout DataBuffer) throws {
        title = try buffer.readString()
        songs = try buffer.readReferences(to: Song.self)
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(title)
        buffer.writeReferences(songs)
    }
}

/// Saves `store`; if another process saved `note` first, takes their save
/// (docs/SERVICES.md, "Other processes' saves reach live objects") and applies `newTitle` again.
func save(_ store: ObjectStore, note: Song, newTitle: String) throws {
    do {
        try store.save()
    } catch let error as CabinetError where error.code == .saveConflict {
        try store.refresh(discardingConflicts: true)   // their save wins
        note.title = newTitle                           // apply yours again
        try store.save()
    }
}

do {
    let backend = try RedisBackend(host: "127.0.0.1", port: 6379, store: "music")  // or RedisBackend(url: "redis://127.0.0.1:6379/0", store: "music")
    let store = try ObjectStore(backend: backend)
    try store.register(Song.self, Playlist.self)
    // insert, save, fetch, enumerate, undo, upgrades, named buffers: as with Tokyo Cabinet
    let song = Song(); song.title = "Walking on Sunshine"
    let list = Playlist(); list.title = "Car"; list.songs = [song]
    store.insert(song); store.insert(list)
    try store.save()
    print("\(backend.path): \(try store.count(of: Song.self)) songs, \(try store.count(of: Playlist.self)) playlists")
    song.title = "Walking on Sunshine (live)"
    try save(store, note: song, newTitle: song.title)
    store.close()
} catch {
    print(error)
}
