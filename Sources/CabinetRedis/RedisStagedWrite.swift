import CabinetStorage

/// A big save's changes to one table, sent to the server while the save is
/// still being made, into a key of their own (the table's *staging*,
/// `{store}/staging/TOKEN:NAME`) that the commit renames over the table.
///
/// Why: inside `MULTI` the server only queues a save's commands and runs them
/// all at the `EXEC`, after the client has encoded and sent the last of them,
/// so a save of a million records took the client's time plus the server's.
/// Written outside the transaction, the records go in while the client
/// encodes the next ones (docs/FORMAT.md, "Big saves"). The transaction's
/// changes stay in its ``RedisPendingChanges`` as well, so whatever goes wrong
/// here (a server too old for `COPY`, a dropped connection, a save of another
/// process in between) costs only the time: the commit then sends them inside
/// its `MULTI` as it always did, and removes the staging.
///
/// All or nothing still: the staging starts as a copy of the table made in the
/// same script that reads the store's version, and the commit renames it only
/// if the version is still that one and the staging holds as many fields as
/// this process put there, both under its `WATCH` (``RedisSession``). Staging
/// is tried only when the table is small beside the save (`COPY` is as costly
/// as the table is big): a first save of a class, an import.
final class RedisStagedWrite {
    /// What the commit needs of a staging whose every command succeeded.
    struct Finished {
        let key: [UInt8]
        /// The store's version when the table was copied: the staging is the
        /// table as of then plus this save's changes.
        let copyVersion: Int64
        /// How many fields the staging holds if no one else touched it.
        let length: Int64
    }

    /// How long a staging lives if its process dies before the commit (each
    /// batch renews it; the commit's first round makes it permanent, just before it is renamed).
    static let lifetime = 3600
    /// Replies not read yet before the next command waits for the oldest.
    private static let outstandingLimit = 256
    private static let batch = 512

    let key: [UInt8]
    private let session: RedisSession
    private var connection: RedisConnection?
    private let copyVersion: Int64
    private var length: Int64
    /// The command being filled: `HSET` or `HDEL` of ``key``. Switching between
    /// the two sends it, so the server applies every change in the order it was made.
    private var current: RedisCommand
    private var currentKind = Sent.set
    /// The commands sent and not answered yet, oldest first (from ``outstandingStart``).
    private var outstanding: [Sent] = []
    private var outstandingStart = 0
    private var sentSinceRenewal = 0
    private(set) var failed = false

    private init(key: [UInt8], session: RedisSession, connection: RedisConnection, copyVersion: Int64, length: Int64) {
        self.key = key
        self.session = session
        self.connection = connection
        self.copyVersion = copyVersion
        self.length = length
        current = RedisCommand(arguments: [Array("HSET".utf8), key])
    }

    deinit { discard() }

    /// Starts staging table `name` (its hash `table`) with the transaction's
    /// changes so far, unless the table holds more records than `pending`
    /// changes (then `nil`, and the caller may try again when the save has grown).
    /// Throws if the server refuses the script (too old for `COPY`: the caller stops trying).
    static func start(name: String, table: [UInt8], session: RedisSession, pending: RedisPendingChanges) throws -> RedisStagedWrite? {
        let key = Array((session.keys.stagingPrefix + RedisSession.hex(RedisSession.newToken()) + ":" + name).utf8)
        var script = RedisCommand(arguments: [Array("EVAL".utf8), Array(startScript.utf8), Array("3".utf8),
                                              table, key, Array(session.keys.version.utf8)])
        script.append(String(lifetime))
        script.append(String(pending.count))
        // The first sets go with the script, so the staging never exists without its lifetime.
        // (A transaction's changes are one per key, so their order does not matter.)
        var firstSets = 0
        pending.forEach { field, value in
            guard let value else { return true }
            script.append(field); script.append(value)
            firstSets += 1
            return firstSets < batch
        }
        let connection = session.takeConnection()
        let write: RedisStagedWrite
        do {
            let reply = try connection.send([script], operation: "stage a big save")[0]
            if let message = reply.errorMessage { throw session.serverError(message, operation: "stage a big save") }
            if case .null = reply {   // the table is the bigger: not now
                session.giveBack(connection)
                return nil
            }
            guard let parts = reply.elements, parts.count == 2, let length = parts[1].integer else {
                throw session.serverError("the staging script gave an unexpected reply", operation: "stage a big save")
            }
            var version: Int64 = 0
            if case .null = parts[0] {} else {
                guard let value = parts[0].integer, value >= 0 else {
                    throw session.serverError("the store's version is not a count of saves", operation: "stage a big save")
                }
                version = value
            }
            write = RedisStagedWrite(key: key, session: session, connection: connection, copyVersion: version, length: length)
        } catch {
            connection.disconnect()
            session.giveBack(connection)
            throw error
        }
        var skipped = 0
        pending.forEach { field, value in
            if value != nil && skipped < firstSets {
                skipped += 1
            } else {
                write.add(field, value)
            }
            return true
        }
        return write
    }

