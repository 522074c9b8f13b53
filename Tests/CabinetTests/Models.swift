import Cabinet
import Foundation

/// The README's classes, exactly as users write them.
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
    override func dissolveAllRelationships() {
        songs = []
    }
}

/// A class with a to-one reference, a heterogeneous list and a delete rule.
final class Album: StoredObject {
    @Stored var name = ""
    @Stored var opener: Song?
    @Stored var extras: [StoredObject] = []
    /// Not @Stored: changes need store.willUpdate.
    var rating: UInt8 = 0

    override func read(from buffer: inout DataBuffer) throws {
        name = try buffer.readString()
        opener = try buffer.readReference(to: Song.self)
        extras = try buffer.readAnyReferences()
        rating = try buffer.readUInt8()
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(name)
        buffer.writeReference(opener)
        buffer.writeAnyReferences(extras)
        buffer.writeUInt8(rating)
    }
    /// Deleting an album deletes its opening song (a cascade rule).
    override func prepareForDelete() {
        if let opener { store?.delete(opener) }
    }
}

/// A node that can point at itself: uniquing must hand back the same instance.
final class Node: StoredObject {
    @Stored var label = ""
    @Stored var next: Node?

    override func read(from buffer: inout DataBuffer) throws {
        label = try buffer.readString()
        next = try buffer.readReference(to: Node.self)
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(label)
        buffer.writeReference(next)
    }
    override func dissolveAllRelationships() {
        next = nil
    }
}
