// libFuzzer entry point for CabinetRedis's reading of what a server sends
// (`make fuzz-redis`): the input is a stream of RESP replies, read by hiredis
// as a connection reads them, then each reply is read as every command's
// check reads it, the stream as a save's replies, cursors through a scan's
// bound, and the bytes as an entry of the store's log. Compiled into the
// CabinetRedis module with its sources. Every input must end in a value or a
// thrown CabinetError; anything else (a trap, a sanitizer report) is a finding.
import CabinetStorage
import CHiredis

nonisolated(unsafe) let fuzzSession = RedisSession(address: try! RedisAddress(host: "127.0.0.1", store: "fuzz"),
                                                   connectTimeout: .seconds(1), commandTimeout: .seconds(1), readOnly: false)

/// A save's commands as the commit sends them, for reading a stream as their replies.
let fuzzSaveBody: [RedisCommand] = [RedisCommand("MULTI"), RedisCommand("HSET", "t", "k", "v"), RedisCommand("INCR", "version"),
                                    RedisCommand("LPUSH", "log", "e"), RedisCommand("LTRIM", "log", "0", "999"),
                                    RedisCommand("PUBLISH", "saves", "x"), RedisCommand("EXEC")]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var replies: [RedisReply] = []
    if let reader = redisReaderCreate() {
        defer { redisReaderFree(reader) }
        _ = data.withMemoryRebound(to: CChar.self, capacity: size) { redisReaderFeed(reader, $0, size) }
        while replies.count < 64 {
            var raw: UnsafeMutableRawPointer?
            guard redisReaderGetReply(reader, &raw) == REDIS_OK, let raw else { break }
            replies.append(RedisReply(raw.assumingMemoryBound(to: redisReply.self)))
            freeReplyObject(raw)
        }
    }
    for reply in replies {
        _ = reply.kind
        _ = try? RedisReply.count(reply, of: "HLEN", at: "fuzz")
        _ = try? RedisReply.optionalString(reply, of: "GET", at: "fuzz")
        _ = try? RedisReply.stringList(reply, of: "HKEYS", at: "fuzz")
        _ = try? RedisReply.optionalStrings(reply, count: 2, of: "HMGET", at: "fuzz")
        _ = try? fuzzSession.version(in: reply)
        reply.strings?.forEach { _, _ in true }
        // As a scan's reply: [cursor, elements], through a bound as the scans keep it.
        var bound = RedisScanBound(command: "HSCAN", location: "fuzz", size: 0)
        if let parts = reply.elements, parts.count == 2, let cursor = parts[0].bytes {
            _ = try? bound.advance(to: cursor, returned: parts[1].elements?.count ?? 0)
        }
    }
    // As a save's replies (the commit's INCR is its third command).
    _ = fuzzSession.outcome(of: Array(replies.prefix(fuzzSaveBody.count)), body: fuzzSaveBody, incrIndex: 2)
    _ = RedisCommitLog.Entry(decoding: bytes)
    return 0
}
