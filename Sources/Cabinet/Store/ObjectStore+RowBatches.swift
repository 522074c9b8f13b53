extension ObjectStore {
    /// Calls `body` with each row of `rows` and its object, in order, as
    /// ``loadedObject(_:rowID:)`` gives it (`nil`: no object there), until `body`
    /// returns `false`; returns whether it went through all of them.
    ///
    /// The records the rows need (rows with no live object, or a live fault) are
    /// read first, in one ``StorageTable/withValues(forRows:_:)`` call: on Redis one
    /// round trip (`HMGET`) for the batch instead of one per object, on Tokyo
    /// Cabinet lookups whose cache misses overlap (`TokyoCabinetLookup.prefetch`).
    /// Each object is still made just before `body` gets it, so what `body` did to
    /// the store before counts as it would one row at a time, and once `body` has
    /// saved this class (a row deleted and saved is gone) the rest of the batch is
    /// read afresh, row by row. Call inside `readingCommittedState`.
    func loadedObjects(_ entry: ClassEntry, rows: [UInt32], _ body: (UInt32, StoredObject?) throws -> Bool) throws -> Bool {
        // For each row, the number of its key among those read (-1: none read, it has a live object).
        var keyOfRow = [Int](repeating: -1, count: rows.count)
        var keys: [UInt32] = []
        keys.reserveCapacity(rows.count)
        for (position, row) in rows.enumerated() {
            if let live = entry.live.object(at: row), live.hasContent || live.changeState == .inserted || live.changeState == .deleted,
               !refreshesLiveObjects(live) { continue }
            keyOfRow[position] = keys.count
            keys.append(row)
        }
        // The records read, one after another in `bytes`; `nil`: no record.
        var bytes: [UInt8] = []
        var spans = [Range<Int>?](repeating: nil, count: keys.count)
        if !keys.isEmpty {
            try entry.table.withValues(forRows: keys) { index, value in
                guard let value else { return }
                spans[index] = bytes.count..<(bytes.count + value.count)
                bytes.append(contentsOf: value)
            }
        }
        let saves = entry.savesFinished
        var buffer = takeReadBuffer()   // a nested read in `body` gets a buffer of its own
        defer { readBuffer = buffer }
        for (position, row) in rows.enumerated() {
            let key = keyOfRow[position]
            let object: StoredObject?
            if key < 0 || entry.savesFinished != saves {
                object = try loadedObject(entry, rowID: row)
            } else {
                object = try loadedObject(entry, rowID: row) { object in
                    guard let span = spans[key] else { return false }
                    bytes.withUnsafeBytes { buffer.load(UnsafeRawBufferPointer(rebasing: $0[span])) }
                    try decode(&buffer, into: object, entry: entry)
                    return true
                }
            }
            if try !body(row, object) { return false }
        }
        return true
    }
}

extension ObjectStore {
    /// Calls `body` with the object of each row `scan` hands over (an index's
    /// rows, in its order), until `body` returns `false`: rows gathered in
    /// ``RowBatch``es whose records are read together (``loadedObjects(_:rows:_:)``).
    /// A row deleted since the last save is skipped; a row with no object is
    /// damage in `index` ("the index"), which `cabinet reindex` repairs.
    func indexedObjects(_ entry: ClassEntry, index: String, _ scan: (_ visit: (UInt32) throws -> Bool) throws -> Void,
                        _ body: (StoredObject) throws -> Bool) throws {
        // (Not escaping: `scan` and `body` are both parameters, which Swift will not let one capture for the other.)
        try withoutActuallyEscaping(body) { body in
            var batch = RowBatch()
            func handOver() throws -> Bool {
                defer { batch.next() }
                return try loadedObjects(entry, rows: batch.rows) { row, object in
                    guard let object else {
                        if entry.live.object(at: row)?.changeState == .deleted { return true }
                        throw CabinetError.malformedRecord(entry.location(row: row),
                                                           reason: "\(index) names this row, which holds no object; `cabinet reindex` rebuilds the index")
                    }
                    return try body(object)
                }
            }
            var goOn = true
            try scan { row in
                batch.append(row)
                if batch.isFull { goOn = try handOver() }
                return goOn
            }
            if goOn && !batch.rows.isEmpty { _ = try handOver() }
        }
    }
}

/// Row IDs gathered for ``ObjectStore/loadedObjects(_:rows:_:)`` from a stream
/// (an index scan): small batches first, so a query that stops after a few
/// objects reads few records ahead, then larger ones, up to ``largest``.
struct RowBatch {
    static let first = 8
    static let largest = 128
    private(set) var rows: [UInt32] = []
    private var size = RowBatch.first

    var isFull: Bool { rows.count >= size }

    mutating func append(_ row: UInt32) {
        rows.append(row)
    }

    /// After the batch was handed over: the next one, twice as large up to ``largest``.
    mutating func next() {
        rows.removeAll(keepingCapacity: true)
        size = min(size * 2, RowBatch.largest)
    }
}
