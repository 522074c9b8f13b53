import CabinetStorage

/// A save's commit: one `MULTI`/`EXEC` for every table under `WATCH` of the
/// store's version, what it does when another process saved first (catch up, or
/// a conflict), when its reply is lost, and when its tables' changes were
/// staged (``RedisStagedWrite``). docs/FORMAT.md, "A save" and "Big saves".
extension RedisSession {
    /// Commits the open transactions of `tables` as one `MULTI`/`EXEC`, under
    /// `WATCH` of the version key, together with `extra` commands (a table's
    /// removal). All or nothing: if it throws, nothing was written (or, when the
    /// connection died with the reply, the log showed the save is not there) and
    /// every table's transaction is rolled back; the layer above keeps its changes pending.
    ///
    /// A table whose changes were staged (``RedisStagedWrite``) is renamed into
    /// place instead, if its staging is still what this process made of the
    /// table as of the version the commit watches; else its changes go in the
    /// `MULTI` as any table's.
    func commit(_ tables: [RedisTable], extra: [RedisCommand] = [], logged: RedisCommitLog.Entry? = nil) throws {
        defer { for table in tables { table.endTransaction() } }
        try checkWritable()
        var entry = logged ?? RedisCommitLog.Entry(token: RedisSession.newToken())
        noteOwnToken(entry.token)
        for table in tables { table.noteCommit(in: &entry) }
        let stagings = tables.map { $0.finishStaging() }
        let committed = entry
        func body(renaming: Bool) -> Body {
            var commands = [RedisCommand("MULTI")]
            commands += extra
            for (table, staging) in zip(tables, stagings) { table.appendCommit(to: &commands, renaming: renaming ? staging : nil) }
            let incrIndex = commands.count
            commands += announcing(committed)
            commands.append(RedisCommand("EXEC"))
            return Body(commands: commands, incrIndex: incrIndex)
        }
        commitReplyLost = false
        let (renamed, unconfirmed) = try withConnection { connection in
            let renamed = try commit(entry: entry, stagings: stagings.compactMap { $0 }, body: body, on: connection)
            return (renamed, flush == .waitAOF ? confirmFlush(on: connection, replyWasLost: commitReplyLost) : nil)
        }
        if renamed { for table in tables { table.stagingRenamed() } }
        // Committed: the error says so, and the layer above counts the save as done.
        if let unconfirmed { throw unconfirmed }
    }

    /// A save's `MULTI` … `EXEC`, and where in it the version is counted up.
    struct Body {
        let commands: [RedisCommand]
        let incrIndex: Int
    }

    /// What every save ends with inside its `MULTI`: the version counted up
    /// (first: ``commit(_:extra:logged:)`` reads the new version from its
    /// result), `entry` at the head of the log, the log trimmed, the save
    /// announced. (``compareAndSetScript`` does the same inside its script.)
    func announcing(_ entry: RedisCommitLog.Entry) -> [RedisCommand] {
        [RedisCommand("INCR", keys.version), RedisCommand("LPUSH", keys.log, bytes: entry.encoded),
         RedisCommand("LTRIM", keys.log, "0", String(RedisCommitLog.capacity - 1)),
         RedisCommand("PUBLISH", keys.saves, RedisSession.hex(entry.token))]
    }

