// The store the hostile-file campaign damages: three classes, a `[T]`
// relationship, an out-of-line `StoredList`, value, full-text and references
// indexes, and named buffers.
import Cabinet

final class Song: StoredObject {
    @Stored var title = ""
    @Stored var artist = ""
    @Stored var seconds: UInt32 = 0
    override class var indexes: [StoredIndex] {
        [.value(\Song.artist), .value(\Song.seconds), .fullText(\Song.title)]
    }
    override func read(from buffer: inout DataBuffer) throws {
        title = try buffer.readString()
        artist = try buffer.readString()
        seconds = try buffer.readUInt32()
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(title)
        buffer.writeString(artist)
        buffer.writeUInt32(seconds)
    }
}

final class Playlist: StoredObject {
    @Stored var title = ""
    @Stored var songs: [Song] = []
    override class var indexes: [StoredIndex] { [.references(\Playlist.songs)] }
    override func read(from buffer: inout DataBuffer) throws {
        title = try buffer.readString()
        songs = try buffer.readReferences(to: Song.self)
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(title)
        buffer.writeReferences(songs)
    }
    override func dissolveAllRelationships() { songs = [] }
}

/// Its songs are a list long enough to be kept out of line, in `StoredLists`.
final class Shelf: StoredObject {
    @Stored var name = ""
    @Stored var songs = StoredList<Song>()
    override func read(from buffer: inout DataBuffer) throws {
        name = try buffer.readString()
        songs = try buffer.readList(of: Song.self)
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(name)
        buffer.writeList(songs)
    }
    override func dissolveAllRelationships() { songs = StoredList() }
}

let classes: [StoredObject.Type] = [Song.self, Playlist.self, Shelf.self]
let bufferNames = ["Favorites", "Recent", "Empty"]

/// Writes the campaign's store at `path`: deterministic, so every run damages the same bytes.
func makeStore(at path: String, format: RecordFormat) throws {
    let store = try ObjectStore(path: path, options: .init(recordFormat: format))
    defer { store.close() }
    store.undoManager.isEnabled = false
    try store.register(classes)
    var songs: [Song] = []
    for i in 0..<600 {
        let song = Song()
        song.title = "word\(i % 37) song \(i) " + ["café", "Straße", "東京タワー", "walking on sunshine"][i % 4]
        song.artist = "artist\(i % 23)"
        song.seconds = UInt32((i * 7919) % 500)
        store.insert(song)
        songs.append(song)
    }
    for p in 0..<40 {
        let list = Playlist()
        list.title = "playlist \(p)"
        list.songs = (0..<(p % 9)).map { songs[(p * 13 + $0 * 31) % songs.count] }
        store.insert(list)
    }
    let shelf = Shelf()
    shelf.name = "everything"
    shelf.songs = StoredList(songs + songs.prefix(300))
    store.insert(shelf)
    let small = Shelf()
    small.name = "few"
    small.songs = StoredList(songs.prefix(5))
    store.insert(small)
    var favorites = DataBuffer()
    favorites.writeReferences(Array(songs.prefix(20)))
    try store.setNamedBuffer(favorites, forName: "Favorites")
    var recent = DataBuffer()
    recent.writeString("recently played")
    recent.writeUInt32s((0..<50).map { UInt32($0 * 3) })
    try store.setNamedBuffer(recent, forName: "Recent")
    try store.setNamedBuffer(DataBuffer(), forName: "Empty")
    try store.save()
}
