import CabinetModel

// An app of the @StoredModel macro: two classes without hand-written
// read/write, an index declared on a property, a property added in version 2.

@StoredModel
final class Song: StoredObject {
    var title = ""
    @Indexed var artist = ""
    @Indexed var seconds: UInt32 = 0
    @FullText var lyrics: String? = nil
    var album: Album? = nil                 // to-one reference
    @Transient var playCount = 0            // not stored
}

@StoredModel(version: 2)
final class Album: StoredObject {
    var name = ""
    var songs: [Song] = []                  // ordered to-many
    @Since(2) var year: UInt16 = 0          // records written by version 1 read it as 0
}

let store = try ObjectStore(backend: MemoryBackend(name: "music"))
try store.register(Song.self, Album.self)
let album = Album()
album.name = "Kind of Blue"
album.year = 1959
store.insert(album)
for (title, seconds) in [("So What", 562), ("Blue in Green", 337)] {
    let song = Song()
    song.title = title
    song.artist = "Miles Davis"
    song.seconds = UInt32(seconds)
    song.album = album
    store.insert(song)
    album.songs.append(song)
}
try store.save()
let long = try store.fetch(Song.self, where: \.seconds, in: 400...1_000)
print("\(album.name) (\(album.year)): \(album.songs.count) songs; longer than 400 s: \(long.map(\.title))")
store.close()
