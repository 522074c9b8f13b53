#if canImport(Glibc)
import Glibc
#endif
import CabinetStorage
import CHiredis

/// One synchronous connection to the server that holds a store, through hiredis.
///
/// Commands go out pipelined (``send(_:operation:)``: all written, then all
/// replies read). A connection that fails (refused, dropped, timed out) is
/// closed and the error thrown; the next call connects afresh, authenticates
/// and selects the database again. A cluster node that does not own the
/// store's slot answers `MOVED`: the connection moves to the node named and
/// sends the commands again (nothing of them ran), so the store follows its
/// slot through topology changes. Not thread-safe: one backend, one thread at a time.
final class RedisConnection {
    let address: RedisAddress
    /// Where errors say the failure happened: the store, without credentials.
    let location: String
    var connectTimeout: Duration
    var commandTimeout: Duration
    /// The node the store's slot is on, once a `MOVED` named it (a cluster); else the address's.
    private(set) var node: (host: String, port: Int)
    private var context: UnsafeMutablePointer<redisContext>?
    /// The server's ID for this connection (`CLIENT ID`), so that another
    /// connection can close it (`CLIENT KILL ID`) after its reply was lost.
    private(set) var clientID: Int64?

    /// A connection to `node` (the address's server unless a redirection named another).
    init(address: RedisAddress, node: (host: String, port: Int)? = nil, connectTimeout: Duration, commandTimeout: Duration) {
        self.address = address
        self.location = address.description
        self.connectTimeout = connectTimeout
        self.commandTimeout = commandTimeout
        self.node = node ?? (address.host, address.port)
    }

    deinit { disconnect() }

    var isConnected: Bool { context != nil }

    /// Closes the socket; the next command connects again.
    func disconnect() {
        if let context { redisFree(context) }
        context = nil
        clientID = nil
    }

    /// Sends one command and returns its reply; an error reply is thrown.
    @discardableResult
    func call(_ command: RedisCommand, operation: String? = nil) throws -> RedisReply {
        let reply = try send([command], operation: operation ?? command.name)[0]
        if let message = reply.errorMessage { throw serverError(message, operation: operation ?? command.name) }
        return reply
    }

    /// Thrown by ``send(_:operation:transaction:)`` for a transaction's commands
    /// that a cluster node redirected: nothing of them ran (the node aborted the
    /// `EXEC`, and with it the `WATCH`), and the connection now points at the
    /// right node; the caller starts its transaction again from its `WATCH`.
    struct Redirected: Error {}

    /// Sends `commands` in one pipeline and returns their replies, error replies
    /// included (the caller decides which are failures). Throws if the
    /// connection fails; then none of the replies is known.
    ///
    /// A `MOVED` reply sends the commands again to the node it names, and a
    /// slot in migration (`ASK`, `TRYAGAIN`) and a server loading its data set
    /// after a restart (`LOADING`) are waited out, unless `transaction`
    /// (a `WATCH` or `MULTI` among them): then ``Redirected`` is thrown instead,
    /// since sending them again would run them without their `WATCH`.
    func send(_ commands: [RedisCommand], operation: String, transaction: Bool = false) throws -> [RedisReply] {
        var redirections = 0
        // ASK, TRYAGAIN and LOADING are waited out together for one command timeout at most.
        var waited: Duration = .zero
        while true {
            let replies = try exchange(commands, operation: operation)
            if let moved = replies.lazy.compactMap(\.errorMessage).first(where: { $0.hasPrefix("MOVED ") }) {
                // The slot lives on another node: go there and send it all again.
                redirections += 1
                guard redirections <= 5, let target = RedisConnection.redirectionTarget(moved, currentHost: node.host) else {
                    throw serverError(moved, operation: operation)
                }
                disconnect()
                node = target
                if transaction { throw Redirected() }
                continue
            }
            if replies.contains(where: { $0.errorMessage?.hasPrefix("ASK ") == true || $0.errorMessage?.hasPrefix("TRYAGAIN") == true }) {
                // The slot is being moved between nodes: wait for the move to finish (then MOVED says where).
                guard waited < commandTimeout else {
                    throw serverError("the store's cluster slot stayed in migration for \(waited)", operation: operation)
                }
                usleep(50_000)
                waited += .milliseconds(50)
                if transaction { throw Redirected() }
                continue
            }
            if replies.contains(where: { $0.errorMessage?.hasPrefix("LOADING") == true }) {
                // A server started again reads its data set back before it answers:
                // nothing of these ran; wait until it has, then send them again. A
                // server that answers PING but these with LOADING still counts the time.
                try waitWhileLoading(operation: operation, waited: &waited)
                if transaction { throw Redirected() }
                continue
            }
            return replies
        }
    }

