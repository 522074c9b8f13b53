import GRDB

/// The workloads the way GRDB's README teaches: Codable records in one write
/// transaction, `fetchAll` to read; playlists as a join table with a position column.
public enum GRDBRecordEngine: Engine {
    public static let name = "grdb"
    public static let summary = "GRDB.swift 7 Codable records (FetchableRecord, PersistableRecord)"

    struct Song: Codable, FetchableRecord, MutablePersistableRecord {
        static let databaseTableName = "song"
        var id: Int64?
        var title: String
        var seconds: Int

        mutating func didInsert(_ inserted: InsertionSuccess) {
            id = inserted.rowID
        }
    }

    struct Playlist: Codable, FetchableRecord, MutablePersistableRecord {
        static let databaseTableName = "playlist"
        var id: Int64?
        var title: String

        mutating func didInsert(_ inserted: InsertionSuccess) {
            id = inserted.rowID
        }
    }

    struct PlaylistSong: Codable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "playlistSong"
        var playlistId: Int64
        var position: Int
        var songId: Int64
    }

    struct BufferItem: Codable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "namedBufferItem"
        var name: String
        var position: Int
        var songId: Int64
    }

    /// Opens the database and creates the schema if it is new.
    static func open(_ directory: String) throws -> DatabaseQueue {
        let queue = try DatabaseQueue(path: directory + "/grdb.sqlite")
        try queue.write { db in
            try db.create(table: "song", ifNotExists: true) { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("title", .text).notNull()
                t.column("seconds", .integer).notNull()
            }
            try db.create(table: "playlist", ifNotExists: true) { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("title", .text).notNull()
            }
            try db.create(table: "playlistSong", ifNotExists: true) { t in
                t.column("playlistId", .integer).notNull().references("playlist")
                t.column("position", .integer).notNull()
                t.column("songId", .integer).notNull().references("song")
                t.primaryKey(["playlistId", "position"])
            }
            try db.create(table: "namedBufferItem", ifNotExists: true) { t in
                t.column("name", .text).notNull()
                t.column("position", .integer).notNull()
                t.column("songId", .integer).notNull().references("song")
                t.primaryKey(["name", "position"])
            }
        }
        return queue
    }

    public static func supports(_ workload: Workload) -> Bool { true }

    public static func run(_ workload: Workload, sizes: Sizes, directory: String) throws -> Outcome {
        if workload.isObservation { return try runLive(workload, sizes: sizes, directory: directory) }
        if workload.needsIndexes { return try runIndexed(workload, sizes: sizes, directory: directory) }
        let queue = try open(directory)
        var outcome = Outcome()
        switch workload {
        case .simpleInsert:
            try queue.write { db in
                for i in 0..<sizes.songs {
                    var song = Song(id: nil, title: SpeedData.simpleTitle, seconds: i)
                    try song.insert(db)
                    outcome.add(UInt64(i))
                }
            }
        case .simpleFetch:
            let songs = try queue.read { db in try Song.fetchAll(db) }
            for song in songs { outcome.add(UInt64(song.seconds) &+ UInt64(song.title.utf8.count)) }
        case .simpleEnumerate:
            try queue.read { db in
                let songs = try Song.fetchCursor(db)
                while let song = try songs.next() {
                    outcome.add(UInt64(song.seconds) &+ UInt64(song.title.utf8.count))
                }
            }
        case .simpleUpdate:
            try queue.write { db in
                for var song in try Song.fetchAll(db) where song.seconds % 3 == 0 {
                    song.title = SpeedData.updatedTitle(song.seconds)
                    try song.update(db)
                    outcome.add(stableHash(song.title))
                }
            }
        case .complexInsert:
            try queue.write { db in
                var songIDs: [Int64] = []
                songIDs.reserveCapacity(sizes.complexSongs)
                for i in 0..<sizes.complexSongs {
                    var song = Song(id: nil, title: SpeedData.complexTitle(i), seconds: i)
                    try song.insert(db)
                    songIDs.append(song.id ?? 0)
                    outcome.add(UInt64(i))
                }
                for p in 0..<sizes.playlists {
                    var list = Playlist(id: nil, title: SpeedData.playlistTitle(p))
                    try list.insert(db)
                    for (position, song) in sizes.complexPlaylistSongs(p).enumerated() {
                        try PlaylistSong(playlistId: list.id ?? 0, position: position, songId: songIDs[song]).insert(db)
                    }
                    outcome.add(UInt64(p))
                }
            }
        case .complexFetch:
            try queue.read { db in
                for list in try Playlist.fetchAll(db) {
                    let first = try Song.fetchOne(db, sql: """
                        SELECT song.* FROM song JOIN playlistSong ON playlistSong.songId = song.id
                        WHERE playlistSong.playlistId = ? ORDER BY playlistSong.position LIMIT 1
                        """, arguments: [list.id])
                    guard let first else { throw SpeedTestError("playlist \(list.title) is empty") }
                    outcome.add(stableHash(first.title))
                }
            }
        case .complexFaults:
            try queue.read { db in
                for list in try Playlist.fetchAll(db) {
                    let songs = try Song.fetchAll(db, sql: """
                        SELECT song.* FROM song JOIN playlistSong ON playlistSong.songId = song.id
                        WHERE playlistSong.playlistId = ? ORDER BY playlistSong.position
                        """, arguments: [list.id])
                    for song in songs { outcome.add(stableHash(song.title)) }
                }
            }
        case .namedBuffer:
            try queue.write { db in
                let ids = try Int64.fetchAll(db, sql: "SELECT id FROM song ORDER BY id LIMIT ?", arguments: [sizes.bufferReferences])
                for (position, id) in ids.enumerated() {
                    try BufferItem(name: SpeedData.bufferName, position: position, songId: id).insert(db)
                }
            }
            let items = try queue.read { db in
                try BufferItem.filter(Column("name") == SpeedData.bufferName).order(Column("position")).fetchAll(db)
            }
            let firstID = items.first?.songId ?? 0
            for item in items { outcome.add(UInt64(item.songId - firstID)) }
        case .indexedInsert, .indexedEqual, .indexedRange, .fulltext, .inverse, .observeObjects, .observeQueries, .observeIdle:
            throw SpeedTestError.unsupported(workload, by: name)   // runIndexed's
        }
        return outcome
    }
}
