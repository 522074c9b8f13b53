import CabinetStorage

/// An ordered table of a Redis store: the records in a hash (as ``RedisTable``)
/// and their keys in a sorted set of score 0 beside it, which Redis orders by
/// their bytes (`memcmp`, then the shorter first), the order of
/// ``OrderedStorageTable``; ranges are read with `ZRANGEBYLEX`.
final class RedisOrderedTable: RedisTable, OrderedStorageTable {
    let orderKey: [UInt8]

    override init(session: RedisSession, name: String, path: String) {
        orderKey = Array(session.keys.order(name).utf8)
        super.init(session: session, name: name, path: path)
    }

    /// Always `false`: a `MULTI`/`EXEC` is applied whole or not at all.
    var isDamaged: Bool { false }

    override var byteCount: UInt64 {
        get throws {
            try checkOpen()
            return try memoryUsage(of: [key, orderKey])
        }
    }

    func removeAll() throws {
        try beginTransaction()
        clear()
        try commitTransaction()
    }

    override func forEach(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        try forEach(from: nil, to: nil, descending: false, body)
    }

    /// Never: a staging would need the sorted set beside the hash.
    override var stagesBigSaves: Bool { false }

    override func noteCommit(in log: inout RedisCommitLog.Entry) {
        guard let pending, !pending.isEmpty || pendingClear else { return }
        super.noteCommit(in: &log)
        // An index's keys depend on each other (a posting block's range): another
        // process's save to the same index is a conflict whatever keys it changed.
        // The keys are still listed, for observations to tell which entries changed.
        log.conflictAsWhole(name)
    }

    override func appendCommit(to commands: inout [RedisCommand], renaming staging: RedisStagedWrite.Finished?) {
        guard let pending, !pending.isEmpty || pendingClear else { return }
        super.appendCommit(to: &commands, renaming: nil)
        if pendingClear { commands.append(command("DEL", key: orderKey)) }
        var adds = command("ZADD", key: orderKey), removes = command("ZREM", key: orderKey)
        func flush() {
            if adds.argumentCount > 2 { commands.append(adds); adds = command("ZADD", key: orderKey) }
            if removes.argumentCount > 2 { commands.append(removes); removes = command("ZREM", key: orderKey) }
        }
        pending.forEach { field, value in
            if value != nil {
                adds.append("0"); adds.append(field)
            } else if !pendingClear {
                removes.append(field)
            }
            if adds.argumentCount >= 2 + 2 * 512 || removes.argumentCount >= 2 + 512 { flush() }
            return true
        }
        flush()
    }

