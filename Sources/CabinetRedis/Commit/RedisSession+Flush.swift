import CabinetStorage

/// A flushed commit (``CommitDurability/flushed``): when it returns, the
/// server has the save in its append-only file, fsynced.
///
/// Redis 7.2 and later say so themselves: `WAITAOF 1 0 timeout` after the
/// `EXEC`, on the same connection, waits until the server fsynced every write
/// of that connection. An older server cannot be asked; it keeps the promise
/// only if it fsyncs the file before it answers any write (`appendonly yes`,
/// `appendfsync always`). Either is checked before the save's `WATCH`, so a
/// server that cannot promise it gets nothing of the save: the commit throws
/// ``CabinetError/Code-swift.struct/durabilityUnavailable`` and the save can
/// be tried again once the server is configured for it.
///
/// The configuration is asked at every flushed commit, not once per
/// connection: `CONFIG SET` changes it at any time, and a remembered answer
/// could promise what the server no longer does. It costs one round trip,
/// small beside the fsync the server makes for the save. Whether the server
/// knows `WAITAOF` (its version) is remembered.
extension RedisSession {
    /// How a flushed commit learns that the server has it on its disk.
    enum FlushConfirmation: Equatable {
        /// `WAITAOF` after the `EXEC` (Redis 7.2 and later).
        case waitAOF
        /// The server fsyncs its append-only file before it answers a write.
        case fsyncBeforeReply
    }

    /// How this server confirms a flushed commit; throws
    /// ``CabinetError/Code-swift.struct/durabilityUnavailable`` (nothing
    /// written) if it cannot.
    func flushConfirmation() throws -> FlushConfirmation {
        try checkWritable()
        let operation = "save (ask whether the server fsyncs its append-only file)"
        var commands = [RedisCommand("CONFIG", "GET", "appendonly"), RedisCommand("CONFIG", "GET", "appendfsync")]
        let asksCommand = knowsWaitAOF == nil
        if asksCommand { commands.append(RedisCommand("COMMAND", "INFO", "WAITAOF")) }
        let replies = try withConnection { try $0.send(commands, operation: operation) }
        let configure = "configure the server with `appendonly yes` and `appendfsync always` (redis.conf, or CONFIG SET), or save without durability: .flushed"
        if let refused = replies.prefix(2).lazy.compactMap(\.errorMessage).first {
            throw CabinetError.durabilityUnavailable(path: path, reason: "the server refused CONFIG GET (\(refused)), so whether it fsyncs its append-only file cannot be known; allow CONFIG GET, and \(configure)")
        }
        if asksCommand {
            // Redis answers COMMAND INFO of a command it does not know with a nil in its place.
            let known = replies[2].elements?.first.map { if case .null = $0 { false } else { true } } ?? false
            knowsWaitAOF = known
        }
        let appendOnly = configValue(replies[0]), fsync = configValue(replies[1])
        guard appendOnly == "yes" else {
            throw CabinetError.durabilityUnavailable(path: path, reason: "the server keeps no append-only file (appendonly is \(appendOnly ?? "not reported")), so a power loss loses what it has in memory; \(configure)")
        }
        if knowsWaitAOF == true { return .waitAOF }
        guard fsync == "always" else {
            throw CabinetError.durabilityUnavailable(path: path, reason: "the server fsyncs its append-only file \(fsync == "everysec" ? "once a second" : "when the system decides") (appendfsync is \(fsync ?? "not reported")), and is older than Redis 7.2, which can confirm a flush (WAITAOF); \(configure)")
        }
        return .fsyncBeforeReply
    }

    /// The value of a `CONFIG GET` reply of one parameter (`[name, value]`).
    private func configValue(_ reply: RedisReply) -> String? {
        guard let elements = reply.elements, elements.count == 2, let bytes = elements[1].bytes else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// After a commit's `EXEC` on `connection`: waits until the server fsynced
    /// it (`WAITAOF`), at most a little less than the connection's command
    /// timeout. Returns the error to throw once the commit is recorded as
    /// done, `nil` when the flush is confirmed.
    func confirmFlush(on connection: RedisConnection, replyWasLost: Bool) -> CabinetError? {
        if replyWasLost {
            // WAITAOF waits for its own connection's writes: the save went out on one that is gone.
            return .durabilityUnconfirmed(path: path, reason: "the connection failed with the save's reply, so the server could not be asked whether it fsynced it")
        }
        let (seconds, attoseconds) = connection.commandTimeout.components
        // Clamped (a day): a huge command timeout would overflow `seconds * 1000`.
        let wholeSeconds = min(max(seconds, 0), 86_400)
        let milliseconds = max(1, Int((wholeSeconds * 1000 + attoseconds / 1_000_000_000_000_000) * 3 / 4))
        do {
            let reply = try connection.send([RedisCommand("WAITAOF", "1", "0", String(milliseconds))], operation: "save (wait for the append-only file's fsync)")[0]
            if let message = reply.errorMessage {
                return .durabilityUnconfirmed(path: path, reason: "the server refused WAITAOF (\(message))")
            }
            guard let local = reply.elements?.first?.integer, local >= 1 else {
                return .durabilityUnconfirmed(path: path, reason: "the server had not fsynced its append-only file after \(milliseconds) ms (WAITAOF)")
            }
            return nil
        } catch {
            return .durabilityUnconfirmed(path: path, reason: "WAITAOF failed: \(error)")
        }
    }
}
