import CabinetStorage

extension RedisBackend {
    /// How long an unfinished restore's copy stays on the server: each batch of
    /// the copy renews it, and the restore's `EXEC` makes the copy permanent.
    static let restoreCopyLifetime = 3600

    /// Keys of the store that are neither a table nor one of its values (left
    /// by another program, or of a damaged table list), and tables of the list
    /// whose keys have the wrong type. A restore's unfinished copy and a big
    /// save's staging left by a process that died are reported too: they
    /// expire by themselves within an hour.
    public func storageProblems() throws -> [StorageProblem] {
        try session.checkOpen()
        var known: Set<String> = [keys.tables, keys.formatMarker, keys.catalog, keys.journal, keys.version, keys.log]
        var problems: [StorageProblem] = []
        for name in try tableNames() {
            known.insert(keys.table(name))
            known.insert(keys.order(name))
        }
        var cursor = "0"
        let size = try RedisReply.count(try session.call(RedisCommand("DBSIZE"), operation: "scan the store's keys"), of: "DBSIZE", at: path)
        var bound = RedisScanBound(command: "SCAN", location: path, size: size)
        repeat {
            let reply = try session.call(RedisCommand("SCAN", cursor, "MATCH", keys.pattern, "COUNT", "1000"), operation: "scan the store's keys")
            guard let parts = reply.elements, parts.count == 2, let next = parts[0].bytes, let found = parts[1].elements else {
                throw CabinetError.malformedRecord(RecordLocation(file: path), reason: "SCAN gave a reply of an unexpected shape")
            }
            cursor = String(decoding: next, as: UTF8.self)
            if cursor != "0" { try bound.advance(to: next, returned: found.count) }
            for key in found.compactMap(\.bytes).map({ String(decoding: $0, as: UTF8.self) }) where !known.contains(key) {
                guard key.hasPrefix(keys.tag) else { continue }   // MATCH is a pattern: {a}* also matches {a}x… only with the tag
                if key.hasPrefix(keys.stagingPrefix) {
                    problems.append(StorageProblem(location: RecordLocation(file: path + " " + key),
                                                   reason: "the staging of a big save whose process stopped before its commit (the table is as before it); it expires within an hour, or, if no save is running, remove it: redis-cli UNLINK '\(key)'"))
                } else if key.hasPrefix(keys.restorePrefix) {
                    problems.append(StorageProblem(location: RecordLocation(file: path + " " + key),
                                                   reason: "the copy of a restore that did not finish; it expires within an hour (or remove it: redis-cli UNLINK '\(key)')"))
                } else {
                    problems.append(StorageProblem(location: RecordLocation(file: path + " " + key),
                                                   reason: "a key with the store's tag that is neither one of its tables nor of its values; move it away if it is not yours"))
                }
            }
        } while cursor != "0"
        return problems.sorted { $0.location.description < $1.location.description }
    }

    /// Replaces the store with a copy of `source`: the copy goes into keys of
    /// its own (`{store}/restore/TOKEN/…`, which expire unless the restore
    /// finishes), then one `MULTI`/`EXEC` removes the old keys and renames the
    /// copy into place, under `WATCH` of the copy's keys. All or nothing: a
    /// process that dies before the `EXEC` leaves the store as it was.
    public func replaceContents(with source: any StorageBackend, formatMarker: String) throws {
        try replaceContents(with: source, formatMarker: formatMarker, progress: nil)
    }

