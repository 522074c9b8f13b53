import Cabinet
import Foundation

/// A song with the indexes of issue 15's example, and a few more value types.
final class Track: StoredObject {
    @Stored var title = ""
    @Stored var artist = ""
    @Stored var seconds: UInt32 = 0
    @Stored var added: Date? = nil
    @Stored var score: Float64 = 0
    @Stored var offset: Int64 = 0
    @Stored var favourite = false

    override class var indexes: [StoredIndex] {
        [.value(\Track.artist), .value(\Track.seconds), .value(\Track.added),
         .value(\Track.score), .value(\Track.offset), .value(\Track.favourite), .fullText(\Track.title)]
    }

    convenience init(_ title: String, by artist: String, seconds: UInt32 = 0) {
        self.init()
        self.title = title
        self.artist = artist
        self.seconds = seconds
    }

    override func read(from buffer: inout DataBuffer) throws {
        title = try buffer.readString()
        artist = try buffer.readString()
        seconds = try buffer.readUInt32()
        added = try buffer.readDate()
        score = try buffer.readFloat64()
        offset = try buffer.readInt64()
        favourite = try buffer.readBool()
    }

    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(title)
        buffer.writeString(artist)
        buffer.writeUInt32(seconds)
        buffer.writeDate(added)
        buffer.writeFloat64(score)
        buffer.writeInt64(offset)
        buffer.writeBool(favourite)
    }
}

/// A mix of tracks, with the inverse of its list indexed.
final class Mix: StoredObject {
    @Stored var title = ""
    @Stored var tracks: [Track] = []

    override class var indexes: [StoredIndex] { [.references(\Mix.tracks)] }

    override func read(from buffer: inout DataBuffer) throws {
        title = try buffer.readString()
        tracks = try buffer.readReferences(to: Track.self)
    }

    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(title)
        buffer.writeReferences(tracks)
    }
}

/// `Track`'s record with no index declared: the same file, before indexes were added.
final class PlainTrack: StoredObject {
    @Stored var title = ""
    @Stored var artist = ""
    @Stored var seconds: UInt32 = 0
    override class var storedName: String { "Track" }

    override func read(from buffer: inout DataBuffer) throws {
        title = try buffer.readString()
        artist = try buffer.readString()
        seconds = try buffer.readUInt32()
        _ = try buffer.readDate(); _ = try buffer.readFloat64(); _ = try buffer.readInt64(); _ = try buffer.readBool()
    }

    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(title)
        buffer.writeString(artist)
        buffer.writeUInt32(seconds)
        buffer.writeDate(nil); buffer.writeFloat64(0); buffer.writeInt64(0); buffer.writeBool(false)
    }
}
