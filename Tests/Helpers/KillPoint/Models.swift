// The classes the kill-point scenarios store. Each says how it prints in a dump
// (every field, references by row ID), so two dumps compare as text.
import Cabinet

/// What a dump prints of an object after its class name and row ID.
protocol Dumpable: StoredObject {
    var fields: String { get }
}

final class Song: StoredObject, Dumpable {
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
    var fields: String { "title=\(title.debugDescription) seconds=\(seconds)" }
}

final class Playlist: StoredObject, Dumpable {
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
    override func dissolveAllRelationships() { songs = [] }
    var fields: String { "title=\(title.debugDescription) songs=\(songs.map(\.rowID))" }
}

/// The first release of Person: a phone only.
final class PersonV1: StoredObject, Dumpable {
    override class var storedName: String { "Person" }
    @Stored var phone = ""
    override func read(from buffer: inout DataBuffer) throws { phone = try buffer.readString() }
    override func write(to buffer: inout DataBuffer) { buffer.writeString(phone) }
    var fields: String { "phone=\(phone.debugDescription)" }
}

/// The next release: version 2 adds a fax and reads both layouts. It remembers
/// the version it read, so a dump shows which records an upgrade rewrote.
final class PersonV2: StoredObject, Dumpable {
    override class var storedName: String { "Person" }
    override class var version: UInt8 { 2 }
    @Stored var phone = ""
    @Stored var fax = ""
    var versionRead: UInt8 = 0
    override func read(from buffer: inout DataBuffer) throws {
        versionRead = buffer.version
        phone = try buffer.readString()
        if buffer.version >= 2 { fax = try buffer.readString() }
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(phone)
        buffer.writeString(fax)
    }
    var fields: String { "phone=\(phone.debugDescription) fax=\(fax.debugDescription)" }
}

/// A class with a big ordered relationship: `songs` is a `StoredList`, kept out
/// of line (a B+ tree in the StoredLists table) once longer than 256.
final class Shelf: StoredObject, Dumpable {
    @Stored var title = ""
    @Stored var songs = StoredList<Song>()
    override func read(from buffer: inout DataBuffer) throws {
        title = try buffer.readString()
        songs = try buffer.readList(of: Song.self)
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(title)
        buffer.writeList(songs)
    }
    override func dissolveAllRelationships() { songs = [] }
    /// The count, a hash of every row ID in order, and the ends: a list of 100,000
    /// compares as one line. A node that cannot be read prints its error, so a
    /// dump of a damaged list never equals the old or the new state.
    var fields: String {
        var list = songs
        do { try list.loadAll() } catch { return "title=\(title.debugDescription) songs=UNREADABLE \(error)" }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for song in list { hash = (hash ^ UInt64(song.rowID)) &* 0x100_0000_01b3 }
        let head = list.prefix(3).map(\.rowID), tail = list.suffix(3).map(\.rowID)
        return "title=\(title.debugDescription) songs=\(list.count) hash=\(String(hash, radix: 16)) head=\(head) tail=\(tail)"
    }
}

/// A song with an artist and a title, both indexed: its saves change the
/// class file and its index file (`Tune.index`) together.
final class Tune: StoredObject, Dumpable {
    @Stored var title = ""
    @Stored var artist = ""
    override class var indexes: [StoredIndex] { [.value(\Tune.artist), .fullText(\Tune.title)] }
    override func read(from buffer: inout DataBuffer) throws {
        title = try buffer.readString()
        artist = try buffer.readString()
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(title)
        buffer.writeString(artist)
    }
    var fields: String { "title=\(title.debugDescription) artist=\(artist.debugDescription)" }
}