    /// ``replaceContents(with:formatMarker:)``, reporting the records copied into the restore's keys.
    public func replaceContents(with source: any StorageBackend, formatMarker: String, progress: StoreProgress.Handler?) throws {
        try session.checkWritable()
        let prefix = keys.restorePrefix + RedisSession.hex(RedisSession.newToken()) + "/"
        var copied: [(table: String, ordered: Bool, hash: String?, order: String?)] = []
        let names = try source.tableNames()
        var counter = try ProgressCounter(progress, recordsOf: names, in: source)
        for name in names {
            counter.begin(name)
            let from = try source.openTable(named: name)
            let ordered = from is any OrderedStorageTable
            let hash = prefix + "t:" + name, order = prefix + "o:" + name
            var wrote = false
            var batch: [RedisCommand] = []
            var sets = RedisCommand("HSET", hash), adds = RedisCommand("ZADD", order)
            func flush() throws {
                if sets.argumentCount > 2 { batch.append(sets); sets = RedisCommand("HSET", hash) }
                if adds.argumentCount > 2 { batch.append(adds); adds = RedisCommand("ZADD", order) }
                guard !batch.isEmpty else { return }
                // Each batch with its expiry in one EXEC: a copy is never left without one.
                batch.insert(RedisCommand("MULTI"), at: 0)
                batch.append(RedisCommand("EXPIRE", hash, String(RedisBackend.restoreCopyLifetime)))
                if ordered { batch.append(RedisCommand("EXPIRE", order, String(RedisBackend.restoreCopyLifetime))) }
                batch.append(RedisCommand("EXEC"))
                let replies = try session.callAll(batch, operation: "restore (copy \(name))")
                if replies.last?.elements == nil {
                    throw session.serverError("the copy's EXEC did not run", operation: "restore (copy \(name))")
                }
                batch = []
                wrote = true
            }
            try from.forEach { key, value in
                sets.append(key); sets.append(value)
                if ordered { adds.append("0"); adds.append(key) }
                if sets.argumentCount >= 2 + 2 * 512 {
                    batch.append(sets); sets = RedisCommand("HSET", hash)
                    if ordered { batch.append(adds); adds = RedisCommand("ZADD", order) }
                    if batch.count >= 16 { try flush() }
                }
                counter.advance()
                return true
            }
            try flush()
            counter.report()
            copied.append((name, ordered, wrote ? hash : nil, wrote && ordered ? order : nil))
        }
        counter.finish()
        // The switch: old keys out, the copy in, as one EXEC.
        var body = [RedisCommand("MULTI")]
        for name in try tableNames() {
            body.append(RedisCommand("UNLINK", keys.table(name), keys.order(name)))
        }
        body.append(RedisCommand("UNLINK", keys.tables, keys.catalog, keys.journal))
        for item in copied {
            body.append(RedisCommand("HSET", keys.tables, item.table, (item.ordered ? RedisKeys.TableKind.ordered : .hash).rawValue))
            if let hash = item.hash { body += [RedisCommand("RENAME", hash, keys.table(item.table)), RedisCommand("PERSIST", keys.table(item.table))] }
            if let order = item.order { body += [RedisCommand("RENAME", order, keys.order(item.table)), RedisCommand("PERSIST", keys.order(item.table))] }
        }
        body.append(RedisCommand("SET", keys.formatMarker, formatMarker))
        let catalog = try source.services.readCatalog()?.encoded
        if let catalog { body.append(RedisCommand("SET", keys.catalog, bytes: catalog)) }
        var entry = RedisCommitLog.Entry(token: RedisSession.newToken())
        entry.wholeStore = true
        session.noteOwnToken(entry.token)
        body += session.announcing(entry)
        body.append(RedisCommand("EXEC"))
        let watched = copied.flatMap { [$0.hash, $0.order].compactMap { $0 } }
        closeTables()
        let replies = try session.withConnection { connection in
            // Each copy gets a fresh hour (a long restore's first tables must not expire
            // before the switch), and must still be there: a RENAME of a missing key
            // would fail inside the EXEC after the old tables were unlinked.
            let renewed = try connection.send(watched.map { RedisCommand("EXPIRE", $0, String(RedisBackend.restoreCopyLifetime)) }, operation: "restore")
            if let gone = zip(watched, renewed).first(where: { $0.1.integer != 1 }) {
                throw session.serverError("the restore's copy \(gone.0) is gone (expired or removed); nothing was replaced, run the restore again",
                                          operation: "restore")
            }
            // WATCH and EXEC on one connection: a copy another process removes meanwhile stops the switch.
            if !watched.isEmpty { _ = try connection.send(watched.map { RedisCommand("WATCH", $0) }, operation: "restore", transaction: true) }
            return try connection.send(body, operation: "restore (switch to the copy)", transaction: true)
        }
        if let refused = replies.dropLast().lazy.compactMap(\.errorMessage).first {
            throw session.serverError(refused, operation: "restore (nothing was replaced)")
        }
        guard case .array(let results)? = replies.last else {
            throw session.serverError(replies.last?.errorMessage ?? "the restore's copy was changed or expired before the switch",
                                                 operation: "restore (nothing was replaced)")
        }
        if let failed = results.lazy.compactMap(\.errorMessage).first {
            throw session.serverError(failed, operation: "restore (the switch failed part way: run `cabinet verify`)")
        }
        session.knownVersion = try session.currentVersion()
        lastCatalog = .some(catalog)
    }
}
