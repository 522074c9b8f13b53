import Foundation
import GRDB

/// Issue 15's workloads the way GRDB's documentation teaches them, in a database
/// of their own (`grdb-indexed.sqlite`): Codable records, an index per queried
/// column, and an FTS5 table kept in sync with the songs by GRDB's triggers
/// (`synchronize(withTable:)`: external content, so the titles are stored
/// once, as in Cabinet, whose full-text index holds words, not the text).
///
/// Every query workload runs its queries in one read transaction, GRDB's
/// cheapest way (an app would more often pay a `read` per query).
extension GRDBRecordEngine {
    enum Indexed {
        struct Song: Codable, FetchableRecord, MutablePersistableRecord {
            static let databaseTableName = "song"
            // Dates as seconds since 2001 (a REAL, 8 bytes), as Cabinet stores and
            // indexes them, not GRDB's default text: the index sizes compare like with like.
            static let databaseDateEncodingStrategy = DatabaseDateEncodingStrategy.timeIntervalSinceReferenceDate
            static let databaseDateDecodingStrategy = DatabaseDateDecodingStrategy.timeIntervalSinceReferenceDate
            var id: Int64?
            var title: String
            var artist: String
            var seconds: Int
            var added: Date?

            mutating func didInsert(_ inserted: InsertionSuccess) {
                id = inserted.rowID
            }
        }

        /// Opens the database and creates the schema if it is new: the songs with
        /// their indexes, and the playlists as ``GRDBRecordEngine``'s (`Playlist`,
        /// `PlaylistSong` records), the join table indexed on `songId` too.
        static func open(_ directory: String) throws -> DatabaseQueue {
            let queue = try DatabaseQueue(path: directory + "/grdb-indexed.sqlite")
            try queue.write { db in
                // Not `ifNotExists`: GRDB rebuilds a synchronized FTS5 table whenever
                // it runs its creation (`'rebuild'`, 0.8 s at 1M songs), which would
                // leave the queries a freshly merged index and the size count a rebuilt one.
                guard try !db.tableExists("song") else { return }
                try db.create(table: "song") { t in
                    t.autoIncrementedPrimaryKey("id")
                    t.column("title", .text).notNull()
                    t.column("artist", .text).notNull().indexed()
                    t.column("seconds", .integer).notNull().indexed()
                    t.column("added", .double).indexed()
                }
                try db.create(virtualTable: "songFts", using: FTS5()) { t in
                    t.synchronize(withTable: "song")
                    t.column("title")
                }
                try db.create(table: "playlist") { t in
                    t.autoIncrementedPrimaryKey("id")
                    t.column("title", .text).notNull()
                }
                try db.create(table: "playlistSong") { t in
                    t.column("playlistId", .integer).notNull().references("playlist")
                    t.column("position", .integer).notNull()
                    t.column("songId", .integer).notNull().references("song").indexed()
                    t.primaryKey(["playlistId", "position"])
                }
            }
            return queue
        }

        /// The id of catalogue song `i`: a new table's ids count from 1, in insertion order.
        static func id(_ i: Int) -> Int64 { Int64(i + 1) }
    }

    static func runIndexed(_ workload: Workload, sizes: Sizes, directory: String) throws -> Outcome {
        let queue = try Indexed.open(directory)
        let n = sizes.songs
        var outcome = Outcome()
        func add(_ song: Indexed.Song, to outcome: inout Outcome) {
            outcome.add(IndexedSpeedData.songChecksum(title: song.title, seconds: UInt32(song.seconds)))
        }
        switch workload {
        case .indexedInsert:
            try queue.write { db in
                for i in 0..<n {
                    var song = Indexed.Song(id: nil, title: IndexedSpeedData.title(i, of: n), artist: IndexedSpeedData.artist(i, of: n),
                                            seconds: Int(IndexedSpeedData.seconds(i, of: n)), added: IndexedSpeedData.added(i, of: n))
                    try song.insert(db)
                    outcome.add(UInt64(i))
                }
            }
        case .indexedEqual:
            try queue.read { db in
                try outcome.timeQueries(sizes.queries) { q, outcome in
                    let artist = IndexedSpeedData.queryArtist(q, songs: n)
                    for song in try Indexed.Song.filter(Column("artist") == artist).fetchAll(db) { add(song, to: &outcome) }
                }
            }
        case .indexedRange:
            try queue.read { db in
                try outcome.timeQueries(sizes.queries) { q, outcome in
                    let range = IndexedSpeedData.querySeconds(q, songs: n)
                    let request = Indexed.Song.filter((Int(range.lowerBound)...Int(range.upperBound)).contains(Column("seconds")))
                    for song in try request.fetchAll(db) { add(song, to: &outcome) }
                }
            }
        case .fulltext:
            try queue.read { db in
                try outcome.timeQueries(sizes.queries) { q, outcome in
                    let (first, second) = IndexedSpeedData.queryWords(q)
                    let songs = try Indexed.Song.fetchAll(db, sql: """
                        SELECT song.* FROM song JOIN songFts ON songFts.rowid = song.id WHERE songFts MATCH ?
                        """, arguments: ["\(first) \(second)"])
                    for song in songs { add(song, to: &outcome) }
                }
            }
        case .inverse:
            try queue.read { db in
                try outcome.timeQueries(sizes.queries) { q, outcome in
                    let song = Indexed.id(IndexedSpeedData.querySong(q, songs: n))
                    let lists = try Playlist.fetchAll(db, sql: """
                        SELECT playlist.* FROM playlist JOIN playlistSong ON playlistSong.playlistId = playlist.id
                        WHERE playlistSong.songId = ?
                        """, arguments: [song])
                    for list in lists { outcome.add(stableHash(list.title)) }
                }
            }
        default:
            throw SpeedTestError.unsupported(workload, by: name)
        }
        return outcome
    }

    public static func insertIndexedPlaylists(sizes: Sizes, directory: String) throws {
        let queue = try Indexed.open(directory)
        try queue.write { db in
            for p in 0..<sizes.indexedPlaylists {
                var list = Playlist(id: nil, title: IndexedSpeedData.playlistTitle(p))
                try list.insert(db)
                for (position, song) in IndexedSpeedData.playlistSongs(p, size: sizes.playlistSize, songs: sizes.songs).enumerated() {
                    try PlaylistSong(playlistId: list.id ?? 0, position: position, songId: Indexed.id(song)).insert(db)
                }
            }
        }
    }

    /// The pages of the song table's indexes and of the FTS5 table's shadow
    /// tables (`songFts_data`, `_idx`, `_docsize`, `_config`), from SQLite's `dbstat`.
    public static func indexBytes(directory: String) throws -> Int? {
        try Indexed.open(directory).read { db in
            try Int.fetchOne(db, sql: """
                SELECT SUM(pgsize) FROM dbstat
                WHERE name IN (SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'song') OR name LIKE 'songFts%'
                """)
        }
    }
}