    /// Adds one change (`nil`: a removal) to the stream. A failure marks the
    /// staging failed and is not thrown: the commit sends the save the usual way.
    func add(_ field: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer?) {
        guard !failed else { return }
        let kind: Sent = value != nil ? .set : .removal
        if kind != currentKind || current.argumentCount >= 2 + 2 * RedisStagedWrite.batch {
            send()
            currentKind = kind
            current = RedisCommand(arguments: [Array((kind == .set ? "HSET" : "HDEL").utf8), key])
        }
        current.append(field)
        if let value { current.append(value) }
    }

    /// What a command sent says in its reply: fields added, fields removed, or nothing of them.
    private enum Sent {
        case set, removal, renewal
    }

    private func send() {
        guard !failed, current.argumentCount > 2, let connection else { return }
        do {
            try connection.write(current, operation: "stage a big save")
            outstanding.append(currentKind)
            current = RedisCommand(arguments: [Array((currentKind == .set ? "HSET" : "HDEL").utf8), key])
            sentSinceRenewal += 1
            if sentSinceRenewal >= 64 {
                try connection.write(RedisCommand(arguments: [Array("EXPIRE".utf8), key, Array(String(RedisStagedWrite.lifetime).utf8)]),
                                     operation: "stage a big save")
                outstanding.append(.renewal)
                sentSinceRenewal = 0
            }
            while outstanding.count - outstandingStart > RedisStagedWrite.outstandingLimit { try readOne() }
        } catch {
            fail()
        }
    }

    /// Reads the oldest reply: an `HSET`'s count of new fields, an `HDEL`'s of removed ones.
    private func readOne() throws {
        guard let connection else { return }
        let kind = outstanding[outstandingStart]
        outstandingStart += 1
        if outstandingStart == outstanding.count { outstanding.removeAll(keepingCapacity: true); outstandingStart = 0 }
        let reply = try connection.awaitReply(operation: "stage a big save")
        guard reply.errorMessage == nil, let count = reply.integer else { throw StagingFailed() }
        switch kind {
        case .set: length += count
        case .removal: length -= count
        case .renewal: if count != 1 { throw StagingFailed() }   // the staging is gone: expired or removed
        }
    }

    private struct StagingFailed: Error {}

    private func fail() {
        failed = true
        connection?.disconnect()   // replies may be on their way: the connection is not reusable
    }

    /// Sends what is left and reads every reply: the staging, if all of it went
    /// in and it is not empty (an empty hash is no key, so nothing to rename).
    func finish() -> Finished? {
        send()
        guard !failed else { return nil }
        do {
            while outstandingStart < outstanding.count { try readOne() }
        } catch {
            fail()
            return nil
        }
        return length > 0 ? Finished(key: key, copyVersion: copyVersion, length: length) : nil
    }

    /// Removes the staging (unless it was renamed into place) and gives the connection back.
    func discard() {
        guard let connection else { return }
        self.connection = nil
        if failed {
            connection.disconnect()   // the staging expires by itself
        } else {
            do {
                for _ in outstandingStart..<outstanding.count { _ = try connection.awaitReply(operation: "remove a big save's staging") }
                _ = try connection.send([RedisCommand(arguments: [Array("UNLINK".utf8), key])], operation: "remove a big save's staging")
            } catch {
                connection.disconnect()   // the staging expires by itself
            }
        }
        session.giveBack(connection)
    }

    /// `KEYS`: the table, the staging, the version. `ARGV`: the staging's
    /// lifetime, the most records the table may hold, then field/value pairs.
    /// Unless the table is bigger than that, copies it (or starts empty), sets
    /// the pairs, gives the staging its lifetime and returns the store's
    /// version and the staging's length, read in the same atomic step as the copy.
    static let startScript = """
        if redis.call('HLEN', KEYS[1]) > tonumber(ARGV[2]) then return false end
        if redis.call('EXISTS', KEYS[1]) == 1 then
            redis.call('COPY', KEYS[1], KEYS[2], 'REPLACE')
        else
            redis.call('DEL', KEYS[2])
        end
        if #ARGV > 2 then redis.call('HSET', KEYS[2], unpack(ARGV, 3)) end
        redis.call('EXPIRE', KEYS[2], ARGV[1])
        return {redis.call('GET', KEYS[3]), redis.call('HLEN', KEYS[2])}
        """
}
