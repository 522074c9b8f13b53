import Foundation
import GRDB

/// The observation workloads (``LiveSpeedData``) the way GRDB's documentation
/// teaches them: a `DatabasePool` (WAL, so observations fetch beside the
/// writer), one `ValueObservation` per object or query, consumed as an
/// `AsyncSequence` (`values(in:)`) by a task of its own, as Cabinet's are.
/// A database of its own (`grdb-live.sqlite`).
extension GRDBRecordEngine {
    enum Live {
        struct Song: Codable, FetchableRecord, PersistableRecord, Sendable {
            static let databaseTableName = "song"
            var id: Int64
            var title: String
            var seconds: Int
        }

        struct Album: Codable, FetchableRecord, PersistableRecord, Sendable {
            static let databaseTableName = "album"
            var id: Int64
            var title: String
        }

        /// Opens the database and creates the schema if it is new.
        static func open(_ directory: String) throws -> DatabasePool {
            let pool = try DatabasePool(path: directory + "/grdb-live.sqlite")
            try pool.write { db in
                try db.create(table: "song", ifNotExists: true) { t in
                    t.primaryKey("id", .integer)
                    t.column("title", .text).notNull()
                    t.column("seconds", .integer).notNull().indexed()
                }
                try db.create(table: "album", ifNotExists: true) { t in
                    t.primaryKey("id", .integer)
                    t.column("title", .text).notNull()
                }
            }
            return pool
        }

        /// The id of song `i` (or album `i`).
        static func id(_ i: Int) -> Int64 { Int64(i + 1) }
    }

    public static func prepareLive(sizes: Sizes, directory: String) throws {
        let pool = try Live.open(directory)
        try pool.write { db in
            for i in 0..<sizes.liveSongs {
                try Live.Song(id: Live.id(i), title: LiveSpeedData.title(i), seconds: Int(LiveSpeedData.seconds(i, sizes: sizes))).insert(db)
            }
            for a in 0..<LiveSpeedData.albums {
                try Live.Album(id: Live.id(a), title: LiveSpeedData.albumTitle(a, round: 0)).insert(db)
            }
        }
    }

    static func runLive(_ workload: Workload, sizes: Sizes, directory: String) throws -> Outcome {
        try Live.Library(pool: Live.open(directory)).run(workload, sizes: sizes)
    }
}

extension GRDBRecordEngine.Live {
    /// The library open in a pool.
    struct Library: LiveLibrary {
        let pool: DatabasePool

        func retitle(_ songs: [Int], _ title: @escaping @Sendable (Int) -> String) throws -> CommitTime {
            try CommitTime.of {
                try pool.write { db in
                    for i in songs {
                        guard var song = try Song.fetchOne(db, key: id(i)) else { throw SpeedTestError("song \(i) is missing") }
                        song.title = title(i)
                        try song.update(db)
                    }
                }
            }
        }

        func retitleAlbums(round: Int) throws -> CommitTime {
            try CommitTime.of {
                try pool.write { db in
                    for a in 0..<LiveSpeedData.albums {
                        guard var album = try Album.fetchOne(db, key: id(a)) else { throw SpeedTestError("album \(a) is missing") }
                        album.title = LiveSpeedData.albumTitle(a, round: round)
                        try album.update(db)
                    }
                }
            }
        }

        func observeTitle(ofSong i: Int, as index: Int, into deliveries: Deliveries) -> Task<Void, Never> {
            let song = ValueObservation.tracking { db in try Song.fetchOne(db, key: id(i)) }
            return consume(song.values(in: pool), as: index, into: deliveries) { song in LiveSpeedData.judge(title: song?.title) }
        }

        func observeSongs(in range: ClosedRange<UInt32>, as index: Int, into deliveries: Deliveries) -> Task<Void, Never> {
            let bounds = Int(range.lowerBound)...Int(range.upperBound)
            let songs = ValueObservation.tracking { db in try Song.filter(bounds.contains(Column("seconds"))).fetchAll(db) }
            return consume(songs.values(in: pool), as: index, into: deliveries) { songs in
                LiveSpeedData.judge(songs: songs.lazy.map { (title: $0.title, seconds: UInt32($0.seconds)) })
            }
        }
    }
}
