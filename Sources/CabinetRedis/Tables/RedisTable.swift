import CabinetStorage

/// One table of a Redis store: a hash, field = the record's key, value = its
/// bytes (docs/FORMAT.md, "Redis").
///
/// A transaction keeps its changes in memory, where this table's reads see
/// them, and the backend's commit sends those of every table that has one
/// in one `MULTI`/`EXEC` (`GroupCommittingTable`): a save across several
/// classes is all or nothing on the server, with no journal.
class RedisTable: GroupCommittingTable {
    let session: RedisSession
    let name: String
    let path: String
    let key: [UInt8]
    /// The open transaction's changes: key → new value, or a removal. `nil` outside a transaction.
    private(set) var pending: TableChanges?
    /// Set by ``clear()`` inside a transaction: the records on the server are gone at the commit.
    private(set) var pendingClear = false
    /// A big transaction's changes on their way to the server (``RedisStagedWrite``).
    private var staged: RedisStagedWrite?
    /// The count of changes at which the transaction next tries to stage them.
    private var nextStagingAttempt: Int
    private var isClosed = false

    init(session: RedisSession, name: String, path: String) {
        self.session = session
        self.name = name
        self.path = path
        key = Array(session.keys.table(name).utf8)
        nextStagingAttempt = session.stagingThreshold
    }

    /// After the backend closed or its contents were replaced: every call throws.
    func close() {
        isClosed = true
        pending = nil
        dropStaging()
    }

    func checkOpen() throws {
        if isClosed { throw CabinetError.storeClosed(path: path) }
        try session.checkOpen()
    }

    var inTransaction: Bool { pending != nil }

    /// The pending change of `key` in the open transaction: `.some(nil)` for a removal, `nil` if none.
    func pendingValue(_ key: [UInt8]) -> [UInt8]?? {
        key.withUnsafeBytes { pendingValue($0) { $0.map(Array.init) } }
    }

