import CabinetModel
import Foundation

/// Issue 15's workloads as a Cabinet user writes them: a `Song` class declaring
/// its four indexes, a `Playlist` class declaring the inverse of its songs, and
/// the store's queries. A store of its own (`cabinet-indexed`), so that the
/// songs of BNRPersistence's workloads keep declaring no index.
extension CabinetEngine {
    enum Indexed {
        @StoredModel
        final class Song: StoredObject {
            @FullText var title = ""
            @Indexed var artist = ""
            @Indexed var seconds: UInt32 = 0
            @Indexed var added: Date? = nil
        }

        @StoredModel
        final class Playlist: StoredObject {
            var title = ""
            @Indexed var songs: [Song] = []   // the inverse: the playlists that hold a song

            override func dissolveAllRelationships() {
                songs = []
            }
        }

        static func directory(_ directory: String) -> String { directory + "/cabinet-indexed" }

        static func open(_ directory: String) throws -> ObjectStore {
            try CabinetEngine.openStore(at: Indexed.directory(directory), registering: Song.self, Playlist.self)
        }

        /// The row of catalogue song `i`: rows count from 2 (row 1 is the class's metadata), in insertion order.
        static func row(_ i: Int) -> UInt32 { UInt32(i + 2) }
    }

    static func runIndexed(_ workload: Workload, sizes: Sizes, directory: String) throws -> Outcome {
        let store = try Indexed.open(directory)
        defer { store.close() }
        let n = sizes.songs
        var outcome = Outcome()
        func add(_ song: Indexed.Song, to outcome: inout Outcome) {
            outcome.add(IndexedSpeedData.songChecksum(title: song.title, seconds: song.seconds))
        }
        switch workload {
        case .indexedInsert:
            for i in 0..<n {
                let song = Indexed.Song()
                song.title = IndexedSpeedData.title(i, of: n)
                song.artist = IndexedSpeedData.artist(i, of: n)
                song.seconds = IndexedSpeedData.seconds(i, of: n)
                song.added = IndexedSpeedData.added(i, of: n)
                store.insert(song)
                outcome.add(UInt64(i))
            }
            try store.save()
        case .indexedEqual:
            try outcome.timeQueries(sizes.queries) { q, outcome in
                let artist = IndexedSpeedData.queryArtist(q, songs: n)
                for song in try store.fetch(Indexed.Song.self, where: \.artist, equals: artist) { add(song, to: &outcome) }
            }
        case .indexedRange:
            try outcome.timeQueries(sizes.queries) { q, outcome in
                let range = IndexedSpeedData.querySeconds(q, songs: n)
                for song in try store.fetch(Indexed.Song.self, where: \.seconds, in: range) { add(song, to: &outcome) }
            }
        case .fulltext:
            try outcome.timeQueries(sizes.queries) { q, outcome in
                let (first, second) = IndexedSpeedData.queryWords(q)
                for song in try store.search(Indexed.Song.self, matching: "\(first) \(second)") { add(song, to: &outcome) }
            }
        case .inverse:
            try outcome.timeQueries(sizes.queries) { q, outcome in
                let song = try store.fault(Indexed.Song.self, rowID: Indexed.row(IndexedSpeedData.querySong(q, songs: n)))
                for list in try store.fetch(Indexed.Playlist.self, where: \.songs, contains: song) {
                    outcome.add(stableHash(list.title))
                }
            }
        default:
            throw SpeedTestError.unsupported(workload, by: name)
        }
        return outcome
    }

    public static func insertIndexedPlaylists(sizes: Sizes, directory: String) throws {
        let store = try Indexed.open(directory)
        defer { store.close() }
        for p in 0..<sizes.indexedPlaylists {
            let list = Indexed.Playlist()
            list.title = IndexedSpeedData.playlistTitle(p)
            list.songs = try IndexedSpeedData.playlistSongs(p, size: sizes.playlistSize, songs: sizes.songs).map {
                try store.fault(Indexed.Song.self, rowID: Indexed.row($0))
            }
            store.insert(list)
        }
        try store.save()
    }

    /// The songs' index file, `Song.index` (value indexes, full-text index, and each row's entries).
    public static func indexBytes(directory: String) throws -> Int? {
        let path = Indexed.directory(directory) + "/Song.index"
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.size] as? Int) ?? 0
    }
}
