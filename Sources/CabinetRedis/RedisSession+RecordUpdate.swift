import CabinetStorage

extension RedisSession {
    /// Replaces one field of table `name`'s hash with what `transform` makes of
    /// its value, as a compare-and-set: `HGET`, then, in one `MULTI`/`EXEC`, a
    /// script that sets the new value only if the field still holds the value
    /// read (``compareAndSetScript``), with the save's usual log entry and
    /// announcement (``announcing(_:)``); read again if the field changed
    /// meanwhile. Only that field counts: saves of other records, however many,
    /// never make it try again (a `WATCH` would). Used to reserve row IDs
    /// (`OtherWritersBackend.updateRecord(inTable:forKey:_:)`).
    ///
    /// It never moves ``knownVersion``: the saves of others before it are still
    /// unseen, and the next save catches up with them and passes over this one,
    /// its token being this process's own. A lost reply throws: whether the
    /// value went in is then unknown, which the caller can afford (a row range
    /// reserved and never used is a gap, never a row handed out twice).
    func updateRecord(table name: String, field: [UInt8], _ transform: ([UInt8]?) throws -> [UInt8]) throws -> [UInt8] {
        try checkWritable()
        let hash = Array(keys.table(name).utf8)
        let operation = "update \(RedisCommitLog.describe(key: field)) of '\(name)'"
        for _ in 0..<20 {
            let read = try call(RedisCommand(arguments: [Array("HGET".utf8), hash, field]), operation: operation)
            let old: [UInt8]?
            switch read {
            case .null: old = nil
            case .error(let message): throw serverError(message, operation: operation)
            default:
                guard let bytes = read.bytes else { throw serverError("HGET gave no bytes", operation: operation) }
                old = bytes
            }
            let value = try transform(old)
            var entry = RedisCommitLog.Entry(token: RedisSession.newToken())
            entry.touch(name, keys: [field], count: 1)
            noteOwnToken(entry.token)
            let expected = old.map { [UInt8](ascii: "1") + $0 } ?? [UInt8](ascii: "0")
            let body = [RedisCommand("MULTI"),
                        RedisCommand(arguments: [Array("EVAL".utf8), Array(RedisSession.compareAndSetScript.utf8), Array("1".utf8), hash, field, expected, value])]
                + announcing(entry) + [RedisCommand("EXEC")]
            let replies = try withConnection { try $0.send(body, operation: operation) }
            if let refused = replies.dropLast().lazy.compactMap(\.errorMessage).first {
                throw serverError(refused, operation: operation + " (nothing was written)")
            }
            guard case .array(let results)? = replies.last, let set = results.first?.integer else {
                throw serverError(replies.last?.errorMessage ?? "EXEC gave no results", operation: operation)
            }
            if let failed = results.lazy.compactMap(\.errorMessage).first { throw serverError(failed, operation: operation) }
            if set == 1 { return value }
            // Another process changed the field since the read: its save is announced; read again.
        }
        throw CabinetError.saveConflict(path: path, reason: "\(RedisCommitLog.describe(key: field)) of '\(name)' changed 20 times while this process tried to update it")
    }

    /// Sets field `ARGV[1]` of hash `KEYS[1]` to `ARGV[3]` if it holds what
    /// `ARGV[2]` says: "0" absent, "1" and the bytes. Returns 1 if it set it, else 0.
    static let compareAndSetScript = """
        local now = redis.call('HGET', KEYS[1], ARGV[1])
        local expected = ARGV[2]
        if (now == false and expected == '0') or (now ~= false and expected == '1' .. now) then
            redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
            return 1
        end
        return 0
        """
}

private extension Array where Element == UInt8 {
    init(ascii text: StaticString) {
        self = text.withUTF8Buffer { Array($0) }
    }
}