    /// Waits, a `PING` every 50 ms (at least one wait), while the server loads
    /// its data set (after a restart), until `waited` reaches the command timeout.
    private func waitWhileLoading(operation: String, waited: inout Duration) throws {
        repeat {
            guard waited < commandTimeout else {
                throw serverError("the server was still loading its data set after \(waited) (it answered LOADING); try again when it has", operation: operation)
            }
            usleep(50_000)
            waited += .milliseconds(50)
        } while try exchange([RedisCommand("PING")], operation: operation)[0].errorMessage?.hasPrefix("LOADING") == true
    }

    /// `MOVED 3999 127.0.0.1:6381` → the host and port.
    static func redirectionTarget(_ message: String, currentHost: String) -> (host: String, port: Int)? {
        let words = message.split(separator: " ")
        guard words.count == 3, let colon = words[2].lastIndex(of: ":"),
              let port = Int(words[2][words[2].index(after: colon)...]), (1...65535).contains(port) else { return nil }
        var host = String(words[2][..<colon])
        if host.isEmpty { host = currentHost }   // Redis 7 leaves out the host when it is the one asked
        return (host, port)
    }

    /// A cursor loop (`HSCAN`, `ZSCAN`) with the next command sent ahead: as
    /// soon as a reply names the next cursor (`next` gives the command, the
    /// cursor and how many elements the reply holds, or `nil` at the end), that
    /// command goes out, and `body` handles the reply while the server finds
    /// the next batch. `body` returns false to stop. The first command follows
    /// redirections as ``send(_:operation:transaction:)`` does. A server that
    /// never gets to the end throws, as `bound` says (``RedisScanBound``).
    ///
    /// A redirection or a server loading its data set in the middle of the loop
    /// (a slot moved, a node restarted) starts it again from `first`, through
    /// ``send(_:operation:transaction:)``: `body` then sees replies it saw
    /// before, and must pass over what it already gave (cursors are not valid
    /// across nodes).
    func cursorLoop(first: RedisCommand, bound start: RedisScanBound, operation: String,
                    next: (RedisReply) throws -> (command: RedisCommand, cursor: [UInt8], returned: Int)?,
                    body: (RedisReply) throws -> Bool) throws {
        var reply = try send([first], operation: operation)[0]
        var restarts = 0
        var bound = start
        while true {
            if let message = reply.errorMessage {
                let moving = ["MOVED ", "ASK ", "TRYAGAIN", "LOADING"].contains { message.hasPrefix($0) }
                guard moving && restarts < 5 else { throw serverError(message, operation: operation) }
                restarts += 1
                bound = start   // cursors start again
                reply = try send([first], operation: operation)[0]
                continue
            }
            let current = reply
            let following = try next(reply)
            if let following { try bound.advance(to: following.cursor, returned: following.returned) }
            guard try sendAhead(following?.command, operation: operation, then: { try body(current) }) else { return }
            reply = try readReply(operation: operation)
        }
    }

    /// One step of a loop that keeps a command ahead: sends `following` (if
    /// any), then runs `body` on the reply in hand. Returns whether to read the
    /// next reply: `false` at the end, or when `body` stops (the reply sent
    /// ahead is then read and dropped, so the connection can be used again; if
    /// that fails, the connection is closed, and the caller had all it wanted).
    private func sendAhead(_ following: RedisCommand?, operation: String, then body: () throws -> Bool) throws -> Bool {
        if let following {
            let context = try connected(operation: operation)
            try append(following, to: context, operation: operation)
            try flush(context, operation: operation)
        }
        let goOn: Bool
        do {
            goOn = try body()
        } catch {
            if following != nil { disconnect() }   // its reply is on the way: the connection is not reusable
            throw error
        }
        guard following != nil else { return false }
        if !goOn { _ = try? readReply(operation: operation) }
        return goOn
    }

