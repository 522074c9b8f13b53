// The queries sample of docs/GUIDE.md, line for line, with a few lines between them so
// that it runs (`make demo`): a small library of songs and playlists, its
// indexes built as it is saved, then each kind of query.
// Tests/CabinetTests/ReadmeExampleTests.swift checks that every README sample
// is kept in Examples/ or Tests/.
import Cabinet
import Foundation

final class Song: StoredObject {
    @Stored var title = ""
    @Stored var artist = ""
    @Stored var seconds: UInt32 = 0
    @Stored var added: Date? = nil

    override class var indexes: [StoredIndex] {
        [.value(\Song.artist), .value(\Song.seconds), .value(\Song.added), .fullText(\Song.title)]
    }
    // read(from:) and write(to:) as usual
    override func read(from buffer: inout DataBuffer) throws {
        title = try buffer.readString()
        artist = try buffer.readString()
        seconds = try buffer.readUInt32()
        added = try buffer.readDate()
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(title)
        buffer.writeString(artist)
        buffer.writeUInt32(seconds)
        buffer.writeDate(added)
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
}

let directory = NSTemporaryDirectory() + "cabinet-queries-\(getpid())"
defer { try? FileManager.default.removeItem(atPath: directory) }
let store = try ObjectStore(path: directory)
try store.register(Song.self, Playlist.self)
let now = Date()
let lastWeek = now.addingTimeInterval(-7 * 86_400)
let catalog: [(String, String, UInt32)] = [
    ("Walking on Sunshine", "Katrina and the Waves", 238), ("Don't Stop Me Now", "Queen", 209),
    ("Bohemian Rhapsody", "Queen", 354), ("Sunshine of Your Love", "Cream", 250),
    ("Here Comes the Sun", "The Beatles", 185), ("Innuendo", "Queen", 391), ("東京タワー", "Unknown", 300),
]
var songs: [Song] = []
for (offset, (title, artist, seconds)) in catalog.enumerated() {
    let song = Song()
    song.title = title; song.artist = artist; song.seconds = seconds
    song.added = now.addingTimeInterval(Double(-offset) * 2 * 86_400)
    store.insert(song)
    songs.append(song)
}
let car = Playlist()
car.title = "Car"; car.songs = [songs[0], songs[1], songs[3]]
store.insert(car)
try store.save()   // records and index entries, in one all-or-nothing save
let song = songs[1]

let queen = try store.fetch(Song.self, where: \.artist, equals: "Queen")                    // [Song]
let long  = try store.fetch(Song.self, where: \.seconds, in: 300...600, limit: 50)          // ascending by seconds
let recent = try store.fetch(Song.self, where: \.added, in: lastWeek...now, descending: true)
let hits  = try store.search(Song.self, matching: "walking sunshine")     // every word, any order, case- and accent-insensitive
let starts = try store.search(Song.self, matching: "sunsh*")              // prefix
let phrase = try store.search(Song.self, matching: "\"on sunshine\"")     // phrase
let n = try store.count(Song.self, where: \.artist, equals: "Queen")
let lists = try store.fetch(Playlist.self, where: \.songs, contains: song) // inverse of an ordered to-many

print("by Queen (\(n)):", queen.map(\.title))
print("300 to 600 seconds:", long.map { "\($0.title) (\($0.seconds) s)" })
print("added in the last week, newest first:", recent.map(\.title))
print("'walking sunshine':", hits.map(\.title), " 'sunsh*':", starts.map(\.title), " '\"on sunshine\"':", phrase.map(\.title))
print("'東京':", try store.search(Song.self, matching: "東京").map(\.title))
print("playlists with '\(song.title)':", lists.map(\.title))
store.close()
