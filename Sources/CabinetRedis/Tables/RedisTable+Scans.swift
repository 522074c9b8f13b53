import CabinetStorage

// Reading a whole table, or a range of its rows, from the server: `HSCAN` for
// every record, pipelined `HMGET`s for rows (outside a transaction).
extension RedisTable {
    /// Every record, the server's (by `HSCAN`) and then the open transaction's: ``forEach(_:)``.
    func scanRecords(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        try checkOpen()
        var seen = RedisKeySet()   // HSCAN may repeat a field while the hash is resized, or a scan start again
        if !pendingClear {
            // Small first (a page, an enumerate that stops early), then 4,000 fields a
            // round trip: fewer pauses of the server between batches (measured: a
            // million songs fetched in 0.87 s against 0.92 s at 1,000).
            var count = 100
            func scan(from cursor: [UInt8]) -> RedisCommand {
                defer { count = min(count * 4, 4000) }
                return command("HSCAN", arguments: [cursor, Array("COUNT".utf8), Array(String(count).utf8)])
            }
            func parts(_ reply: RedisReply) throws -> (cursor: [UInt8], fields: RedisStrings) {
                guard let parts = reply.elements, parts.count == 2, let next = parts[0].bytes, let fields = parts[1].strings,
                      fields.count % 2 == 0 else {
                    throw CabinetError.malformedRecord(RecordLocation(file: path), reason: "HSCAN gave a reply of an unexpected shape")
                }
                return (next, fields)
            }
            var stopped = false
            try session.checkOpen()
            try session.withConnection { connection in
                let size = try RedisReply.count(try connection.call(command("HLEN"), operation: "scan"), of: "HLEN", at: path)
                try connection.cursorLoop(first: scan(from: Array("0".utf8)), bound: RedisScanBound(command: "HSCAN", location: path, size: size),
                                          operation: "scan", next: { reply in
                    let (cursor, fields) = try parts(reply)
                    return cursor == Array("0".utf8) ? nil : (scan(from: cursor), cursor, fields.count / 2)
                }, body: { reply in
                    var field: UnsafeRawBufferPointer?
                    try parts(reply).fields.forEach { index, element in
                        guard let element else {
                            throw CabinetError.malformedRecord(RecordLocation(file: path), reason: "HSCAN gave a field that is not a string")
                        }
                        guard index % 2 == 1, let key = field else { field = element; return true }
                        if isPending(key) || !seen.insert(key) { return true }
                        stopped = try !body(key, element)
                        return !stopped
                    }
                    return !stopped
                })
            }
            if stopped { return }
        }
        try pending?.forEach { key, value in
            guard let value else { return true }
            return try body(key, value)
        }
    }

    /// Outside a transaction: pipelined `HMGET`s of rows read a million records
    /// in about half the server's time of an `HSCAN` (BENCHMARKS.md, "On a Redis
    /// server"). Inside one, whose changes answer for their rows, rows are read one at a time.
    var prefersRowReads: Bool { pending == nil }

    /// `HMGET`s of 16 rows, then 64, 256 and 1,024 at a time (an enumeration that
    /// stops early reads little), the next sent while `body` handles the last.
    /// Inside a transaction, whose changes answer for their rows, one at a time.
    func forEachRow(in rows: ClosedRange<UInt32>, _ body: (UInt32, UnsafeRawBufferPointer) throws -> Bool) throws {
        try checkOpen()
        if pending != nil { return try forEachRowOneByOne(in: rows, body) }
        var first = rows.lowerBound   // the first row not given to `body` yet
        for attempt in 0... {
            do {
                try session.checkOpen()
                try session.withConnection { connection in
                    var size = 16, start: UInt32? = first
                    var batches: [ClosedRange<UInt32>] = []
                    try connection.pipeline(operation: "read rows", make: { _ in
                        guard let from = start else { return nil }
                        let batch = from...(rows.upperBound - from < UInt32(size) ? rows.upperBound : from + UInt32(size) - 1)
                        batches.append(batch)
                        start = batch.upperBound == rows.upperBound ? nil : batch.upperBound + 1
                        size = min(size * 4, 1024)
                        return command("HMGET", arguments: batch.map { withUnsafeBytes(of: $0.littleEndian, Array.init) })
                    }, body: { index, reply in
                        let batch = batches[index]
                        guard let values = reply.strings, values.count == batch.count else {
                            throw CabinetError.malformedRecord(RecordLocation(file: path), reason: "HMGET gave a reply that is not a list of \(batch.count) values")
                        }
                        var goOn = true
                        try values.forEach { offset, value in
                            guard let value else { return true }   // no record on this row
                            goOn = try body(batch.lowerBound + UInt32(offset), value)
                            return goOn
                        }
                        if goOn, batch.upperBound < rows.upperBound { first = batch.upperBound + 1 }
                        return goOn
                    })
                }
                return
            } catch is RedisConnection.Redirected {
                // The slot moved or the server restarted: on from the first row not given.
                guard attempt < 5 else {
                    throw session.serverError("the store's slot kept moving (or the server restarting) during the read", operation: "read rows")
                }
            }
        }
    }
}
