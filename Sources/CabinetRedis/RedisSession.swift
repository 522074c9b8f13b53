import CabinetStorage

/// What a backend's tables share: the connections, the key names, whether the
/// backend is open and writable, and the version of the store its last save
/// (or its open) saw. It commits the tables' transactions, one `MULTI`/`EXEC`
/// for all of them (``commit(_:)``).
///
/// Each exchange takes a connection of its own from an idle list (a new one
/// when none is idle) and puts it back after, so a `StorePool`'s read blocks,
/// on several threads, each talk to the server on their own socket. A commit
/// keeps one connection from its `WATCH` to its `EXEC`.
final class RedisSession {
    let keys: RedisKeys
    let path: String
    private let address: RedisAddress
    private let connectTimeout: Duration, commandTimeout: Duration
    /// Guards ``idle``: connections are not Sendable, so they are kept beside the lock, not in it.
    private let idleLock = PlainMutex()
    private var idle: [RedisConnection] = []
    /// The node that last answered for the store (guarded by ``idleLock``).
    private var storeNode: (host: String, port: Int)?
    let readOnly: Bool
    /// A table's changes in one transaction from this many on are staged (``RedisStagedWrite``).
    let stagingThreshold: Int
    /// Set by the backend's close; read by every call, and by the subscriber's thread too.
    var isClosed: Bool {
        get { idleLock.withLock { closed } }
        set { idleLock.withLock { closed = newValue } }
    }
    private var closed = false
    /// The store's version (its count of saves) as this process last knew it:
    /// a save that finds another number has missed other processes' saves.
    var knownVersion: Int64 = 0
    /// The version up to which the layer above took in other processes' saves
    /// (``takeOthersSaves()``): behind ``knownVersion`` when a commit of this
    /// process moved past saves the layer above has not seen yet.
    var takenVersion: Int64 = 0
    /// What the saves of other processes this process moved past changed: a
    /// later save that writes any of it again is a conflict (this process's
    /// objects may hold what was there before them).
    private var othersChanges = RedisCommitLog.Entry(token: [])
    /// Tokens of this process's recent saves, noted before each is sent
    /// (guarded by ``idleLock``): a save announced, or found in the log, with one
    /// of them is this process's own, a save whose reply was lost included. The
    /// last 1,024 are kept, more than the log's 1,000 entries.
    private var ownTokens: Set<[UInt8]> = []
    private var ownTokenOrder: [[UInt8]] = []

    init(address: RedisAddress, connectTimeout: Duration, commandTimeout: Duration, readOnly: Bool, stagingThreshold: Int = 4096) {
        self.stagingThreshold = max(1, stagingThreshold)
        self.address = address
        path = address.description
        keys = RedisKeys(store: address.store)
        self.connectTimeout = connectTimeout
        self.commandTimeout = commandTimeout
        self.readOnly = readOnly
    }

    /// Runs `body` with a connection no other thread uses meanwhile.
    func withConnection<R>(_ body: (RedisConnection) throws -> R) throws -> R {
        let connection = takeConnection()
        defer { giveBack(connection) }
        return try body(connection)
    }

    /// A connection for this caller alone until it is given back (``giveBack(_:)``).
    func takeConnection() -> RedisConnection {
        var taken: RedisConnection?
        var node: (host: String, port: Int)?
        idleLock.withLock { taken = idle.popLast(); node = storeNode }
        // A new connection goes straight to the node the store's slot was last found on.
        return taken ?? RedisConnection(address: address, node: node, connectTimeout: connectTimeout, commandTimeout: commandTimeout)
    }

    /// Puts a connection taken with ``takeConnection()`` back among the idle ones.
    func giveBack(_ connection: RedisConnection) {
        idleLock.withLock { idle.append(connection); storeNode = connection.node }
    }

    /// Closes every idle connection (all of them, when no call is running).
    func disconnectAll() {
        idleLock.withLock {
            for connection in idle { connection.disconnect() }
            idle = []
        }
    }

    /// An error reply of the server, as a `CabinetError` naming the store.
    func serverError(_ message: String, operation: String) -> CabinetError {
        RedisConnection.serverError(message, operation: operation, location: path)
    }

    func checkOpen() throws {
        if isClosed { throw CabinetError.storeClosed(path: path) }
    }

    func checkWritable() throws {
        try checkOpen()
        if readOnly { throw CabinetError.readOnly(path: path, reason: "it was opened with readOnly") }
    }

