import CabinetRedis
import CHiredis

/// hiredis with nothing of Cabinet's around it: commands appended to one
/// pipeline, replies read back in order and handed over as hiredis made them.
/// The Redis engines' floor (`redis-raw`) and their set-up and clean-up use it.
final class RawRedisClient {
    private let context: UnsafeMutablePointer<redisContext>
    /// Commands appended whose replies were not read yet.
    private(set) var waiting = 0

    /// Connects to the server of `url` (`redis://host:port[/database]`).
    init(url: String) throws {
        let address = try RedisAddress(url: url, store: "speedtest")
        guard let context = redisConnect(address.host, Int32(address.port)) else { throw SpeedTestError("redisConnect failed") }
        self.context = context
        if context.pointee.err != 0 {   // deinit frees the context
            throw SpeedTestError("cannot connect to \(address): \(RawRedisClient.message(context))")
        }
        if let password = address.password { try call(["AUTH", password].map { Array($0.utf8) }) { _ in } }
        if address.database != 0 { try call(["SELECT", String(address.database)].map { Array($0.utf8) }) { _ in } }
    }

    deinit { redisFree(context) }

    private static func message(_ context: UnsafeMutablePointer<redisContext>) -> String {
        withUnsafeBytes(of: context.pointee.errstr) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }

    /// Queues one command (its words and binary arguments) without waiting for its reply.
    func append(_ arguments: [[UInt8]]) throws {
        var lengths = arguments.map { $0.count }
        let status = withArgumentPointers(arguments) { pointers in
            redisAppendCommandArgv(context, Int32(arguments.count), pointers, &lengths)
        }
        guard status == REDIS_OK else { throw SpeedTestError("append: \(RawRedisClient.message(context))") }
        waiting += 1
        // A long pipeline goes out as it is made, so the server works meanwhile (as Cabinet's does).
        if waiting % 32 == 0 {
            var done: Int32 = 0
            while done == 0 {
                guard redisBufferWrite(context, &done) == REDIS_OK else { throw SpeedTestError("write: \(RawRedisClient.message(context))") }
            }
        }
    }

    /// Reads the next reply and gives it to `body`; an error reply throws.
    func reply<R>(_ body: (redisReply) throws -> R) throws -> R {
        var raw: UnsafeMutableRawPointer?
        guard redisGetReply(context, &raw) == REDIS_OK, let raw else { throw SpeedTestError("reply: \(RawRedisClient.message(context))") }
        defer { freeReplyObject(raw) }
        waiting -= 1
        let reply = raw.assumingMemoryBound(to: redisReply.self).pointee
        if reply.type == REDIS_REPLY_ERROR { throw SpeedTestError("Redis: \(RawRedisClient.text(reply))") }
        return try body(reply)
    }

    /// One command, one round trip.
    @discardableResult
    func call<R>(_ arguments: [[UInt8]], _ body: (redisReply) throws -> R) throws -> R {
        try append(arguments)
        return try reply(body)
    }

    /// Reads (and drops) every reply still waiting.
    func drain() throws {
        while waiting > 0 { try reply { _ in } }
    }

    /// A string, status or error reply's bytes (empty for anything else).
    static func bytes(_ reply: redisReply) -> UnsafeRawBufferPointer {
        guard [REDIS_REPLY_STRING, REDIS_REPLY_STATUS, REDIS_REPLY_ERROR].contains(reply.type), let str = reply.str else {
            return UnsafeRawBufferPointer(start: nil, count: 0)
        }
        return UnsafeRawBufferPointer(start: str, count: reply.len)
    }

    static func text(_ reply: redisReply) -> String { String(decoding: bytes(reply), as: UTF8.self) }

    /// The elements of an array reply.
    static func elements(_ reply: redisReply) -> [redisReply] {
        guard reply.type == REDIS_REPLY_ARRAY else { return [] }
        return (0..<reply.elements).compactMap { reply.element[$0]?.pointee }
    }

    /// Calls `body` with the keys of `store`, a batch at a time (`SCAN MATCH {store}*`).
    func forEachKeyBatch(ofStore store: String, _ body: ([[UInt8]]) throws -> Void) throws {
        var cursor = "0"
        repeat {
            let (next, keys): (String, [[UInt8]]) = try call(["SCAN", cursor, "MATCH", "{\(store)}*", "COUNT", "1000"].map { Array($0.utf8) }) { reply in
                let parts = RawRedisClient.elements(reply)
                guard parts.count == 2 else { throw SpeedTestError("SCAN gave an unexpected reply") }
                return (String(decoding: RawRedisClient.bytes(parts[0]), as: UTF8.self),
                        RawRedisClient.elements(parts[1]).map { Array(RawRedisClient.bytes($0)) })
            }
            if !keys.isEmpty { try body(keys) }
            cursor = next
        } while cursor != "0"
    }

    /// Every key of `store`, deleted.
    func deleteStore(_ store: String) throws {
        try forEachKeyBatch(ofStore: store) { keys in try call([Array("UNLINK".utf8)] + keys) { _ in } }
    }

    /// The bytes the server's memory holds for the keys of `store` (`MEMORY USAGE`, every element counted).
    func memoryUsage(ofStore store: String) throws -> Int {
        var total = 0
        try forEachKeyBatch(ofStore: store) { keys in
            for key in keys {
                total += try call([Array("MEMORY".utf8), Array("USAGE".utf8), key, Array("SAMPLES".utf8), Array("0".utf8)]) { Int($0.integer) }
            }
        }
        return total
    }
}

/// `body` with a C array of pointers to each argument's bytes, all copied into
/// one buffer (valid only inside `body`).
private func withArgumentPointers<R>(_ arguments: [[UInt8]], _ body: (UnsafeMutablePointer<UnsafePointer<CChar>?>) -> R) -> R {
    var flat: [UInt8] = []
    flat.reserveCapacity(arguments.reduce(1) { $0 + $1.count })
    var offsets: [Int] = []
    offsets.reserveCapacity(arguments.count)
    for argument in arguments {
        offsets.append(flat.count)
        flat.append(contentsOf: argument)
    }
    flat.append(0)   // never empty, so the buffer has an address
    return flat.withUnsafeBufferPointer { buffer in
        let base = UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self)
        var pointers: [UnsafePointer<CChar>?] = offsets.map { base + $0 }
        return pointers.withUnsafeMutableBufferPointer { body($0.baseAddress!) }
    }
}