    /// The rounds of a commit, on one connection (its `WATCH` is the connection's).
    /// Returns whether the save renamed its stagings over their tables.
    private func commit(entry: RedisCommitLog.Entry, stagings: [RedisStagedWrite.Finished], body makeBody: (Bool) -> Body,
                        on connection: RedisConnection) throws -> Bool {
        // A staging gets an hour more before it is watched (its EXPIRE after the WATCH would
        // stop this EXEC; its expiring or removal after it stops it too, so its RENAME never
        // fails inside the EXEC), and its length is read after: only the fields this process put there.
        var watch = RedisCommand("WATCH", keys.version)
        for staging in stagings { watch.append(staging.key) }
        // A batch that adds to the catalog merges with the catalog as it is at EXEC (watched).
        let additions = catalogAdditions
        if !additions.isEmpty { watch.append(keys.catalog) }
        var round = stagings.map { RedisCommand(arguments: [Array("EXPIRE".utf8), $0.key, Array(String(RedisStagedWrite.lifetime).utf8)]) }
        round += [watch, RedisCommand("GET", keys.version)]
        round += stagings.map { RedisCommand(arguments: [Array("HLEN".utf8), $0.key]) }
        if !additions.isEmpty { round.append(RedisCommand("GET", keys.catalog)) }
        let versionIndex = stagings.count + 1
        var bodies: [Bool: Body] = [:]
        // Saves of others this process moved past before: a record they changed that this save
        // writes again was changed here from what this process had read before them.
        if let overlap = entry.overlap(with: othersChanges) {
            throw CabinetError.saveConflict(path: path, reason: overlap + " (in a save of another process this store has taken in)")
        }
        for _ in 0..<20 {
            let current: Int64
            var renaming = false
            var catalog: [UInt8]?
            do {
                let watched = try connection.send(round, operation: "save (watch the store's version)", transaction: true)
                if let message = watched.lazy.compactMap(\.errorMessage).first {
                    throw serverError(message, operation: "save (watch the store's version)")
                }
                current = try version(in: watched[versionIndex])
                let lengthsEnd = versionIndex + 1 + stagings.count
                renaming = try stagingsHold(stagings, expiries: Array(watched[..<stagings.count]),
                                            lengths: Array(watched[(versionIndex + 1)..<lengthsEnd]), current: current, on: connection)
                if !additions.isEmpty {
                    do {
                        catalog = try mergedCatalog(watched[lengthsEnd], adding: additions)
                    } catch {
                        _ = try? connection.send([RedisCommand("UNWATCH")], operation: "save")
                        throw error
                    }
                }
                if current != knownVersion {
                    do {
                        try catchUp(to: current, with: entry, on: connection)
                    } catch {
                        _ = try? connection.send([RedisCommand("UNWATCH")], operation: "save")
                        throw error
                    }
                }
            } catch is RedisConnection.Redirected {
                continue   // the store's slot is on another node now: watch there
            }
            let made = bodies[renaming] ?? makeBody(renaming)
            bodies[renaming] = made
            var (body, incrIndex) = (made.commands, made.incrIndex)
            if let catalog {
                body.insert(RedisCommand("SET", keys.catalog, bytes: catalog), at: 1)   // after MULTI
                incrIndex += 1
                committedCatalog = catalog   // read by the backend only if this commit returns
            }
            let replies: [RedisReply]
            let clientID = connection.clientID   // a failed exchange forgets it
            do {
                replies = try connection.send(body, operation: "save", transaction: true)
            } catch is RedisConnection.Redirected {
                continue   // EXECABORT on the old node: nothing was written
            } catch {
                // The reply is lost with the connection: the save may or may not be in.
                if try isInLog(entry.token, after: "the connection failed with the save's reply (\(error))", killing: clientID, on: connection) {
                    commitReplyLost = true
                    return renaming
                }
                throw error
            }
            switch outcome(of: replies, body: body, incrIndex: incrIndex) {
            case .committed(let version):
                // Everything up to this save taken in before it: so it is after it (it is this process's own).
                if takenVersion == version - 1 { takenVersion = version }
                knownVersion = version
                return renaming
            case .watchFailed:
                continue   // another process saved between WATCH and EXEC: look at what it changed
            case .aborted(let refused):
                throw serverError(refused, operation: "save (nothing was written)")
            case .partlyFailed(let failed):
                // Redis goes on after a command fails inside EXEC: the rest of the save is in.
                // Only a key of the wrong type does that, and the tables' types are checked at open.
                throw serverError(failed, operation: "save (a key of the store has the wrong type, so part of the save may be in; run `cabinet verify`)")
            case .unknown(let odd):
                // The replies contradict each other or are not of their commands' types: the
                // server ran the EXEC (its reply came), but what it did is known only from the log.
                connection.disconnect()
                if try isInLog(entry.token, after: odd, killing: nil, on: connection) {
                    commitReplyLost = true
                    return renaming
                }
                throw serverError("\(odd); the store's log shows that the save is not in", operation: "save (nothing was written)")
            }
        }
        throw CabinetError.saveConflict(path: path, reason: "other processes saved (or the cluster moved the store) 20 times while this save was being tried")
    }

    /// The catalog `reply` (a `GET` of it) holds, with `additions` in it, as
    /// bytes to `SET`; throws ``CabinetError/Code-swift.struct/saveConflict``
    /// if they clash with it (another process gave a tag to another table).
    private func mergedCatalog(_ reply: RedisReply, adding additions: [String: UInt8?]) throws -> [UInt8] {
        let file = path + " " + keys.catalog
        let catalog = try RedisReply.optionalString(reply, of: "GET of the catalog", at: file)
            .map { try StoreCatalog(encoded: $0, file: file) } ?? StoreCatalog()
        return try catalog.adding(additions) {
            .saveConflict(path: path, reason: $0 + " (another process catalogued it first); nothing of the batch was written")
        }.encoded
    }

