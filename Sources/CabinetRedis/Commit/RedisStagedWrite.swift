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
/// changes stay in its ``TableChanges`` as well, so whatever goes wrong
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
        /// The table's name, and its staging once sealed (``finish()``).
        let table: String
        let key: [UInt8]
        /// The store's version when the table was copied: the staging is the
        /// table as of then plus this save's changes.
        let copyVersion: Int64
        /// How many fields the staging holds if no one else touched it.
        let length: Int64
    }

    /// How long a staging lives if its process dies before the commit (renewed
    /// every 64 commands, and by the commit's first round; its `EXEC` makes the table permanent).
    static let lifetime = 3600
    /// Replies not read yet before the next command waits for the oldest.
    private static let outstandingLimit = 256
    private static let batch = 512

    let table: String
    /// The staging the changes go to, and its name once sealed: the last write
    /// of the stream renames it, so a server that lost any earlier write (a
    /// restart from an AOF written every second, a failover to a replica that
    /// was behind) lost the rename too (one connection's writes reach the AOF
    /// and the replicas in order), and the commit finds no sealed staging.
    let key: [UInt8], sealedKey: [UInt8]
    private let session: RedisSession
    private var connection: RedisConnection?
    private let copyVersion: Int64
    private var length: Int64
    /// The commands being filled. A key is in at most one of them: a change of a
    /// key changed before in this transaction sends both first, so the server
    /// applies the changes of each key in the order they were made.
    private var sets: RedisCommand, removals: RedisCommand
    /// The commands sent and not answered yet, oldest first (from ``outstandingStart``).
    private var outstanding: [Sent] = []
    private var outstandingStart = 0
    private var sentSinceRenewal = 0
    /// Whether the staging may hold no field now (an empty hash is no key, and
    /// an `HSET` makes it anew, without its lifetime).
    private var mayBeGone: Bool
    private(set) var failed = false
    /// Renamed over the table by a commit: nothing left to remove.
    private var renamed = false

    private init(table: String, key: [UInt8], sealedKey: [UInt8], session: RedisSession, connection: RedisConnection,
                 copyVersion: Int64, length: Int64) {
        self.table = table
        self.key = key
        self.sealedKey = sealedKey
        self.session = session
        self.connection = connection
        self.copyVersion = copyVersion
        self.length = length
        mayBeGone = length == 0
        sets = RedisCommand(arguments: [Array("HSET".utf8), key])
        removals = RedisCommand(arguments: [Array("HDEL".utf8), key])
    }

    /// No network here: a staging still held is left to expire.
    deinit {
        if let connection {
            connection.disconnect()
            session.giveBack(connection)
        }
    }

    /// Starts staging table `name` (its hash `table`) with the transaction's
    /// changes so far, unless the table holds more records than `pending`
    /// changes (then `nil`, and the caller may try again when the save has grown).
    /// Throws if the server refuses the script (too old for `COPY`: the caller stops trying).
    static func start(name: String, table: [UInt8], session: RedisSession, pending: TableChanges) throws -> RedisStagedWrite? {
        let token = session.keys.stagingPrefix + RedisSession.hex(RedisSession.newToken())
        let key = Array((token + ":" + name).utf8), sealedKey = Array((token + ".sealed:" + name).utf8)
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
            write = RedisStagedWrite(table: name, key: key, sealedKey: sealedKey, session: session, connection: connection,
                                     copyVersion: version, length: length)
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
                write.add(field, value, changedBefore: false)
            }
            return true
        }
        return write
    }

    /// Adds one change (`nil`: a removal) to the stream; `changedBefore`: the
    /// key had a change in this transaction already. A failure marks the
    /// staging failed and is not thrown: the commit sends the save the usual way.
    func add(_ field: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer?, changedBefore: Bool) {
        guard !failed else { return }
        if changedBefore { sendBoth() }
        if let value {
            sets.append(field); sets.append(value)
            if sets.argumentCount >= 2 + 2 * RedisStagedWrite.batch { send(.set) }
        } else {
            removals.append(field)
            if removals.argumentCount >= 2 + RedisStagedWrite.batch { send(.removal) }
        }
    }

    /// What a command sent says in its reply: fields added, fields removed, its
    /// lifetime renewed (1: the staging is there), or sealed (`OK`).
    private enum Sent {
        case set, removal, renewal, seal
    }

    private func sendBoth() {
        send(.set)
        send(.removal)
    }

    private func send(_ kind: Sent) {
        guard !failed, let connection else { return }
        let command = kind == .set ? sets : removals
        guard command.argumentCount > 2 else { return }
        if kind == .set {
            sets = RedisCommand(arguments: [Array("HSET".utf8), key])
        } else {
            removals = RedisCommand(arguments: [Array("HDEL".utf8), key])
        }
        do {
            try write(command, kind, on: connection)
            sentSinceRenewal += 1
            if kind == .removal { mayBeGone = true }
            // An HSET that may have made the staging anew gives it its lifetime at once; else every 64 commands.
            if (kind == .set && mayBeGone) || sentSinceRenewal >= 64 {
                try write(RedisCommand(arguments: [Array("EXPIRE".utf8), key, Array(String(RedisStagedWrite.lifetime).utf8)]),
                          .renewal, on: connection)
                sentSinceRenewal = 0
                mayBeGone = kind == .removal
            }
            while outstanding.count - outstandingStart > RedisStagedWrite.outstandingLimit { try readOne() }
        } catch {
            fail()
        }
    }

    private func write(_ command: RedisCommand, _ kind: Sent, on connection: RedisConnection) throws {
        try connection.write(command, operation: "stage a big save")
        outstanding.append(kind)
    }

    /// Reads the oldest reply: an `HSET`'s count of new fields, an `HDEL`'s of removed ones.
    private func readOne() throws {
        guard let connection else { return }
        let kind = outstanding[outstandingStart]
        outstandingStart += 1
        if outstandingStart == outstanding.count { outstanding.removeAll(keepingCapacity: true); outstandingStart = 0 }
        let reply = try connection.awaitReply(operation: "stage a big save")
        if kind == .seal {
            guard case .status("OK") = reply else { throw StagingFailed() }
            return
        }
        guard reply.errorMessage == nil, let count = reply.integer else { throw StagingFailed() }
        switch kind {
        case .set: length += count
        case .removal: length -= count
        case .renewal, .seal: if count != 1 { throw StagingFailed() }   // the staging is gone: expired or removed
        }
    }

    private struct StagingFailed: Error {}

    private func fail() {
        failed = true
        connection?.disconnect()   // replies may be on their way: the connection is not reusable
    }

    /// Sends what is left, seals the staging and reads every reply: the sealed
    /// staging, if all of it went in (an empty one is no key: nothing to rename).
    func finish() -> Finished? {
        sendBoth()
        guard !failed, let connection else { return nil }
        do {
            try write(RedisCommand(arguments: [Array("RENAME".utf8), key, sealedKey]), .seal, on: connection)
            while outstandingStart < outstanding.count { try readOne() }
        } catch {
            fail()
            return nil
        }
        return length > 0 ? Finished(table: table, key: sealedKey, copyVersion: copyVersion, length: length) : nil
    }

    /// After the commit renamed the staging over the table.
    func markRenamed() { renamed = true }

    /// Removes the staging (unless it was renamed into place) and gives the connection back.
    func discard() {
        guard let connection else { return }
        self.connection = nil
        if failed {
            connection.disconnect()   // the staging expires by itself
        } else if !renamed {
            do {
                for _ in outstandingStart..<outstanding.count { _ = try connection.awaitReply(operation: "remove a big save's staging") }
                _ = try connection.send([RedisCommand(arguments: [Array("UNLINK".utf8), key, sealedKey])], operation: "remove a big save's staging")
            } catch {
                connection.disconnect()   // the staging expires by itself
            }
        }
        outstanding = []
        outstandingStart = 0
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
