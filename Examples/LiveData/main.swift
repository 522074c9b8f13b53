// The live-data samples of docs/SERVICES.md and the API reference's "Live Data"
// article, line for line, with a few lines between them so that it runs
// (`make demo`): a pool's observations of a query, a range's rows with their
// changes, and one note, while write blocks change them; then a plain store's.
// Tests/CabinetTests/ReadmeExampleTests.swift checks that every sample is kept here.
import Cabinet
import Foundation

final class Song: StoredObject {
    @Stored var title = ""
    @Stored var artist = ""
    @Stored var seconds: UInt32 = 0
    override class var indexes: [StoredIndex] { [.value(\Song.artist), .value(\Song.seconds)] }
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

final class Note: StoredObject {
    @Stored var title = ""
    override func read(from buffer: inout DataBuffer) throws { title = try buffer.readString() }
    override func write(to buffer: inout DataBuffer) { buffer.writeString(title) }
}

struct SongRow: Sendable {
    let title: String
    let seconds: UInt32
}

@Sendable func song(_ title: String, _ artist: String, _ seconds: UInt32) -> Song {
    let song = Song(); song.title = title; song.artist = artist; song.seconds = seconds
    return song
}

let directory = FileManager.default.temporaryDirectory.path + "/cabinet-live-" + UUID().uuidString
defer { try? FileManager.default.removeItem(atPath: directory) }
let pool = try StorePool(path: directory + "/pool", classes: [Song.self, Note.self])
let id: UInt32 = try await pool.write { store in
    let note = Note(); note.title = "Groceries"
    store.insert(note)
    store.insert(song("Bohemian Rhapsody", "Queen", 355))
    return note.rowID
}

let watchers = [
    Task {
        let queen = pool.observe { store in
            try store.fetch(Song.self, where: \.artist, equals: "Queen").map { SongRow(title: $0.title, seconds: $0.seconds) }
        }
        print("Queen songs:")
        for try await rows in queen { print(rows.count) }
    },
    Task {
        let long = pool.observeResults(Song.self, where: \.seconds, in: 300...600) { song in SongRow(title: song.title, seconds: song.seconds) }
        print("Songs of 5 to 10 minutes (rows, deleted, inserted, modified):")
        for try await update in long {
            print(update.rows.count, update.deleted, update.inserted, update.modified)
        }
    },
    Task {
        print("The note's title:")
        for try await title in pool.observe(Note.self, rowID: id, { note in note.title }) { print(title ?? "deleted") }
    },
]
try await Task.sleep(for: .milliseconds(100))
try await pool.write { store in store.insert(song("Under Pressure", "Queen", 248)) }
try await Task.sleep(for: .milliseconds(100))
try await pool.write { store in store.insert(song("Shine On You Crazy Diamond", "Pink Floyd", 811)) }   // changes none of them
try await pool.write { store in try store.fetch(Note.self, rowID: id)?.title = "Groceries for Sunday" }
try await Task.sleep(for: .milliseconds(100))
try await pool.write { store in
    if let note = try store.fetch(Note.self, rowID: id) { store.delete(note) }
    store.insert(song("Innuendo", "Queen", 390))
}
try await Task.sleep(for: .milliseconds(100))
try await pool.close()   // ends every observation's loop
for watcher in watchers { try await watcher.value }

// A plain store: the handler runs on the store's thread, after its saves.
let store = try ObjectStore(path: directory + "/store")
try store.register(Song.self)
print("A plain store's Queen songs:")
let observer = try store.observe(Song.self, where: \.artist, equals: "Queen") { songs in print(songs.count) }
store.insert(song("Killer Queen", "Queen", 180))
try store.save()
observer.cancel()
store.close()
