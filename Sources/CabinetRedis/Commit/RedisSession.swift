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
    var othersChanges = RedisCommitLog.Entry(token: [])
    /// Tokens of this process's recent saves, noted before each is sent
    /// (guarded by ``idleLock``): a save announced, or found in the log, with one
    /// of them is this process's own, a save whose reply was lost included. The
    /// last 1,024 are kept, more than the log's 1,000 entries.
    private var ownTokens: Set<[UInt8]> = []
    /// What the batch being committed adds to the catalog: the next commit
    /// merges it into the catalog inside its `MULTI` (set and cleared by the backend's commit).
    var catalogAdditions: [String: UInt8?] = [:]
    /// How the commit under way confirms its flush (``CommitDurability/flushed``);
    /// `nil` for a commit at the server's own level (set and cleared by the backend's commit).
    var flush: FlushConfirmation?
    /// Whether the server knows `WAITAOF` (Redis 7.2 and later), once asked.
    var knowsWaitAOF: Bool?
    /// Set by a commit whose reply was lost with its connection but which the log shows is in.
    var commitReplyLost = false
    /// The catalog's bytes as the last commit that added to it wrote them.
    var committedCatalog: [UInt8]?
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
        try version(in: call(RedisCommand("GET", keys.version), operation: "read the store's version"))
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
            guard let items = results[1].elements else {
                throw RedisReply.unexpected(results[1], to: "LRANGE of the store's log", wanted: "a list", at: path)
            }
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

    static func newToken() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
