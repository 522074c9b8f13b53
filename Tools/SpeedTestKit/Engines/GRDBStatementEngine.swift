import GRDB

/// The same data as ``GRDBRecordEngine`` through prepared statements and row
/// cursors: GRDB's fastest idiom, so SQLite is not handicapped by records.
public enum GRDBStatementEngine: Engine {
    public static let name = "grdb-statement"
    public static let summary = "GRDB.swift 7 prepared statements and row cursors"

    struct Song {
        var title: String
        var seconds: Int
    }

    public static func run(_ workload: Workload, sizes: Sizes, directory: String) throws -> Outcome {
        // The schema is GRDBRecordEngine's, so both engines store the same tables.
        let queue = try GRDBRecordEngine.open(directory)
        var outcome = Outcome()
        switch workload {
        case .simpleInsert:
            try queue.write { db in
                let insert = try db.makeStatement(sql: "INSERT INTO song (title, seconds) VALUES (?, ?)")
                for i in 0..<sizes.songs {
                    try insert.execute(arguments: [SpeedData.simpleTitle, i])
                    outcome.add(UInt64(i))
                }
            }
        case .simpleFetch:
            try queue.read { db in
                var songs: [Song] = []
                let rows = try Row.fetchCursor(db, sql: "SELECT title, seconds FROM song")
                while let row = try rows.next() {
                    songs.append(Song(title: row[0], seconds: row[1]))
                }
                for song in songs { outcome.add(UInt64(song.seconds) &+ UInt64(song.title.utf8.count)) }
            }
        case .simpleEnumerate:
            try queue.read { db in
                let rows = try Row.fetchCursor(db, sql: "SELECT title, seconds FROM song")
                while let row = try rows.next() {
                    let title: String = row[0]
                    let seconds: Int = row[1]
                    outcome.add(UInt64(seconds) &+ UInt64(title.utf8.count))
                }
            }
        case .simpleUpdate:
            try queue.write { db in
                var ids: [(Int64, Int)] = []
                let rows = try Row.fetchCursor(db, sql: "SELECT id, title, seconds FROM song")
                while let row = try rows.next() {
                    let seconds: Int = row[2]
                    if seconds % 3 == 0 { ids.append((row[0], seconds)) }
                }
                let update = try db.makeStatement(sql: "UPDATE song SET title = ? WHERE id = ?")
                for (id, seconds) in ids {
                    let title = SpeedData.updatedTitle(seconds)
                    try update.execute(arguments: [title, id])
                    outcome.add(stableHash(title))
                }
            }
        case .complexInsert:
            try queue.write { db in
                let insertSong = try db.makeStatement(sql: "INSERT INTO song (title, seconds) VALUES (?, ?)")
                let insertList = try db.makeStatement(sql: "INSERT INTO playlist (title) VALUES (?)")
                let insertItem = try db.makeStatement(sql: "INSERT INTO playlistSong (playlistId, position, songId) VALUES (?, ?, ?)")
                var songIDs: [Int64] = []
                songIDs.reserveCapacity(sizes.complexSongs)
                for i in 0..<sizes.complexSongs {
                    try insertSong.execute(arguments: [SpeedData.complexTitle(i), i])
                    songIDs.append(db.lastInsertedRowID)
                    outcome.add(UInt64(i))
                }
                for p in 0..<sizes.playlists {
                    try insertList.execute(arguments: [SpeedData.playlistTitle(p)])
                    let listID = db.lastInsertedRowID
                    for (position, song) in sizes.complexPlaylistSongs(p).enumerated() {
                        try insertItem.execute(arguments: [listID, position, songIDs[song]])
                    }
                    outcome.add(UInt64(p))
                }
            }
        case .complexFetch:
            try queue.read { db in
                let first = try db.makeStatement(sql: """
                    SELECT song.title FROM song JOIN playlistSong ON playlistSong.songId = song.id
                    WHERE playlistSong.playlistId = ? AND playlistSong.position = 0
                    """)
                let lists = try Row.fetchAll(db, sql: "SELECT id, title FROM playlist")
                for list in lists {
                    let id: Int64 = list[0]
                    guard let title = try String.fetchOne(first, arguments: [id]) else {
                        throw SpeedTestError("playlist \(id) is empty")
                    }
                    outcome.add(stableHash(title))
                }
            }
        case .complexFaults:
            try queue.read { db in
                let songs = try db.makeStatement(sql: """
                    SELECT song.title FROM song JOIN playlistSong ON playlistSong.songId = song.id
                    WHERE playlistSong.playlistId = ? ORDER BY playlistSong.position
                    """)
                for id in try Int64.fetchAll(db, sql: "SELECT id FROM playlist") {
                    let titles = try String.fetchCursor(songs, arguments: [id])
                    while let title = try titles.next() { outcome.add(stableHash(title)) }
                }
            }
        case .namedBuffer:
            try queue.write { db in
                let insert = try db.makeStatement(sql: "INSERT INTO namedBufferItem (name, position, songId) VALUES (?, ?, ?)")
                let ids = try Int64.fetchAll(db, sql: "SELECT id FROM song ORDER BY id LIMIT ?", arguments: [sizes.bufferReferences])
                for (position, id) in ids.enumerated() {
                    try insert.execute(arguments: [SpeedData.bufferName, position, id])
                }
            }
            try queue.read { db in
                let ids = try Int64.fetchAll(db, sql: "SELECT songId FROM namedBufferItem WHERE name = ? ORDER BY position",
                                             arguments: [SpeedData.bufferName])
                let firstID = ids.first ?? 0
                for id in ids { outcome.add(UInt64(id - firstID)) }
            }
        case .indexedInsert, .indexedEqual, .indexedRange, .fulltext, .inverse, .observeObjects, .observeQueries, .observeIdle:
            throw SpeedTestError.unsupported(workload, by: name)
        }
        return outcome
    }
}