    /// Calls `body` with the pending change of `key` (its new value, or `nil`
    /// for a removal) and returns what it returns; `nil` if `key` has none.
    func pendingValue<R>(_ key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R? {
        guard let pending else { return nil }
        if let result = try pending.withChange(of: key, body) { return result }
        return pendingClear ? try body(nil) : nil
    }

    /// Whether the open transaction changed `key` (or cleared the table).
    func isPending(_ key: UnsafeRawBufferPointer) -> Bool {
        guard let pending else { return false }
        return pendingClear || pending.contains(key)
    }

    func command(_ words: String..., key: [UInt8]? = nil, arguments: [[UInt8]] = []) -> RedisCommand {
        var command = RedisCommand(arguments: words.map { Array($0.utf8) })
        command.append(key ?? self.key)
        for argument in arguments { command.append(argument) }
        return command
    }

    // MARK: StorageTable

    /// `HLEN`, and the open transaction's changes as they will count after the
    /// commit; a failure (or a reply that is not a count) throws.
    var recordCount: Int {
        get throws {
            try checkOpen()
            var count = pendingClear ? 0 : try RedisReply.count(try session.call(command("HLEN"), operation: "count records"),
                                                                  of: "HLEN", at: path)
            guard let pending, !pending.isEmpty else { return count }
            let entries = pending.entries
            let exists = pendingClear ? entries.map { _ in false }
                : try session.callAll(entries.map { command("HEXISTS", arguments: [$0.key]) }, operation: "count records").map {
                    try RedisReply.count($0, of: "HEXISTS", at: path) == 1
                }
            guard exists.count == entries.count else {
                throw CabinetError.malformedRecord(RecordLocation(file: path), reason: "the server gave \(exists.count) replies to \(entries.count) HEXISTS")
            }
            for ((_, value), had) in zip(entries, exists) {
                let has = value != nil
                if had && !has { count -= 1 }
                if !had && has { count += 1 }
            }
            return count
        }
    }

    /// What Redis says the table's keys take in its memory (`MEMORY USAGE`, sampled).
    var byteCount: UInt64 {
        get throws {
            try checkOpen()
            return try memoryUsage(of: [key])
        }
    }

    /// `MEMORY USAGE` of `keys`, added up (a key that is not there takes nothing).
    func memoryUsage(of keys: [[UInt8]]) throws -> UInt64 {
        let replies = try session.callAll(keys.map { RedisCommand("MEMORY", "USAGE", bytes: $0) }, operation: "measure the table")
        return try replies.reduce(0) { total, reply in
            if case .null = reply { return total }
            return total + UInt64(try RedisReply.count(reply, of: "MEMORY USAGE", at: path))
        }
    }

    func withValue<R>(forKey key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try checkOpen()
        if let change = try pendingValue(key, { value in try value.map(body) }) { return change }
        let reply = try session.call(command("HGET", arguments: [Array(key)]), operation: "read")
        guard let value = try RedisReply.optionalString(reply, of: "HGET", at: path) else { return nil }
        return try value.withUnsafeBytes(body)
    }

    /// `HMGET`s of up to 1,024 fields each, pipelined: one round trip for all
    /// of them; the open transaction's own changes answer for their keys.
    func withValues(forKeys keys: [[UInt8]], _ body: (Int, UnsafeRawBufferPointer?) throws -> Void) throws {
        try checkOpen()
        let asked = keys.indices.filter { index in !keys[index].withUnsafeBytes { isPending($0) } }
        var commands: [RedisCommand] = []
        var start = 0
        while start < asked.count {
            let end = min(start + 1024, asked.count)
            commands.append(command("HMGET", arguments: asked[start..<end].map { keys[$0] }))
            start = end
        }
        let replies = commands.isEmpty ? [] : try session.callAll(commands, operation: "read")
        let fetched = try replies.map { reply in
            guard let strings = reply.strings else {
                throw CabinetError.malformedRecord(RecordLocation(file: path), reason: "HMGET gave a reply that is not a list of values")
            }
            return strings
        }
        let fetchedCount = fetched.reduce(0) { $0 + $1.count }
        guard fetchedCount == asked.count else {
            throw CabinetError.malformedRecord(RecordLocation(file: path), reason: "HMGET gave \(fetchedCount) values for \(asked.count) keys")
        }
        // The server's values in order, each key's own change before them where it has one.
        var nextKey = 0
        func pendingUpTo(_ end: Int) throws {
            while nextKey < end {
                let index = nextKey
                nextKey += 1
                _ = try keys[index].withUnsafeBytes { key in try pendingValue(key) { try body(index, $0) } }
            }
        }
        var askedIndex = 0
        for strings in fetched {
            try strings.forEach { _, value in
                let index = asked[askedIndex]
                askedIndex += 1
                try pendingUpTo(index)
                nextKey = index + 1
                try body(index, value)
                return true
            }
        }
        try pendingUpTo(keys.count)
    }

    func setValue(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer) throws {
        try change(key, to: value)
    }

    func removeValue(forKey key: UnsafeRawBufferPointer) throws -> Bool {
        let had = try withValue(forKey: key) { _ in true } ?? false
        try change(key, to: nil)
        return had
    }

    /// Records a change in the open transaction, or (outside one) commits it at once.
    private func change(_ key: UnsafeRawBufferPointer, to value: UnsafeRawBufferPointer?) throws {
        // In a transaction (begun open and writable; a close ends it): a million of these in a save.
        if pending != nil {
            let changedBefore = pending!.set(key, to: value)
            if let staged {
                staged.add(key, value, changedBefore: changedBefore)
            } else if pending!.count >= nextStagingAttempt {
                startStaging()
            }
            return
        }
        try checkOpen()
        try session.checkWritable()
        try beginTransaction()
        pending!.set(key, to: value)
        try commitTransaction()
    }

    /// Does nothing: a hash grows by itself.
    func reserveCapacity(_ records: Int) throws { try checkOpen() }

    /// Does nothing: Redis keeps no free space in a hash to give back.
    func compact() throws { try checkOpen() }

    /// Unordered (``RedisOrderedTable`` orders it): see ``scanRecords(_:)``.
    func forEach(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        try scanRecords(body)
    }

    func beginTransaction() throws {
        try checkOpen()
        try session.checkWritable()
        if pending != nil { throw CabinetError.transactionAlreadyOpen(path: path) }
        pending = TableChanges()
        pendingClear = false
    }

    func commitTransaction() throws {
        try checkOpen()
        guard pending != nil else { return }
        try session.commit([self])
    }

    func abortTransaction() throws {
        endTransaction()
    }

    /// Ends the transaction, its changes committed or dropped.
    func endTransaction() {
        pending = nil
        pendingClear = false
        dropStaging()
    }

    /// Inside a transaction: every record goes at the commit (before the transaction's own writes).
    func clear() {
        pending = TableChanges()
        pendingClear = true
        dropStaging()
    }

    // MARK: Big saves

    /// Whether a big transaction's changes may be staged (``RedisStagedWrite``).
    var stagesBigSaves: Bool { true }

    /// Tries to send the transaction's changes to a staging (``RedisStagedWrite``):
    /// at the threshold, then each time the changes have doubled, while the
    /// table is bigger than they are. A server that refuses it is not asked again in this transaction.
    private func startStaging() {
        let (doubled, overflow) = nextStagingAttempt.multipliedReportingOverflow(by: 2)
        nextStagingAttempt = overflow ? .max : doubled
        guard stagesBigSaves, !pendingClear, let pending else { return }
        do {
            staged = try RedisStagedWrite.start(name: name, table: key, session: session, pending: pending)
        } catch {
            nextStagingAttempt = .max
        }
    }

    private func dropStaging() {
        staged?.discard()
        staged = nil
        nextStagingAttempt = session.stagingThreshold
    }

    /// Sends what is left of the transaction's staging and reads its replies:
    /// the staging the commit may rename over the table, if all of it went in.
    func finishStaging() -> RedisStagedWrite.Finished? {
        staged?.finish()
    }

    /// After a commit renamed the staging over the table: nothing to remove.
    func stagingRenamed() {
        staged?.markRenamed()
    }

    /// Adds what the transaction touches to `log`.
    func noteCommit(in log: inout RedisCommitLog.Entry) {
        guard let pending else { return }
        if pendingClear {
            log.touchWhole(name)
        } else if !pending.isEmpty {
            // The keys are listed only for a save small enough to log them (else the whole table is).
            log.touch(name, keys: pending.count > RedisCommitLog.keysPerTable ? [] : pending.keys, count: pending.count)
        }
    }

    /// Adds the commands that make the transaction's changes to `commands`:
    /// the rename of `staging` over the table, or the changes themselves (and
    /// the removal of a staging not used).
    func appendCommit(to commands: inout [RedisCommand], renaming staging: RedisStagedWrite.Finished?) {
        guard let pending else { return }
        if let staging {
            // The staging's lifetime goes with it: PERSIST (which cannot fail) ends it.
            commands.append(RedisCommand(arguments: [Array("RENAME".utf8), staging.key, key]))
            commands.append(command("PERSIST"))
            return
        }
        if let staged { commands.append(RedisCommand(arguments: [Array("UNLINK".utf8), staged.key, staged.sealedKey])) }
        if pendingClear { commands.append(command("DEL")) }
        var sets = command("HSET"), deletes = command("HDEL")
        func flush() {
            if sets.argumentCount > 2 { commands.append(sets); sets = command("HSET") }
            if deletes.argumentCount > 2 { commands.append(deletes); deletes = command("HDEL") }
        }
        pending.forEach { field, value in
            if let value {
                sets.append(field); sets.append(value)
            } else if !pendingClear {
                deletes.append(field)
            }
            if sets.argumentCount >= 2 + 2 * 512 || deletes.argumentCount >= 2 + 512 { flush() }
            return true
        }
        flush()
    }

    // MARK: GroupCommittingTable

    func canCommitTogether(with other: any TransactionalTable) -> Bool {
        (other as? RedisTable)?.session === session
    }

    func commitTogether(_ tables: [any TransactionalTable]) throws {
        let redisTables = tables.map { $0 as! RedisTable }   // canCommitTogether(with:) said they all are
        for table in redisTables { try table.checkOpen() }   // a closed table's changes are not dropped silently
        try session.commit(redisTables.filter(\.inTransaction))
    }
}
