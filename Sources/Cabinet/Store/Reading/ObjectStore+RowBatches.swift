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
    /// read afresh, row by row. `body` also hears whether the object's content was
    /// decoded from its record just now (not a live object's as it was). Call
    /// inside `readingCommittedState`.
    func loadedObjects(_ entry: ClassEntry, rows: [UInt32], _ body: (UInt32, StoredObject?, _ decoded: Bool) throws -> Bool) throws -> Bool {
        // The batch's bookkeeping in one block of Ints, on the stack for a query's
        // usual few rows (arrays of optionals cost a metadata lookup each): for each
        // row the number of its key among those read (-1: none read, it has a live
        // object); then for each key where its record starts and ends in `bytes`
        // (-1: no record).
        try withUnsafeTemporaryAllocation(of: Int.self, capacity: rows.count * 3) { table in
            let keyOfRow = UnsafeMutableBufferPointer(rebasing: table[0..<rows.count])
            let spans = UnsafeMutableBufferPointer(rebasing: table[rows.count...])
            var keys: [UInt32] = []
            keys.reserveCapacity(rows.count)
            for (position, row) in rows.enumerated() {
                if let live = entry.live.object(at: row), !readsRecord(of: live) {
                    keyOfRow[position] = -1
                    continue
                }
                keyOfRow[position] = keys.count
                spans[2 * keys.count] = -1
                keys.append(row)
            }
            // The records read, one after another.
            var bytes: [UInt8] = []
            var missed = false
            if !keys.isEmpty {
                try entry.table.withValues(forRows: keys) { index, value in
                    // The spans are raw memory: a backend that names a key it was not
                    // asked for stops here, before writing outside them.
                    precondition(index >= 0 && index < keys.count,
                                 "Cabinet: the table \(entry.table.path) answered withValues(forRows:) for key \(index) of \(keys.count)")
                    guard let value else { missed = true; return }
                    // Room for the rest of the batch at this record's size (at most 1 MiB
                    // more: a big first record says nothing of the others): one allocation,
                    // not a doubling every few records.
                    if bytes.isEmpty { bytes.reserveCapacity(value.count + min(value.count * (keys.count - index - 1), 1 << 20) + 64) }
                    spans[2 * index] = bytes.count
                    spans[2 * index + 1] = bytes.count + value.count
                    bytes.append(contentsOf: value.assumingMemoryBound(to: UInt8.self))   // a typed buffer: one memcpy
                }
                // A row the lookups missed is "no object" only if a miss can be believed.
                if missed { try entry.table.vouchForMisses() }
            }
            let saves = entry.savesFinished
            var buffer = takeReadBuffer()   // a nested read in `body` gets a buffer of its own
            defer { readBuffer = buffer }
            for (position, row) in rows.enumerated() {
                let key = keyOfRow[position]
                let object: StoredObject?
                var decoded = false
                if key < 0 || entry.savesFinished != saves {
                    object = try loadedObject(entry, rowID: row)
                } else {
                    object = try loadedObject(entry, rowID: row) { object in
                        let start = spans[2 * key]
                        guard start >= 0 else { return false }
                        bytes.withUnsafeBytes { buffer.load(UnsafeRawBufferPointer(rebasing: $0[start..<spans[2 * key + 1]])) }
                        try decode(&buffer, into: object, entry: entry)
                        decoded = true
                        return true
                    }
                }
                if try !body(row, object, decoded) { return false }
            }
            return true
        }
    }
}

