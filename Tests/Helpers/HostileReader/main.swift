// The reading side of the corruption loop (CorruptionLoopTests): `make STORE`
// writes a small store of every kind of file (three classes, a `[T]`
// relationship, an out-of-line StoredList, value, references and full-text
// indexes, named buffers, checksummed); `read STORE...` opens each store given
// and reads it every way an app and `cabinet` do, printing one line per store:
// "STORE ok" or "STORE error CODE". Every read must end in a value or a thrown
// CabinetError: anything else (a trap, a signal, Tokyo Cabinet's exit on a
// failed allocation) ends this process, which the test reports with the store
// it was reading.
import Cabinet
import Foundation

final class Song: StoredObject {
    @Stored var title = ""
    @Stored var seconds: UInt32 = 0
    override class var indexes: [StoredIndex] { [.value(\Song.seconds), .fullText(\Song.title)] }
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
    @Stored var name = ""
    @Stored var songs: [Song] = []
    override class var indexes: [StoredIndex] { [.references(\Playlist.songs)] }
    override func read(from buffer: inout DataBuffer) throws {
        name = try buffer.readString()
        songs = try buffer.readReferences(to: Song.self)
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(name)
        buffer.writeReferences(songs)
    }
    override func dissolveAllRelationships() { songs = [] }
}

final class Notebook: StoredObject {
    @Stored var name = ""
    @Stored var notes = StoredList<Song>()
    override func read(from buffer: inout DataBuffer) throws {
        name = try buffer.readString()
        notes = try buffer.readList(of: Song.self)
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(name)
        buffer.writeList(notes)
    }
    override func dissolveAllRelationships() { notes = [] }
}

func make(_ path: String) throws {
    let store = try ObjectStore(path: path)
    defer { store.close() }
    try store.register(Song.self, Playlist.self, Notebook.self)
    let words = ["river", "stone", "night", "amber", "glass", "north"]
    let songs = (0..<300).map { i in
        let song = Song()
        song.title = "\(words[i % words.count]) \(words[(i / 6) % words.count]) \(i)"
        song.seconds = UInt32(i * 7 % 400)
        store.insert(song)
        return song
    }
    for p in 0..<5 {
        let list = Playlist()
        list.name = "list \(p)"
        list.songs = songs.enumerated().filter { $0.offset % (p + 2) == 0 }.map(\.element)
        store.insert(list)
    }
    let notebook = Notebook()
    notebook.name = "all"
    notebook.notes = StoredList(songs + songs)
    store.insert(notebook)
    var favorites = DataBuffer()
    favorites.writeReferences(songs.prefix(20))
    try store.setNamedBuffer(favorites, forName: "Favorites")
    var settings = DataBuffer()
    settings.writeString("volume 7")
    try store.setNamedBuffer(settings, forName: "Settings")
    try store.save()
}

/// Every read of the store at `path`; throws the first error.
func read(_ path: String) throws {
    let store = try ObjectStore(path: path)
    defer { store.close() }
    store.undoManager.isEnabled = false
    try store.register(Song.self, Playlist.self, Notebook.self)
    var checksum = 0
    for song in try store.fetchAll(Song.self) { checksum &+= song.title.utf8.count &+ Int(song.seconds) }
    try store.enumerate(Playlist.self) { list, _ in checksum &+= list.songs.count }
    for notebook in try store.fetchAll(Notebook.self) {
        for note in notebook.notes { checksum &+= note.title.utf8.count }
    }
    _ = try store.fetch(Song.self, where: \.seconds, in: 100...200)
    _ = try store.fetch(Song.self, where: \.seconds, in: 0...400, limit: 30, descending: true)
    checksum &+= try store.count(Song.self, where: \.seconds, equals: 7)
    _ = try store.search(Song.self, matching: "river")
    _ = try store.search(Song.self, matching: "amb")
    if let first = try store.fetch(Song.self, rowID: 2) {
        _ = try store.fetch(Playlist.self, where: \.songs, contains: first)
    }
    for rowID in UInt32(2)..<12 { _ = try store.fetch(Song.self, rowID: rowID) }
    if var favorites = try store.namedBuffer(forName: "Favorites") { checksum &+= try favorites.readReferences(to: Song.self).count }
    if var settings = try store.namedBuffer(forName: "Settings") { checksum &+= try settings.readString().utf8.count }
    _ = checksum
}

/// What `cabinet info` and `cabinet verify` read.
func maintenance(_ path: String) throws {
    _ = try StoreInfo(path: path)
    _ = try StoreVerifier.verify(path: path)
}

/// One line, written at once: the test must see which store a dying process was reading.
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    FileHandle.standardError.write(Data("usage: cabinet-test-hostile-reader make STORE | read STORE...\n".utf8))
    exit(2)
}
switch arguments[1] {
case "make":
    try make(arguments[2])
case "read":
    for path in arguments.dropFirst(2) {
        say("\(path) start")
        var outcome = "ok"
        for step in [maintenance, read] {
            do { try step(path) } catch let error as CabinetError {
                outcome = "error \(error.code)"
            } catch {
                outcome = "other \(error)"
            }
        }
        say("\(path) \(outcome)")
    }
default:
    exit(2)
}
