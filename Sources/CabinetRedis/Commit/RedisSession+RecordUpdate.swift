import CabinetStorage

extension RedisSession {
    /// Replaces one field of table `name`'s hash with what `transform` makes of
    /// its value, as a compare-and-set: `HGET`, then one script
    /// (``compareAndSetScript``) that, only if the field still holds the value
    /// read, sets the new value and does what every save ends with
    /// (``announcing(_:)``: the version counted up, the log entry, the
    /// announcement); read again if the field changed meanwhile. Only that
    /// field counts: saves of other records, however many, never make it try
    /// again (a `WATCH` would). Used to reserve row IDs
    /// (`OtherWritersBackend.updateRecord(inTable:forKey:_:)`).
    ///
    /// When no other process saved since this one last knew the store's
    /// version, the version moves on with it, as after a save; else the next
    /// save catches up with the saves between and passes over this one, its
    /// token being this process's own. A lost reply throws: whether the value
    /// went in is then unknown, which the caller can afford (a row range
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
            let script = RedisCommand(arguments: [
                Array("EVAL".utf8), Array(RedisSession.compareAndSetScript.utf8), Array("3".utf8),
                hash, Array(keys.version.utf8), Array(keys.log.utf8),
                field, expected, value, entry.encoded, Array(String(RedisCommitLog.capacity - 1).utf8),
                Array(keys.saves.utf8), Array(RedisSession.hex(entry.token).utf8),
            ])
            let reply = try withConnection { try $0.send([script], operation: operation) }[0]
            if let message = reply.errorMessage { throw serverError(message, operation: operation + " (nothing was written)") }
            guard let version = reply.integer else { throw serverError("the script gave no count", operation: operation) }
            if version > 0 {
                // No save of another process between: this process's view moves on with its own.
                if knownVersion == version - 1 { knownVersion = version }
                if takenVersion == version - 1 { takenVersion = version }
                return value
            }
            // Another process changed the field since the read (its save is announced): read again.
        }
        throw CabinetError.saveConflict(path: path, reason: "\(RedisCommitLog.describe(key: field)) of '\(name)' changed 20 times while this process tried to update it")
    }

    /// If field `ARGV[1]` of hash `KEYS[1]` holds what `ARGV[2]` says ("0":
    /// absent; "1" and the bytes), sets it to `ARGV[3]` and ends as a save
    /// does (``announcing(_:)``, which this mirrors): `INCR` of the version
    /// `KEYS[2]`, the log entry `ARGV[4]` pushed on `KEYS[3]` and the log trimmed
    /// to `ARGV[5]` + 1 entries, the token `ARGV[7]` published on `ARGV[6]`;
    /// returns the new version. Else changes nothing and returns 0. One script,
    /// so a compare-and-set that loses is neither counted, logged nor announced.
    static let compareAndSetScript = """
        local now = redis.call('HGET', KEYS[1], ARGV[1])
        local expected = ARGV[2]
        if (now == false and expected == '0') or (now ~= false and expected == '1' .. now) then
            redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
            local version = redis.call('INCR', KEYS[2])
            redis.call('LPUSH', KEYS[3], ARGV[4])
            redis.call('LTRIM', KEYS[3], 0, tonumber(ARGV[5]))
            redis.call('PUBLISH', ARGV[6], ARGV[7])
            return version
        end
        return 0
        """
}

private extension Array where Element == UInt8 {
    init(ascii text: StaticString) {
        self = text.withUTF8Buffer { Array($0) }
    }
}