    @discardableResult
    func call(_ command: RedisCommand, operation: String? = nil) throws -> RedisReply {
        try checkOpen()
        return try withConnection { try $0.call(command, operation: operation) }
    }

    /// Sends `commands` pipelined; the first error reply is thrown.
    func callAll(_ commands: [RedisCommand], operation: String) throws -> [RedisReply] {
        try checkOpen()
        let replies = try withConnection { try $0.send(commands, operation: operation) }
        if let message = replies.lazy.compactMap(\.errorMessage).first {
            throw serverError(message, operation: operation)
        }
        return replies
    }

    /// The store's version now.
    func currentVersion() throws -> Int64 {
        try call(RedisCommand("GET", keys.version), operation: "read the store's version").integer ?? 0
    }

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
        let renamed = try withConnection { connection in
            try commit(entry: entry, stagings: stagings.compactMap { $0 }, body: body, on: connection)
        }
        if renamed { for table in tables { table.stagingRenamed() } }
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
        var round = stagings.map { RedisCommand(arguments: [Array("EXPIRE".utf8), $0.key, Array(String(RedisStagedWrite.lifetime).utf8)]) }
        round += [watch, RedisCommand("GET", keys.version)]
        round += stagings.map { RedisCommand(arguments: [Array("HLEN".utf8), $0.key]) }
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
            do {
                let watched = try connection.send(round, operation: "save (watch the store's version)", transaction: true)
                if let message = watched.lazy.compactMap(\.errorMessage).first {
                    throw serverError(message, operation: "save (watch the store's version)")
                }
                current = try version(in: watched[versionIndex])
                renaming = try stagingsHold(stagings, expiries: Array(watched[..<stagings.count]),
                                            lengths: Array(watched[(versionIndex + 1)...]), current: current, on: connection)
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
            let (body, incrIndex) = (made.commands, made.incrIndex)
            let replies: [RedisReply]
            let clientID = connection.clientID   // a failed exchange forgets it
            do {
                replies = try connection.send(body, operation: "save", transaction: true)
            } catch is RedisConnection.Redirected {
                continue   // EXECABORT on the old node: nothing was written
            } catch {
                // The reply is lost with the connection: the save may or may not be in.
                if try committedDespiteLostReply(entry.token, killing: clientID, on: connection) { return renaming }
                throw error
            }
            // A command refused while queueing (OOM under maxmemory, a wrong type) aborts the EXEC.
            if let refused = replies.dropLast().lazy.compactMap(\.errorMessage).first {
                throw serverError(refused, operation: "save (nothing was written)")
            }
            switch replies.last {
            case .array(let results)?:
                if let failed = results.lazy.compactMap(\.errorMessage).first {
                    // Redis goes on after a command fails inside EXEC: the rest of the save is in.
                    // Only a key of the wrong type does that, and the tables' types are checked at open.
                    throw serverError(failed, operation: "save (a key of the store has the wrong type, so part of the save may be in; run `cabinet verify`)")
                }
                guard results.count == body.count - 2, let version = results[incrIndex - 1].integer else {
                    throw serverError("EXEC gave \(results.count) results for \(body.count - 2) commands", operation: "save")
                }
                // Everything up to this save taken in before it: so it is after it (it is this process's own).
                if takenVersion == version - 1 { takenVersion = version }
                knownVersion = version
                return renaming
            case .null?:
                continue   // another process saved between WATCH and EXEC: look at what it changed
            case .error(let message)?:
                throw serverError(message, operation: "save (nothing was written)")
            default:
                throw serverError("EXEC gave no reply", operation: "save")
            }
        }
        throw CabinetError.saveConflict(path: path, reason: "other processes saved (or the cluster moved the store) 20 times while this save was being tried")
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
    private func version(in reply: RedisReply) throws -> Int64 {
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
    private func catchUp(to current: Int64, with mine: RedisCommitLog.Entry, on connection: RedisConnection) throws {
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
        let items = replies[0].elements ?? []
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

    // MARK: Other processes' saves

    /// Remembers the token of a save this process is about to send (the last 1,024).
    func noteOwnToken(_ token: [UInt8]) {
        idleLock.withLock {
            guard ownTokens.insert(token).inserted else { return }
            ownTokenOrder.append(token)
            if ownTokenOrder.count > 1024 { ownTokens.remove(ownTokenOrder.removeFirst()) }
        }
    }

    /// Whether `token` is one of this process's saves (those whose reply was lost included).
    func isOwnToken(_ token: [UInt8]) -> Bool {
        idleLock.withLock { ownTokens.contains(token) }
    }

    /// The saves since `version`, oldest first, and the version they lead to.
    /// The version first (no more when nothing changed), then the log's newest
    /// entries and the version again in one `MULTI`/`EXEC`, read again if a save
    /// came between. More saves than the log keeps, or a version that went back
    /// (the store replaced), give one save of the whole store.
    func saves(since version: Int64) throws -> (entries: [RedisCommitLog.Entry], version: Int64) {
        var whole = RedisCommitLog.Entry(token: [])
        whole.wholeStore = true
        var current = try currentVersion()
        for _ in 0..<5 {
            let missed = current - version
            guard missed > 0 else { return (missed == 0 ? [] : [whole], current) }
            guard missed <= Int64(RedisCommitLog.capacity) else { return ([whole], current) }
            let replies = try callAll([RedisCommand("MULTI"), RedisCommand("GET", keys.version),
                                       RedisCommand("LRANGE", keys.log, "0", String(missed - 1)),
                                       RedisCommand("EXEC")], operation: "read the store's log")
            guard let results = replies.last?.elements, results.count == 2 else {
                throw serverError("the store's log could not be read", operation: "read the store's log")
            }
            let now = try self.version(in: results[0])
            guard now == current else { current = now; continue }   // a save came between: read again
            let items = results[1].elements ?? []
            guard items.count == Int(missed) else { return ([whole], current) }
            // An entry that does not decode changed who knows what: all of it.
            return (items.reversed().map { $0.bytes.flatMap(RedisCommitLog.Entry.init(decoding:)) ?? whole }, current)
        }
        return ([whole], current)   // saves kept coming: take everything as changed
    }

    /// The saves of other processes since the layer above last took them in
    /// (``takenVersion``; saves a commit of this process moved past included):
    /// the caller brings its objects up to date, then names what it could not
    /// (``keepConflicting(_:)``). Until then, what they changed counts as a conflict.
    func takeOthersSaves() throws -> [RedisCommitLog.Entry] {
        try checkOpen()
        let (entries, current) = try saves(since: takenVersion)
        let theirs = entries.filter { !isOwnToken($0.token) }
        // Conflicts until the caller settles them; until then, nothing moves (a
        // caller that fails half way gets the same saves again next time).
        for entry in theirs { othersChanges.merge(entry) }
        takingVersion = current
        return theirs
    }

    /// The version ``takeOthersSaves()`` read up to, until ``keepConflicting(_:)`` settles it.
    private var takingVersion: Int64?

    /// Whether saves were handed over by ``takeOthersSaves()`` and not settled yet.
    var isTakingOthersSaves: Bool { takingVersion != nil }

    /// After the layer above took in what ``takeOthersSaves()`` handed over:
    /// what other processes changed that it could not bring up to date replaces
    /// ``othersChanges`` (the rest is settled), and this process's view moves to
    /// the version they lead to, so a save may start from there.
    func keepConflicting(_ stale: [String: Set<[UInt8]>?]) {
        guard let taken = takingVersion else { return }
        takingVersion = nil
        var entry = RedisCommitLog.Entry(token: [])
        for (table, keys) in stale {
            if let keys { entry.touch(table, keys: keys, count: keys.count) } else { entry.touchWhole(table) }
        }
        othersChanges = entry
        takenVersion = taken
        // No commit ran since the take-in read the log (same thread), so this is at least
        // the last version known; lower only when the store was replaced, and taken in whole.
        knownVersion = taken
    }

    /// After the connection died with a save's reply: connects again, has the
    /// server close the old connection (`CLIENT KILL ID`: a save still waiting in
    /// its input is dropped, one already run stays), then looks for the save's
    /// token in the log. `true`: the save is in; `false`: it is not, and never
    /// will be. If that cannot be learnt, this throws; its token is among this
    /// process's own (``noteOwnToken(_:)``, before the send), so a later save
    /// that finds it in the log knows it as its own.
    private func committedDespiteLostReply(_ token: [UInt8], killing clientID: Int64?, on connection: RedisConnection) throws -> Bool {
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
        let entries = results[1].elements ?? []
        guard let position = entries.firstIndex(where: { $0.bytes.map { Array($0.prefix(16)) } == token }) else { return false }
        let version = try self.version(in: results[0])
        guard version >= Int64(position) else { return false }
        // Saves that came after this one are caught up with at the next save.
        knownVersion = version - Int64(position)
        return true
    }

    static func newToken() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
