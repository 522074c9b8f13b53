// The README's first example with its classes written by hand, without @StoredModel: the
// same records as the README's (Model/Examples/ReadmeExample), the calls the macro writes.
// docs/GUIDE.md and the DocC article GettingStarted show it; ReadmeExampleTests checks both are here.
import Cabinet

final class Song: StoredObject {
    @Stored var title = ""
    @Stored var artist = ""
    @Stored var seconds: UInt32 = 0

    override class var indexes: [StoredIndex] {
        [.fullText(\Song.title), .value(\Song.artist), .value(\Song.seconds)]
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
    @Stored var songs: [Song] = []          // an ordered to-many relationship

    override func read(from buffer: inout DataBuffer) throws {
        title = try buffer.readString()
        songs = try buffer.readReferences(to: Song.self)
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(title)
        buffer.writeReferences(songs)
    }
}

let path = "/tmp/music"
var store = try ObjectStore(path: path)              // a directory, created if missing
try store.register(Song.self, Playlist.self)

let song = Song(); song.title = "Bohemian Rhapsody"; song.artist = "Queen"; song.seconds = 354
let list = Playlist(); list.title = "Car"; list.songs = [song]
store.insert(song); store.insert(list)
try store.save()                                     // all or nothing, across both files

let queen = try store.fetch(Song.self, where: \.artist, equals: "Queen")   // by an index
let long = try store.fetch(Song.self, where: \.seconds, in: 300...600)      // a range, in order
let found = try store.search(Song.self, matching: "bohemian")               // full text, any case
print(queen.count, long.count, found.count)

list.title = "Road trip"                             // a @Stored setter marks the object changed
try store.undoManager.undo()                         // and the store's undo puts it back
print(list.title)                                    // "Car"
try store.save()
store.close()

store = try ObjectStore(path: path)                  // open it again: all of it is there
try store.register(Song.self, Playlist.self)
let lists = try store.fetchAll(Playlist.self)
print(lists.count, lists.first?.songs.first?.title ?? "")   // the songs load when first read
store.close()
