import CabinetStorage

/// One table of a Redis store: a hash, field = the record's key, value = its
/// bytes (docs/FORMAT.md, "Redis").
///
/// A transaction keeps its changes in memory, where this table's reads see
/// them, and the backend's commit sends those of every table that has one
/// in one `MULTI`/`EXEC` (``GroupCommittingTable``): a save across several
/// classes is all or nothing on the server, with no journal.
class RedisTable: StorageTable, GroupCommittingTable {
    let session: RedisSession
    let name: String
    let path: String
    let key: [UInt8]
    /// The open transaction's changes: key → new value, or `nil` for a removal. `nil` outside a transaction.
    private(set) var pending: [[UInt8]: [UInt8]?]?
    /// Set by ``clear()`` inside a transaction: the records on the server are gone at the commit.
    private(set) var pendingClear = false
    private var isClosed = false

    init(session: RedisSession, name: String, path: String) {
        self.session = session
        self.name = name
        self.path = path
        key = Array(session.keys.table(name).utf8)
    }

    /// After the backend closed or its contents were replaced: every call throws.
    func close() {
        isClosed = true
        pending = nil
    }

    func checkOpen() throws {
        if isClosed { throw CabinetError.storeClosed(path: path) }
        try session.checkOpen()
    }

    var inTransaction: Bool { pending != nil }

    /// The pending change of `key` in the open transaction: `.some(nil)` for a removal, `nil` if none.
    func pendingValue(_ key: [UInt8]) -> [UInt8]?? {
        guard let pending else { return nil }
        if let index = pending.index(forKey: key) { return .some(pending[index].value) }
        return pendingClear ? .some(nil) : nil
    }

    func command(_ words: String..., key: [UInt8]? = nil, arguments: [[UInt8]] = []) -> RedisCommand {
        var command = RedisCommand(arguments: words.map { Array($0.utf8) })
        command.append(key ?? self.key)
        for argument in arguments { command.append(argument) }
        return command
    }

    // MARK: StorageTable

    var recordCount: Int {
        guard (try? checkOpen()) != nil else { return 0 }
        var count = pendingClear ? 0 : Int((try? session.call(command("HLEN")))?.integer ?? 0)
        guard let pending, !pending.isEmpty else { return count }
        // A transaction's changes count as they will after the commit.
        let keys = Array(pending.keys)
        let exists = pendingClear ? keys.map { _ in false }
            : ((try? session.callAll(keys.map { command("HEXISTS", arguments: [$0]) }, operation: "count records")) ?? []).map { $0.integer == 1 }
        for (key, had) in zip(keys, exists) {
            let has = pending[key].map { $0 != nil } ?? false
            if had && !has { count -= 1 }
            if !had && has { count += 1 }
        }
        return count
    }

    /// What Redis says the table's keys take in its memory (`MEMORY USAGE`, sampled).
    var byteCount: UInt64 {
        guard (try? checkOpen()) != nil else { return 0 }
        return memoryUsage(of: [key])
    }

    func memoryUsage(of keys: [[UInt8]]) -> UInt64 {
        let replies = (try? session.callAll(keys.map { RedisCommand("MEMORY", "USAGE", bytes: $0) },
                                            operation: "measure the table")) ?? []
        return replies.reduce(0) { $0 + UInt64(max(0, $1.integer ?? 0)) }
    }

    func withValue<R>(forKey key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try checkOpen()
        let bytes = Array(key)
        if let change = pendingValue(bytes) {
            guard let value = change else { return nil }
            return try value.withUnsafeBytes(body)
        }
        let reply = try session.call(command("HGET", arguments: [bytes]), operation: "read")
        guard let value = reply.bytes else { return nil }
        return try value.withUnsafeBytes(body)
    }

    /// `HMGET`s of up to 1,024 fields each, pipelined: one round trip for all
    /// of them; the open transaction's own changes answer for their keys.
    func withValues(forKeys keys: [[UInt8]], _ body: (Int, UnsafeRawBufferPointer?) throws -> Void) throws {
        try checkOpen()
        let asked = keys.indices.filter { pendingValue(keys[$0]) == nil }
        var commands: [RedisCommand] = []
        var start = 0
        while start < asked.count {
            let end = min(start + 1024, asked.count)
            commands.append(command("HMGET", arguments: asked[start..<end].map { keys[$0] }))
            start = end
        }
        let replies = commands.isEmpty ? [] : try session.callAll(commands, operation: "read")
        var fetched: [[UInt8]?] = []
        fetched.reserveCapacity(asked.count)
        for reply in replies {
            guard let elements = reply.elements else {
                throw CabinetError.malformedRecord(RecordLocation(file: path), reason: "HMGET gave a reply that is not a list")
            }
            fetched += elements.map(\.bytes)
        }
        guard fetched.count == asked.count else {
            throw CabinetError.malformedRecord(RecordLocation(file: path), reason: "HMGET gave \(fetched.count) values for \(asked.count) keys")
        }
        var next = 0
        for (index, key) in keys.enumerated() {
            let value: [UInt8]?
            if let change = pendingValue(key) {
                value = change
            } else {
                value = fetched[next]
                next += 1
            }
            if let value { try value.withUnsafeBytes { try body(index, $0) } } else { try body(index, nil) }
        }
    }

