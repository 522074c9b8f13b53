import CHiredis

/// The floor on Redis: the records Cabinet writes (``RawRecords``), in the
/// hashes Cabinet keeps them in (`{store}:Song`, field = the 4-byte row key),
/// through hiredis with no object layer: writes as pipelined `HSET`s of 512
/// records each, fetches as one `HGETALL`, scans as `HSCAN`, faults as
/// pipelined `HMGET`s. Unlike Cabinet's saves, its writes are not one
/// `MULTI`/`EXEC` and log nothing: the floor, not an alternative.
public enum RawRedisEngine: Engine {
    public static let name = "redis-raw"
    public static let summary = "hiredis with Cabinet's record bytes, pipelined, no object layer: the floor on Redis"

    public static func run(_ workload: Workload, sizes: Sizes, directory: String) throws -> Outcome {
        guard supports(workload) else { throw SpeedTestError.unsupported(workload, by: name) }
        return try RawRedisRun(directory: directory, sizes: sizes).run(workload, faultsOneByOne: false)
    }

    public static var usesRedis: Bool { true }

    public static func storedBytes(directory: String) throws -> Int {
        try RawRedisClient(url: SpeedTestRedis.url()).memoryUsage(ofStore: SpeedTestRedis.storeName(for: directory))
    }

    public static func cleanUp(directory: String) throws {
        try RawRedisClient(url: SpeedTestRedis.url()).deleteStore(SpeedTestRedis.storeName(for: directory))
    }
}

/// What a store without batched faulting pays: ``RawRedisEngine`` with every
/// song of `complex-fetch` and `complex-faults` read by its own `HGET`, one
/// round trip each (the playlists still come in one `HGETALL`). Runs only those two.
public enum PerObjectRedisEngine: Engine {
    public static let name = "redis-per-object"
    public static let summary = "hiredis, one round trip per song fault: what batched faulting saves"

    public static func supports(_ workload: Workload) -> Bool { workload == .complexFetch || workload == .complexFaults }

    public static func run(_ workload: Workload, sizes: Sizes, directory: String) throws -> Outcome {
        // Its preparation writes the complex store as the floor does.
        try RawRedisRun(directory: directory, sizes: sizes).run(workload, faultsOneByOne: true)
    }

    public static var usesRedis: Bool { true }
    public static func storedBytes(directory: String) throws -> Int { try RawRedisEngine.storedBytes(directory: directory) }
    public static func cleanUp(directory: String) throws { try RawRedisEngine.cleanUp(directory: directory) }
}

/// One run of a raw Redis workload on the store of `directory`.
struct RawRedisRun {
    let client: RawRedisClient
    let songs: [UInt8], playlists: [UInt8], buffers: [UInt8]
    let sizes: Sizes
    /// Records per `HSET`, fields per `HMGET`.
    let batch = 512

    init(directory: String, sizes: Sizes) throws {
        client = try RawRedisClient(url: SpeedTestRedis.url())
        let tag = "{" + SpeedTestRedis.storeName(for: directory) + "}:"
        songs = Array((tag + "Song").utf8)
        playlists = Array((tag + "Playlist").utf8)
        buffers = Array((tag + "NamedBuffers").utf8)
        self.sizes = sizes
    }

    static func rowKey(_ row: UInt32) -> [UInt8] { withUnsafeBytes(of: row.littleEndian) { Array($0) } }

    static func row(_ key: UnsafeRawBufferPointer) -> UInt32? {
        key.count == 4 ? UInt32(littleEndian: key.loadUnaligned(as: UInt32.self)) : nil
    }

