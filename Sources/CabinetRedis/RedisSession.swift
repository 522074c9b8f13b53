import CabinetStorage
import Synchronization

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
    private let idleLock = Mutex(())
    private var idle: [RedisConnection] = []
    /// The node that last answered for the store (guarded by ``idleLock``).
    private var storeNode: (host: String, port: Int)?
    let readOnly: Bool
    var isClosed = false
    /// The store's version (its count of saves) as this process last knew it:
    /// a save that finds another number has missed other processes' saves.
    var knownVersion: Int64 = 0
    /// Tokens of saves whose reply was lost with the connection and whose fate
    /// could not be learnt then: if the log shows one later, it is this
    /// process's own save, not a conflict.
    private var unresolvedTokens: Set<[UInt8]> = []
    /// Called with each save of another process this process learnt of while
    /// saving (its changes did not overlap this save's).
    var othersSaved: ((RedisCommitLog.Entry) -> Void)?

    init(address: RedisAddress, connectTimeout: Duration, commandTimeout: Duration, readOnly: Bool) {
        self.address = address
        path = address.description
        keys = RedisKeys(store: address.store)
        self.connectTimeout = connectTimeout
        self.commandTimeout = commandTimeout
        self.readOnly = readOnly
    }

    /// Runs `body` with a connection no other thread uses meanwhile.
    func withConnection<R>(_ body: (RedisConnection) throws -> R) throws -> R {
        var taken: RedisConnection?
        var node: (host: String, port: Int)?
        idleLock.withLock { _ in taken = idle.popLast(); node = storeNode }
        // A new connection goes straight to the node the store's slot was last found on.
        let connection = taken ?? RedisConnection(address: address, node: node, connectTimeout: connectTimeout, commandTimeout: commandTimeout)
        defer { idleLock.withLock { _ in idle.append(connection); storeNode = connection.node } }
        return try body(connection)
    }

    /// Closes every idle connection (all of them, when no call is running).
    func disconnectAll() {
        idleLock.withLock { _ in
            for connection in idle { connection.disconnect() }
            idle = []
        }
    }

    /// An error reply of the server, as a ``CabinetError`` naming the store.
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
        try call(RedisCommand(arguments: [Array("GET".utf8), Array(keys.version.utf8)]), operation: "read the store's version").integer ?? 0
    }

    /// Commits the open transactions of `tables` as one `MULTI`/`EXEC`, under
    /// `WATCH` of the version key, together with `extra` commands (a table's
    /// removal). All or nothing: if it throws, nothing was written (or, when the
    /// connection died with the reply, the log showed the save is not there) and
    /// every table's transaction is rolled back; the layer above keeps its changes pending.
    func commit(_ tables: [RedisTable], extra: [RedisCommand] = [], logged: RedisCommitLog.Entry? = nil) throws {
        defer { for table in tables { table.endTransaction() } }
        try checkWritable()
        var entry = logged ?? RedisCommitLog.Entry(token: RedisSession.newToken())
        var body = [RedisCommand("MULTI")]
        body += extra
        for table in tables { table.appendCommit(to: &body, log: &entry) }
        let incrIndex = body.count
        body.append(RedisCommand(arguments: [Array("INCR".utf8), Array(keys.version.utf8)]))
        body.append(RedisCommand(arguments: [Array("LPUSH".utf8), Array(keys.log.utf8), entry.encoded]))
        body.append(RedisCommand(arguments: [Array("LTRIM".utf8), Array(keys.log.utf8), Array("0".utf8),
                                             Array(String(RedisCommitLog.capacity - 1).utf8)]))
        body.append(RedisCommand(arguments: [Array("PUBLISH".utf8), Array(keys.saves.utf8), Array(RedisSession.hex(entry.token).utf8)]))
        body.append(RedisCommand("EXEC"))
        try withConnection { connection in try commit(body, entry: entry, incrIndex: incrIndex, on: connection) }
    }

    /// The rounds of a commit, on one connection (its `WATCH` is the connection's).
    private func commit(_ body: [RedisCommand], entry: RedisCommitLog.Entry, incrIndex: Int, on connection: RedisConnection) throws {
        for _ in 0..<20 {
            let watched = try connection.send([RedisCommand(arguments: [Array("WATCH".utf8), Array(keys.version.utf8)]),
                                               RedisCommand(arguments: [Array("GET".utf8), Array(keys.version.utf8)])],
                                              operation: "save (watch the store's version)")
            if let message = watched.lazy.compactMap(\.errorMessage).first {
                throw serverError(message, operation: "save (watch the store's version)")
            }
            let current = watched[1].integer ?? 0
            if current != knownVersion {
                do {
                    try catchUp(to: current, with: entry, on: connection)
                } catch {
                    _ = try? connection.send([RedisCommand("UNWATCH")], operation: "save")
                    throw error
                }
            }
            let replies: [RedisReply]
            do {
                replies = try connection.send(body, operation: "save")
            } catch {
                // The reply is lost with the connection: the save may or may not be in.
                if try committedDespiteLostReply(entry.token, on: connection) { return }
                throw error
            }
            // A command refused while queueing (OOM under maxmemory, a wrong type) aborts the EXEC.
            if let refused = replies.dropLast().lazy.compactMap(\.errorMessage).first {
                throw serverError(refused, operation: "save (nothing was written)")
            }
            switch replies.last {
            case .array(let results)?:
                if let failed = results.lazy.compactMap(\.errorMessage).first {
                    // Only a key of the wrong type fails inside EXEC, and the tables' types are checked at open.
                    throw serverError(failed, operation: "save (a key of the store has the wrong type; run `cabinet verify`)")
                }
                knownVersion = results[incrIndex - 1].integer ?? knownVersion + 1
                return
            case .null?:
                continue   // another process saved between WATCH and EXEC: look at what it changed
            case .error(let message)?:
                throw serverError(message, operation: "save (nothing was written)")
            default:
                throw serverError("EXEC gave no reply", operation: "save")
            }
        }
        throw CabinetError.saveConflict(path: path, reason: "other processes saved 20 times while this save was being tried")
    }

    /// Learns what the saves since ``knownVersion`` changed; if none of it is
    /// what `mine` changes, this process's view moves to `current`; else throws
    /// ``CabinetError/saveConflict(path:reason:)``.
    private func catchUp(to current: Int64, with mine: RedisCommitLog.Entry, on connection: RedisConnection) throws {
        let missed = current - knownVersion
        guard missed > 0 else {
            throw CabinetError.saveConflict(path: path, reason: "the store's version went from \(knownVersion) back to \(current): it was replaced or flushed since this process read it")
        }
        guard missed <= Int64(RedisCommitLog.capacity) else {
            throw CabinetError.saveConflict(path: path, reason: "\(missed) saves of other processes came since this process read the store, more than the \(RedisCommitLog.capacity) its log keeps")
        }
        let reply = try connection.call(RedisCommand(arguments: [Array("LRANGE".utf8), Array(keys.log.utf8), Array("0".utf8), Array(String(missed - 1).utf8)]),
                                        operation: "save (read the store's log)")
        let items = reply.elements ?? []
        guard items.count == Int(missed) else {
            throw CabinetError.saveConflict(path: path, reason: "the store's log holds \(items.count) of the \(missed) saves since this process read it")
        }
        var theirs: [RedisCommitLog.Entry] = []
        for item in items {
            guard let bytes = item.bytes, let entry = RedisCommitLog.Entry(decoding: bytes) else {
                throw CabinetError.saveConflict(path: path, reason: "an entry of the store's log (\(keys.log)) does not decode, so what it changed is unknown")
            }
            if unresolvedTokens.contains(entry.token) { continue }   // this process's own save, whose reply was lost
            if let overlap = mine.overlap(with: entry) {
                throw CabinetError.saveConflict(path: path, reason: overlap)
            }
            theirs.append(entry)
        }
        knownVersion = current
        for entry in theirs.reversed() { othersSaved?(entry) }
    }

    /// After the connection died with a save's reply: reconnects and looks for
    /// the save's token in the log. `true`: the save is in. `false` never
    /// returns; if the log cannot be read the save's fate is unknown, its token
    /// is kept (a later save that finds it knows it as its own) and this throws.
    private func committedDespiteLostReply(_ token: [UInt8], on connection: RedisConnection) throws -> Bool {
        unresolvedTokens.insert(token)
        let reply = try connection.send([RedisCommand(arguments: [Array("GET".utf8), Array(keys.version.utf8)]),
                                         RedisCommand(arguments: [Array("LRANGE".utf8), Array(keys.log.utf8), Array("0".utf8), Array(String(RedisCommitLog.capacity - 1).utf8)])],
                                        operation: "save (find out whether it was written after the connection failed)")
        let entries = reply[1].elements ?? []
        guard let position = entries.firstIndex(where: { $0.bytes.map { Array($0.prefix(16)) } == token }) else {
            unresolvedTokens.remove(token)
            return false
        }
        unresolvedTokens.remove(token)
        knownVersion = (reply[0].integer ?? 0) - Int64(position)
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
