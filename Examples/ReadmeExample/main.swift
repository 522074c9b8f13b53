// The README's first example, verbatim (Tests/CabinetTests/ReadmeExampleTests.swift checks it).
import Cabinet

final class Song: StoredObject {
    @Stored var title = ""
    @Stored var seconds: UInt32 = 0

    override func read(from buffer: inout DataBuffer) throws {
        title = try buffer.readString()
        seconds = try buffer.readUInt32()
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(title)
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

let store = try ObjectStore(path: "/tmp/music")   // a directory, created if missing
try store.register(Song.self, Playlist.self)       // any order, any number of calls
let song = Song(); song.title = "Walking on Sunshine"; song.seconds = 298
let list = Playlist(); list.title = "Car"; list.songs = [song]
store.insert(song); store.insert(list)
try store.save()

let lists = try store.fetchAll(Playlist.self)        // content loaded; their songs are faults
print(lists[0].songs[0].hasContent)                  // true here (song is live); loaded from disk, a fault: false until a @Stored property is read
try store.enumerate(Song.self) { song, stop in print(song.title) } // streams; `stop = true` ends it
let same = try store.fetch(Song.self, rowID: song.rowID)   // the identical live instance (===); nil if no row
print(same === song)                                 // true
list.title = "Road trip"                             // a @Stored setter marks the object updated
store.willUpdate(list)                               // the explicit form, for plain properties
store.delete(song)                                   // calls song.prepareForDelete() first
print(store.hasUnsavedChanges)                       // true
try store.save()
store.close()