    func forEach(from lower: UnsafeRawBufferPointer?, to upper: UnsafeRawBufferPointer?, descending: Bool,
                 _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        try checkOpen()
        let lowerBytes = lower.map { Array($0) }, upperBytes = upper.map { Array($0) }
        func inRange(_ key: [UInt8]) -> Bool {
            if let lowerBytes, RedisOrderedTable.precedes(key, lowerBytes) { return false }
            if let upperBytes, !RedisOrderedTable.precedes(key, upperBytes) { return false }
            return true
        }
        func before(_ a: [UInt8], _ b: [UInt8]) -> Bool { descending ? RedisOrderedTable.precedes(b, a) : RedisOrderedTable.precedes(a, b) }
        // The transaction's own changes in the range, merged into the server's keys in order.
        let changes = (pending?.entries ?? []).filter { inRange($0.key) }.sorted { before($0.key, $1.key) }
        var next = 0
        func yield(_ key: [UInt8], _ value: [UInt8]) throws -> Bool {
            try key.withUnsafeBytes { k in try value.withUnsafeBytes { v in try body(k, v) } }
        }
        // Pending changes that come before `key` (all of them when `key` is nil): false if `body` stopped.
        func yieldChanges(before key: [UInt8]?) throws -> Bool {
            while next < changes.count, key.map({ before(changes[next].key, $0) }) ?? true {
                defer { next += 1 }
                if let value = changes[next].value, try !yield(changes[next].key, value) { return false }
            }
            return true
        }
        var low: [UInt8] = lowerBytes.map { [UInt8(ascii: "[")] + $0 } ?? [UInt8(ascii: "-")]
        var high: [UInt8] = upperBytes.map { [UInt8(ascii: "(")] + $0 } ?? [UInt8(ascii: "+")]
        // Small first: most scans of an index stop after a record or two (a posting
        // block's floor, a page of `limit`); a long scan grows to 1,024 keys a round trip.
        var batch = 2
        while !pendingClear {
            let range = descending ? command("ZREVRANGEBYLEX", key: orderKey, arguments: [high, low])
                                   : command("ZRANGEBYLEX", key: orderKey, arguments: [low, high])
            var ranged = range
            ranged.append("LIMIT"); ranged.append("0"); ranged.append(String(batch))
            let keys = try RedisReply.stringList(session.call(ranged, operation: "scan a range"), of: "ZRANGEBYLEX", at: path)
            try checkRange(keys, after: descending ? high : low, before: descending ? low : high, descending: descending, batch: batch)
            if keys.isEmpty { break }
            let values = try RedisReply.optionalStrings(session.call(command("HMGET", arguments: keys), operation: "read a range"),
                                                        count: keys.count, of: "HMGET", at: path)
            for (key, value) in zip(keys, values) {
                guard try yieldChanges(before: key) else { return }
                if next < changes.count, changes[next].key == key {
                    // The transaction changed this key: its value (or its removal) wins.
                    defer { next += 1 }
                    if let value = changes[next].value, try !yield(key, value) { return }
                    continue
                }
                if pendingValue(key) != nil { continue }
                // A key whose record is gone (never left so by a save) is passed over.
                guard let value else { continue }
                if try !yield(key, value) { return }
            }
            if keys.count < batch { break }
            let last = [UInt8(ascii: "(")] + keys[keys.count - 1]
            if descending { high = last } else { low = last }
            batch = min(batch * 8, 1024)
        }
        _ = try yieldChanges(before: nil)
    }

    /// A range's keys as the server gave them must be what was asked: at most
    /// `batch`, each after the one before in the scan's direction, and inside
    /// its bounds (`ZRANGEBYLEX` bounds: `[` inclusive, `(` exclusive, `-`/`+`
    /// open). A reply that is not would answer a query with rows it did not ask for.
    private func checkRange(_ keys: [[UInt8]], after start: [UInt8], before end: [UInt8], descending: Bool, batch: Int) throws {
        func inOrder(_ a: [UInt8], _ b: [UInt8]) -> Bool { descending ? Self.precedes(b, a) : Self.precedes(a, b) }
        func within(_ key: [UInt8], bound: [UInt8], beforeIt: Bool) -> Bool {
            guard let mark = bound.first, mark == UInt8(ascii: "[") || mark == UInt8(ascii: "(") else { return true }
            let limit = Array(bound.dropFirst())
            if key == limit { return mark == UInt8(ascii: "[") }
            return beforeIt ? inOrder(key, limit) : inOrder(limit, key)
        }
        var previous: [UInt8]?
        for key in keys {
            guard keys.count <= batch, previous.map({ inOrder($0, key) }) ?? true,
                  within(key, bound: start, beforeIt: false), within(key, bound: end, beforeIt: true) else {
                throw CabinetError.malformedRecord(RecordLocation(file: path),
                                                   reason: "the server answered a range scan (ZRANGEBYLEX) with keys out of order or outside the range asked: it is not a sound Redis server, or something on the way changes its replies")
            }
            previous = key
        }
    }

    /// The order of ``OrderedStorageTable``: unsigned bytes, then the shorter first.
    static func precedes(_ a: [UInt8], _ b: [UInt8]) -> Bool { a.lexicographicallyPrecedes(b) }
}