    /// Commands made one after another (`make(i)`: the `i`th, `nil` when there
    /// are no more), each sent before the reply to the one before it goes to
    /// `body` (with its `i`), which returns false to stop: the server works on
    /// the next while this process handles the last. The first command follows
    /// redirections as ``send(_:operation:transaction:)`` does; an error reply
    /// after it throws, ``Redirected`` for a slot that moved or a server
    /// restarting meanwhile (the caller starts again from where it was; replies
    /// here say nothing of what they answer, so none is read again in its place).
    func pipeline(operation: String, make: (Int) throws -> RedisCommand?, body: (Int, RedisReply) throws -> Bool) throws {
        guard let first = try make(0) else { return }
        var reply = try send([first], operation: operation)[0]
        var index = 0
        while true {
            let (current, position) = (reply, index)
            guard try sendAhead(try make(index + 1), operation: operation, then: {
                if let message = current.errorMessage {
                    if ["MOVED ", "ASK ", "TRYAGAIN", "LOADING"].contains(where: message.hasPrefix) { throw Redirected() }
                    throw serverError(message, operation: operation)
                }
                return try body(position, current)
            }) else { return }
            reply = try readReply(operation: operation)
            index += 1
        }
    }

    /// Sends `command` without waiting for its reply, which ``awaitReply(operation:)``
    /// reads later, in order: a stream of commands the server runs while this
    /// process makes the next (``RedisStagedWrite``). Nothing is redirected here;
    /// the caller reads a `MOVED` or `ASK` reply as a failure.
    func write(_ command: RedisCommand, operation: String) throws {
        let context = try connected(operation: operation)
        try append(command, to: context, operation: operation)
        try flush(context, operation: operation)
    }

    /// The reply to the oldest command ``write(_:operation:)`` sent and no reply was read for.
    func awaitReply(operation: String) throws -> RedisReply {
        try readReply(operation: operation)
    }

    private func append(_ command: RedisCommand, to context: UnsafeMutablePointer<redisContext>, operation: String) throws {
        let status = command.withArgv { count, argv, lengths in redisAppendCommandArgv(context, count, argv, lengths) }
        if status != REDIS_OK { throw connectionFailure(operation: operation) }
    }

    /// Subscribes this connection to `channel` (it then only waits for messages, ``nextMessage(waiting:)``).
    func subscribe(to channel: String, operation: String) throws {
        let reply = try exchange([RedisCommand("SUBSCRIBE", channel)], operation: operation)[0]
        if let message = reply.errorMessage { throw serverError(message, operation: operation) }
    }

    /// The payload of the next message published to the channel this connection
    /// subscribed to, or `nil` if none came within `milliseconds` (a reply that is
    /// not a message, as the subscription's own confirmation, is passed over).
    func nextMessage(waiting milliseconds: Int32, operation: String) throws -> [UInt8]? {
        guard let context else { throw connectionFailure(operation: operation) }
        var raw: UnsafeMutableRawPointer?
        // A message hiredis has read already (several can come in one read) is not in the socket.
        guard redisGetReplyFromReader(context, &raw) == REDIS_OK else { throw connectionFailure(operation: operation) }
        if raw == nil {
            var waiting = pollfd(fd: context.pointee.fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&waiting, 1, milliseconds)
            if ready == 0 || (ready < 0 && errno == EINTR) { return nil }
            guard ready > 0, redisGetReply(context, &raw) == REDIS_OK, raw != nil else { throw connectionFailure(operation: operation) }
        }
        guard let raw else { return nil }
        defer { freeReplyObject(raw) }
        // ["message", channel, payload]
        guard case .strings(let parts) = RedisReply(raw.assumingMemoryBound(to: redisReply.self)), parts.count == 3,
              parts[0] == Array("message".utf8) else { return nil }
        return parts[2]
    }