    /// ``committedDespiteLostReply(_:killing:on:)``, after `what` made the
    /// outcome of the save with `token` unknown; if the log can't be read
    /// either, throws an error that says the outcome is unknown (the save's
    /// token stays among this process's own, so the next save that finds it
    /// in the log passes over it, and writes the same changes again).
    private func isInLog(_ token: [UInt8], after what: String, killing clientID: Int64?, on connection: RedisConnection) throws -> Bool {
        do {
            return try committedDespiteLostReply(token, killing: clientID, on: connection)
        } catch {
            throw serverError("\(what), and the store's log could not be read to find out whether the save is in (\(error)); the outcome is unknown until the next save, which finds out from the log and writes the same changes again",
                              operation: "save (outcome unknown)")
        }
    }

    /// What a save's `MULTI` … `EXEC` did, as its replies say.
    enum Outcome {
        case committed(version: Int64)
        /// `EXEC` answered nil: a watched key changed; nothing was written.
        case watchFailed
        /// A command was refused while queued and `EXEC` said it aborted: nothing was written.
        case aborted(String)
        /// A command failed inside the `EXEC`: the rest of the save is in.
        case partlyFailed(String)
        /// Replies that are not what the commands answer, or that contradict each other (in words).
        case unknown(String)
    }

    /// Reads a save's replies: `MULTI`'s `OK`, a `QUEUED` for each command, then
    /// `EXEC`'s results (one per command, the version's count an integer), or
    /// its nil, or its `EXECABORT` after a refused command. Anything else (a
    /// reply forged or damaged on the way) leaves the outcome unknown: a refused
    /// command whose `EXEC` ran anyway, an `EXEC` error with every command queued.
    func outcome(of replies: [RedisReply], body: [RedisCommand], incrIndex: Int) -> Outcome {
        guard replies.count == body.count, let exec = replies.last else {
            return .unknown("the server gave \(replies.count) replies to the save's \(body.count) commands")
        }
        var refused: String?
        for (index, reply) in replies.dropLast().enumerated() {
            switch reply {
            case .status(let text) where text == (index == 0 ? "OK" : "QUEUED"): continue
            case .error(let message) where index > 0: refused = refused ?? message
            default: return .unknown("the server answered \(body[index].name) in the save's MULTI with \(reply.kind)")
            }
        }
        switch exec {
        case .error(let message) where refused != nil && message.hasPrefix("EXECABORT"):
            return .aborted(refused!)
        case .null where refused == nil:
            return .watchFailed
        case .array(let results) where refused == nil:
            if let failed = results.lazy.compactMap(\.errorMessage).first { return .partlyFailed(failed) }
            guard results.count == body.count - 2, case .integer(let version) = results[incrIndex - 1], version > 0 else {
                return .unknown("the save's EXEC gave \(results.count) results for \(body.count - 2) commands, or no count of saves")
            }
            return .committed(version: version)
        default:
            return .unknown(refused.map { "the server refused a command of the save (\($0)) but its EXEC answered \(exec.kind)" }
                            ?? "the save's EXEC answered \(exec.kind) though every command was queued")
        }
    }

    /// Whether every staging may be renamed over its table (round one of a
    /// commit read `expiries` and `lengths` after its `WATCH`): each is there
    /// for an hour more, holds as many fields as this process put there, and no
    /// save since its copy touched its table (the store's log says; a save of
    /// other tables leaves the copy as good as new). Else the save sends its changes.
    private func stagingsHold(_ stagings: [RedisStagedWrite.Finished], expiries: [RedisReply], lengths: [RedisReply],
                              current: Int64, on connection: RedisConnection) throws -> Bool {
        guard let oldest = stagings.map(\.copyVersion).min() else { return false }
        for (staging, (expiry, length)) in zip(stagings, zip(expiries, lengths)) {
            guard expiry.integer == 1, length.integer == staging.length else { return false }
        }
        guard oldest != current else { return true }
        guard oldest < current, current - oldest <= Int64(RedisCommitLog.capacity) else { return false }
        let replies = try connection.send([RedisCommand("LRANGE", keys.log, "0", String(current - oldest - 1)),
                                           RedisCommand("GET", keys.version)],
                                          operation: "save (read the store's log)", transaction: true)
        guard replies.allSatisfy({ $0.errorMessage == nil }), try version(in: replies[1]) == current,
              let items = replies[0].elements, items.count == Int(current - oldest) else { return false }
        // Newest first: item i is the save that made version current - i.
        for (index, item) in items.enumerated() {
            guard let bytes = item.bytes, let saved = RedisCommitLog.Entry(decoding: bytes), !saved.wholeStore else { return false }
            let made = current - Int64(index)
            if stagings.contains(where: { $0.copyVersion < made && saved.tables[$0.table] != nil }) { return false }
        }
        return true
    }

