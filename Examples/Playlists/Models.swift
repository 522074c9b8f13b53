import Cabinet

/// A song. Deleting one removes it from every playlist first (a delete rule).
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

    /// The delete rule: no playlist may keep pointing at a deleted song.
    override func prepareForDelete() {
        guard let store else { return }
        // prepareForDelete cannot throw; if the playlists cannot be read, the
        // save that follows still succeeds and a later read of the dangling
        // reference reports a missing record instead of crashing.
        try? store.enumerate(Playlist.self) { list, _ in
            if list.songs.contains(where: { $0 === self }) {
                list.songs.removeAll { $0 === self }
            }
        }
    }
}

/// An ordered list of songs.
final class Playlist: StoredObject {
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
    override func dissolveAllRelationships() {
        songs = []
    }
}