    func run(_ workload: Workload, faultsOneByOne: Bool) throws -> Outcome {
        var outcome = Outcome()
        var bytes: [UInt8] = []
        switch workload {
        case .simpleInsert:
            try write(songs, count: sizes.songs) { i in
                RawRecords.songRecord(SpeedData.simpleTitle, UInt32(i), into: &bytes)
                outcome.add(UInt64(i))
                return (UInt32(i + 2), bytes)
            }
        case .simpleFetch:
            var all: [RawRecords.Song] = []
            try getAll(songs) { _, record in all.append(try RawRecords.decodeSong(record)) }
            for song in all { outcome.add(UInt64(song.seconds) &+ UInt64(song.title.utf8.count)) }
        case .simpleEnumerate:
            try scan(songs) { _, record in
                let song = try RawRecords.decodeSong(record)
                outcome.add(UInt64(song.seconds) &+ UInt64(song.title.utf8.count))
            }
        case .simpleUpdate:
            var changed: [(UInt32, RawRecords.Song)] = []
            try getAll(songs) { row, record in
                var song = try RawRecords.decodeSong(record)
                if song.seconds % 3 == 0 {
                    song.title = SpeedData.updatedTitle(Int(song.seconds))
                    changed.append((row, song))
                }
            }
            try write(songs, count: changed.count) { i in
                let (row, song) = changed[i]
                RawRecords.songRecord(song.title, song.seconds, into: &bytes)
                outcome.add(stableHash(song.title))
                return (row, bytes)
            }
        case .complexInsert:
            try write(songs, count: sizes.complexSongs) { i in
                RawRecords.songRecord(SpeedData.complexTitle(i), UInt32(i), into: &bytes)
                outcome.add(UInt64(i))
                return (UInt32(i + 2), bytes)
            }
            try write(playlists, count: sizes.playlists) { p in
                RawRecords.playlistRecord(p, sizes: sizes, into: &bytes)
                outcome.add(UInt64(p))
                return (UInt32(p + 2), bytes)
            }
        case .complexFetch, .complexFaults:
            var rows: [UInt32] = []
            try getAll(playlists) { _, record in
                let songRows = try RawRecords.playlistSongRows(try RawRecords.verified(record))
                guard let first = songRows.first else { throw SpeedTestError("empty playlist") }
                if workload == .complexFetch { rows.append(first) } else { rows += songRows }
            }
            try fetch(songs, rows: rows, oneByOne: faultsOneByOne) { record in
                outcome.add(stableHash(try RawRecords.decodeSong(record).title))
            }
        case .namedBuffer:
            RawRecords.appendUInt32(UInt32(sizes.bufferReferences), to: &bytes)
            for i in 0..<sizes.bufferReferences { RawRecords.appendUInt32(UInt32(i + 2), to: &bytes) }
            RawRecords.appendChecksum(to: &bytes)
            let name = Array(SpeedData.bufferName.utf8)
            try client.call([Array("HSET".utf8), buffers, name, bytes]) { _ in }
            try client.call([Array("HGET".utf8), buffers, name]) { reply in
                let record = try RawRecords.verified(RawRedisClient.bytes(reply))
                let count = Int(UInt32(littleEndian: record.loadUnaligned(as: UInt32.self)))
                guard record.count >= 4 + 4 * count else { throw SpeedTestError("short named buffer") }
                for i in 0..<count {
                    outcome.add(UInt64(UInt32(littleEndian: record.loadUnaligned(fromByteOffset: 4 + 4 * i, as: UInt32.self)) - 2))
                }
            }
        case .indexedInsert, .indexedEqual, .indexedRange, .fulltext, .inverse, .observeObjects, .observeQueries, .observeIdle:
            throw SpeedTestError.unsupported(workload, by: RawRedisEngine.name)
        }
        return outcome
    }

    /// `count` records made by `record`, written to `hash` as pipelined `HSET`s, then every reply read.
    func write(_ hash: [UInt8], count: Int, _ record: (Int) throws -> (UInt32, [UInt8])) throws {
        var command: [[UInt8]] = [Array("HSET".utf8), hash]
        for i in 0..<count {
            let (row, bytes) = try record(i)
            command.append(RawRedisRun.rowKey(row))
            command.append(bytes)
            if command.count == 2 + 2 * batch || i == count - 1 {
                try client.append(command)
                command.removeSubrange(2...)
            }
        }
        try client.drain()
    }

    /// Every record of `hash`, from one `HGETALL`.
    func getAll(_ hash: [UInt8], _ body: (UInt32, UnsafeRawBufferPointer) throws -> Void) throws {
        try client.call([Array("HGETALL".utf8), hash]) { reply in try pairs(of: reply, body) }
    }

    /// Every record of `hash`, a thousand or so per `HSCAN` round trip (memory stays flat).
    func scan(_ hash: [UInt8], _ body: (UInt32, UnsafeRawBufferPointer) throws -> Void) throws {
        var cursor = Array("0".utf8)
        repeat {
            cursor = try client.call([Array("HSCAN".utf8), hash, cursor, Array("COUNT".utf8), Array("1000".utf8)]) { reply in
                let parts = RawRedisClient.elements(reply)
                guard parts.count == 2 else { throw SpeedTestError("HSCAN gave an unexpected reply") }
                try pairs(of: parts[1], body)
                return Array(RawRedisClient.bytes(parts[0]))
            }
        } while cursor != Array("0".utf8)
    }

    /// A field/value array reply's records; a field that is not a row key throws.
    private func pairs(of reply: redisReply, _ body: (UInt32, UnsafeRawBufferPointer) throws -> Void) throws {
        guard reply.type == REDIS_REPLY_ARRAY, reply.elements % 2 == 0 else { throw SpeedTestError("not a field/value list") }
        for index in stride(from: 0, to: reply.elements, by: 2) {
            guard let field = reply.element[index]?.pointee, let value = reply.element[index + 1]?.pointee,
                  let row = RawRedisRun.row(RawRedisClient.bytes(field)) else { throw SpeedTestError("a field that is not a row key") }
            try body(row, RawRedisClient.bytes(value))
        }
    }

    /// The records of `rows` in `hash`: pipelined `HMGET`s, or (`oneByOne`) an `HGET` and its reply per row.
    func fetch(_ hash: [UInt8], rows: [UInt32], oneByOne: Bool, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        func check(_ reply: redisReply) throws -> UnsafeRawBufferPointer {
            guard reply.type == REDIS_REPLY_STRING else { throw SpeedTestError("a song is missing") }
            return RawRedisClient.bytes(reply)
        }
        if oneByOne {
            for row in rows {
                try client.call([Array("HGET".utf8), hash, RawRedisRun.rowKey(row)]) { try body(try check($0)) }
            }
            return
        }
        for start in stride(from: 0, to: rows.count, by: batch) {
            try client.append([Array("HMGET".utf8), hash] + rows[start..<min(rows.count, start + batch)].map(RawRedisRun.rowKey))
        }
        while client.waiting > 0 {
            try client.reply { reply in
                for value in RawRedisClient.elements(reply) { try body(try check(value)) }
            }
        }
    }
}