    func setValue(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer) throws {
        try change(Array(key), to: Array(value))
    }

    func removeValue(forKey key: UnsafeRawBufferPointer) throws -> Bool {
        let bytes = Array(key)
        let had = try withValue(forKey: key) { _ in true } ?? false
        try change(bytes, to: nil)
        return had
    }

    /// Records a change in the open transaction, or (outside one) commits it at once.
    private func change(_ key: [UInt8], to value: [UInt8]?) throws {
        try checkOpen()
        try session.checkWritable()
        if pending != nil {
            pending![key] = .some(value)
            return
        }
        try beginTransaction()
        pending![key] = .some(value)
        try commitTransaction()
    }

    /// Does nothing: a hash grows by itself.
    func reserveCapacity(_ records: Int) throws { try checkOpen() }

    /// Does nothing: Redis keeps no free space in a hash to give back.
    func compact() throws { try checkOpen() }

    func forEach(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        try checkOpen()
        var seen = Set<[UInt8]>()   // HSCAN may repeat a field while the hash is resized
        if !pendingClear {
            var cursor: [UInt8] = Array("0".utf8)
            repeat {
                let reply = try session.call(command("HSCAN", arguments: [cursor, Array("COUNT".utf8), Array("1000".utf8)]), operation: "scan")
                guard let parts = reply.elements, parts.count == 2, let next = parts[0].bytes, let fields = parts[1].elements,
                      fields.count % 2 == 0 else {
                    throw CabinetError.malformedRecord(RecordLocation(file: path), reason: "HSCAN gave a reply of an unexpected shape")
                }
                cursor = next
                var index = 0
                while index < fields.count {
                    guard let field = fields[index].bytes, let value = fields[index + 1].bytes else {
                        throw CabinetError.malformedRecord(RecordLocation(file: path), reason: "HSCAN gave a field that is not a string")
                    }
                    index += 2
                    if pendingValue(field) != nil || !seen.insert(field).inserted { continue }
                    let goOn = try field.withUnsafeBytes { k in try value.withUnsafeBytes { v in try body(k, v) } }
                    if !goOn { return }
                }
            } while cursor != Array("0".utf8)
        }
        for (key, value) in pending ?? [:] {
            guard let value else { continue }
            let goOn = try key.withUnsafeBytes { k in try value.withUnsafeBytes { v in try body(k, v) } }
            if !goOn { return }
        }
    }

    func beginTransaction() throws {
        try checkOpen()
        try session.checkWritable()
        pending = [:]
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
    }

    /// Inside a transaction: every record goes at the commit (before the transaction's own writes).
    func clear() {
        pending = [:]
        pendingClear = true
    }

    /// Adds the commands that make the transaction's changes to `commands`, and what they touch to `log`.
    func appendCommit(to commands: inout [RedisCommand], log: inout RedisCommitLog.Entry) {
        guard let pending else { return }
        if pendingClear {
            commands.append(command("DEL"))
            log.touchWhole(name)
        } else if !pending.isEmpty {
            log.touch(name, keys: pending.keys, count: pending.count)
        }
        var sets = command("HSET"), deletes = command("HDEL")
        func flush() {
            if sets.arguments.count > 2 { commands.append(sets); sets = command("HSET") }
            if deletes.arguments.count > 2 { commands.append(deletes); deletes = command("HDEL") }
        }
        for (field, value) in pending {
            if let value {
                sets.append(field); sets.append(value)
            } else if !pendingClear {
                deletes.append(field)
            }
            if sets.arguments.count >= 2 + 2 * 512 || deletes.arguments.count >= 2 + 512 { flush() }
        }
        flush()
    }

    // MARK: GroupCommittingTable

    func canCommitTogether(with other: any StorageTable) -> Bool {
        (other as? RedisTable)?.session === session
    }

    func commitTogether(_ tables: [any StorageTable]) throws {
        let redisTables = tables.map { $0 as! RedisTable }   // canCommitTogether(with:) said they all are
        for table in redisTables { try table.checkOpen() }   // a closed table's changes are not dropped silently
        try session.commit(redisTables.filter(\.inTransaction))
    }
}