    /// The store's version from a reply: a count of saves, never negative.
    func version(in reply: RedisReply) throws -> Int64 {
        if case .null = reply { return 0 }
        guard let value = reply.integer, value >= 0 else {
            throw CabinetError.malformedRecord(RecordLocation(file: path + " " + keys.version), reason: "the store's version is not a count of saves")
        }
        return value
    }

    /// Learns what the saves since ``knownVersion`` changed; if none of it is
    /// what `mine` changes, this process's view moves to `current` (and what
    /// they changed is remembered, ``othersChanges``); else throws
    /// `CabinetError.saveConflict(path:reason:)`.
    func catchUp(to current: Int64, with mine: RedisCommitLog.Entry, on connection: RedisConnection) throws {
        let missed = current - knownVersion   // both are 0 or more: no overflow
        guard missed > 0 else {
            throw CabinetError.saveConflict(path: path, reason: "the store's version went from \(knownVersion) back to \(current): it was replaced or flushed since this process read it")
        }
        guard missed <= Int64(RedisCommitLog.capacity) else {
            throw CabinetError.saveConflict(path: path, reason: "\(missed) saves of other processes came since this process read the store, more than the \(RedisCommitLog.capacity) its log keeps")
        }
        // The log and the version again, in one pipeline on the watching connection: if the
        // version moved meanwhile, the log read may have missed an entry; try the round again.
        let replies = try connection.send([RedisCommand("LRANGE", keys.log, "0", String(missed - 1)),
                                           RedisCommand("GET", keys.version)],
                                          operation: "save (read the store's log)", transaction: true)
        if let message = replies.lazy.compactMap(\.errorMessage).first { throw serverError(message, operation: "save (read the store's log)") }
        guard try version(in: replies[1]) == current else { return }   // EXEC will answer nil: the next round reads again
        guard let items = replies[0].elements else {
            throw RedisReply.unexpected(replies[0], to: "LRANGE of the store's log", wanted: "a list", at: path)
        }
        guard items.count == Int(missed) else {
            throw CabinetError.saveConflict(path: path, reason: "the store's log holds \(items.count) of the \(missed) saves since this process read it")
        }
        var theirs: [RedisCommitLog.Entry] = []
        for item in items {
            guard let bytes = item.bytes, let entry = RedisCommitLog.Entry(decoding: bytes) else {
                throw CabinetError.saveConflict(path: path, reason: "an entry of the store's log (\(keys.log)) does not decode, so what it changed is unknown")
            }
            if isOwnToken(entry.token) { continue }   // this process's own save, whose reply was lost
            if let overlap = mine.overlap(with: entry) {
                throw CabinetError.saveConflict(path: path, reason: overlap)
            }
            theirs.append(entry)
        }
        knownVersion = current
        for entry in theirs.reversed() { othersChanges.merge(entry) }
    }

    /// After the connection died with a save's reply: connects again, has the
    /// server close the old connection (`CLIENT KILL ID`: a save still waiting in
    /// its input is dropped, one already run stays), then looks for the save's
    /// token in the log. `true`: the save is in; `false`: it is not, and never
    /// will be. If that cannot be learnt, this throws; its token is among this
    /// process's own (``noteOwnToken(_:)``, before the send), so a later save
    /// that finds it in the log knows it as its own.
    func committedDespiteLostReply(_ token: [UInt8], killing clientID: Int64?, on connection: RedisConnection) throws -> Bool {
        var commands: [RedisCommand] = []
        if let clientID { commands.append(RedisCommand("CLIENT", "KILL", "ID", String(clientID))) }
        // The version and the log read together (MULTI/EXEC), so they agree.
        commands += [RedisCommand("MULTI"), RedisCommand("GET", keys.version),
                     RedisCommand("LRANGE", keys.log, "0", String(RedisCommitLog.capacity - 1)),
                     RedisCommand("EXEC")]
        let replies = try connection.send(commands, operation: "save (find out whether it was written after the connection failed)")
        guard case .array(let results)? = replies.last, results.count == 2 else {
            throw serverError("the log could not be read after the connection failed", operation: "save")
        }
        guard let entries = results[1].elements else {
            throw RedisReply.unexpected(results[1], to: "LRANGE of the store's log", wanted: "a list", at: path)
        }
        guard let position = entries.firstIndex(where: { $0.bytes.map { Array($0.prefix(16)) } == token }) else { return false }
        let version = try self.version(in: results[0])
        guard version >= Int64(position) else { return false }
        // Saves that came after this one are caught up with at the next save.
        knownVersion = version - Int64(position)
        return true
    }
}