    /// Writes everything hiredis holds for the server.
    private func flush(_ context: UnsafeMutablePointer<redisContext>, operation: String) throws {
        var done: Int32 = 0
        while done == 0 {
            guard redisBufferWrite(context, &done) == REDIS_OK else { throw connectionFailure(operation: operation) }
        }
    }

    private func readReply(operation: String) throws -> RedisReply {
        guard let context else { throw connectionFailure(operation: operation) }
        var raw: UnsafeMutableRawPointer?
        guard redisGetReply(context, &raw) == REDIS_OK, let raw else { throw connectionFailure(operation: operation) }
        defer { freeReplyObject(raw) }
        return RedisReply(raw.assumingMemoryBound(to: redisReply.self))
    }

    private func exchange(_ commands: [RedisCommand], operation: String) throws -> [RedisReply] {
        let context = try connected(operation: operation)
        for (index, command) in commands.enumerated() {
            try append(command, to: context, operation: operation)
            // A big pipeline (a save of a million records) goes out as it is
            // formatted, so the server reads while this process formats the rest,
            // and hiredis's buffer stays small. The server never stops reading
            // for want of our reading its replies (it buffers them), so no deadlock.
            if index % 32 == 31 { try flush(context, operation: operation) }
        }
        var replies: [RedisReply] = []
        replies.reserveCapacity(commands.count)
        for _ in commands { replies.append(try readReply(operation: operation)) }
        return replies
    }

    /// The open connection, or a new one: connected, authenticated, on its database.
    private func connected(operation: String) throws -> UnsafeMutablePointer<redisContext> {
        if let context { return context }
        guard let made = redisConnectWithTimeout(node.host, Int32(node.port), RedisConnection.timeval(connectTimeout)) else {
            throw CabinetError.backendFailure(RecordLocation(file: location), operation: operation,
                                              underlying: .init(domain: .redis, code: REDIS_ERR_OOM, message: "hiredis could not allocate a connection"))
        }
        context = made
        if made.pointee.err != 0 {
            let error = connectionFailure(operation: "connect to \(node.host):\(node.port)")
            throw error
        }
        _ = redisSetTimeout(made, RedisConnection.timeval(commandTimeout))
        var setup: [RedisCommand] = []
        if let password = address.password {
            setup.append(address.username.map { RedisCommand("AUTH", $0, password) } ?? RedisCommand("AUTH", password))
        }
        if address.database != 0 { setup.append(RedisCommand("SELECT", String(address.database))) }
        setup.append(RedisCommand("CLIENT", "ID"))
        let replies = try exchange(setup, operation: operation)
        // Only an integer: the ID goes into a CLIENT KILL after a lost reply.
        if case .integer(let id)? = replies.last { clientID = id }
        for (command, reply) in zip(setup, replies) where command.name != "CLIENT" {
            if let message = reply.errorMessage {
                disconnect()
                // AUTH's words are never shown: only the command's name and what the server said.
                throw serverError(message, operation: command.name == "AUTH" ? "authenticate" : "select database \(address.database)")
            }
        }
        return made
    }

    /// A failure of the connection itself: it is closed, so the next call reconnects.
    private func connectionFailure(operation: String) -> CabinetError {
        var code: Int32 = REDIS_ERR_OTHER
        var message = "the connection failed"
        if let context {
            code = context.pointee.err
            message = withUnsafeBytes(of: context.pointee.errstr) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
        }
        disconnect()
        return CabinetError.backendFailure(RecordLocation(file: location), operation: operation,
                                           underlying: .init(domain: .redis, code: code, message: message + " (server \(node.host):\(node.port))"))
    }

    /// An error reply of the server, as a `CabinetError`.
    func serverError(_ message: String, operation: String) -> CabinetError {
        RedisConnection.serverError(message, operation: operation, location: location)
    }

    static func serverError(_ message: String, operation: String, location: String) -> CabinetError {
        CabinetError.backendFailure(RecordLocation(file: location), operation: operation,
                                    underlying: .init(domain: .redis, code: 0, message: message))
    }

    private static func timeval(_ duration: Duration) -> Glibc.timeval {
        let (seconds, attoseconds) = duration.components
        return Glibc.timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
    }
}