extension ObjectStore {
    /// Calls `body` with the object of each row `scan` hands over (an index's
    /// rows, in its order, with each entry's key), until `body` returns `false`:
    /// rows gathered in ``RowBatch``es whose records are read together
    /// (``loadedObjects(_:rows:_:)``). A row deleted since the last save is
    /// skipped; a row with no object is damage in `index` ("the index"), which
    /// `cabinet reindex` repairs.
    ///
    /// Once `body` has saved the class (or its records changed otherwise), a row
    /// of the batch gathered before is handed over only if `stillListed` finds its
    /// entry's key in the index (the save may have deleted it, or moved its value
    /// out of the range), and the scan starts again after the batch's last entry
    /// (`scan` is called with that key): an ordered table's cursor does not
    /// survive changes under it (Tokyo Cabinet's skipped entries after a save).
    func indexedObjects(_ entry: ClassEntry, index: String,
                        _ scan: (_ after: [UInt8]?, _ visit: (UInt32, UnsafeRawBufferPointer?) throws -> Bool) throws -> Void,
                        stillListed: ((UnsafeRawBufferPointer) throws -> Bool)?,
                        _ body: (StoredObject, _ decoded: Bool) throws -> Bool) throws {
        // (Not escaping: `scan` and `body` are both parameters, which Swift will not let one capture for the other.)
        try withoutActuallyEscaping(body) { body in
            var batch = RowBatch()
            /// Hands the batch over; whether to go on, and whether the class changed meanwhile.
            func handOver() throws -> (goOn: Bool, changed: Bool) {
                defer { batch.next() }
                let saves = entry.savesFinished
                var position = -1
                let goOn = try loadedObjects(entry, rows: batch.rows) { row, object, decoded in
                    position += 1
                    if entry.savesFinished != saves {
                        guard let object else { return true }   // gone with the save
                        if let stillListed, let listed = try batch.withKey(at: position, stillListed), !listed { return true }
                        return try body(object, decoded)
                    }
                    guard let object else {
                        if entry.live.object(at: row)?.changeState == .deleted { return true }
                        throw CabinetError.malformedRecord(entry.location(row: row),
                                                           reason: "\(index) names this row, which holds no object; `cabinet reindex` rebuilds the index")
                    }
                    return try body(object, decoded)
                }
                return (goOn, entry.savesFinished != saves)
            }
            var goOn = true
            var after: [UInt8]?
            var again = true
            while again && goOn {
                again = false
                try scan(after) { row, key in
                    batch.append(row, key: key)
                    guard batch.isFull else { return true }
                    let last = stillListed == nil ? nil : batch.withKey(at: batch.rows.count - 1, Array.init)
                    let (more, changed) = try handOver()
                    goOn = more
                    // Changed under the scan: it starts again after the batch's last entry.
                    if more, changed, let last {
                        after = last
                        again = true
                        return false
                    }
                    return more
                }
            }
            if goOn && !batch.rows.isEmpty { _ = try handOver() }
        }
    }
}

/// Row IDs gathered for ``ObjectStore/loadedObjects(_:rows:_:)`` from a stream
/// (an index scan), with their entries' keys if the stream has them: small
/// batches first, so a query that stops after a few objects reads few records
/// ahead, then larger ones, up to ``largest``.
struct RowBatch {
    static let first = 8
    static let largest = 128
    private(set) var rows: [UInt32] = []
    /// The entries' keys, one after another (no array per key), and where each ends.
    private var keyBytes: [UInt8] = []
    private var keyEnds: [Int] = []
    private var size = RowBatch.first

    var isFull: Bool { rows.count >= size }

    mutating func append(_ row: UInt32, key: UnsafeRawBufferPointer?) {
        if rows.isEmpty && rows.capacity < size { rows.reserveCapacity(size) }
        rows.append(row)
        if let key {
            // Room for the batch's keys at once: growing by doubling cost a query of ten a few allocations.
            if keyBytes.isEmpty && keyBytes.capacity < size * key.count { keyBytes.reserveCapacity(size * key.count) }
            keyBytes.append(contentsOf: key)
            keyEnds.append(keyBytes.count)
        }
    }

    /// `body` with the key of the row at `position`, or `nil` if the stream gave no keys.
    func withKey<R>(at position: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R? {
        guard keyEnds.count == rows.count else { return nil }
        let start = position == 0 ? 0 : keyEnds[position - 1]
        return try keyBytes.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start..<keyEnds[position]])) }
    }

    /// After the batch was handed over: the next one, twice as large up to ``largest``.
    mutating func next() {
        rows.removeAll(keepingCapacity: true)
        keyBytes.removeAll(keepingCapacity: true)
        keyEnds.removeAll(keepingCapacity: true)
        size = min(size * 2, RowBatch.largest)
    }
}
