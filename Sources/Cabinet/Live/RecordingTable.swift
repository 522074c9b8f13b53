import CabinetStorage

/// Gathers what an observation's block reads, while it runs: the
/// ``ReadRegion`` its tables' reads add up to, and, for one table when asked,
/// a hash of each record's bytes (for ``StorePool/observeResults(_:where:in:_:)``
/// to tell a row saved with other content). Used by the block's thread only.
final class RegionRecorder {
    /// What was read of one table: each ``RecordingTable`` keeps its own, so a
    /// read costs no lookup by the table's name.
    final class TablePart {
        fileprivate unowned let recorder: RegionRecorder
        fileprivate var region = ReadRegion.TableRegion()
        /// Row → the hash of the record read, when this is the hashed table.
        fileprivate var hashes: [UInt32: Int]?

        fileprivate init(recorder: RegionRecorder, hashesValues: Bool) {
            self.recorder = recorder
            hashes = hashesValues ? [:] : nil
        }

        func read(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer?) {
            guard recorder.isRecording else { return }
            if let row = RowKey.row(key) {
                read(row: row, value: value)
            } else {
                region.keys.insert(Array(key))
            }
        }

        func read(row: UInt32, value: UnsafeRawBufferPointer?) {
            guard recorder.isRecording else { return }
            region.rows.insert(row)
            if hashes != nil, let value { hashes?[row] = RegionRecorder.hash(value) }
        }

        func read(from lower: [UInt8], below upper: [UInt8]?) {
            guard recorder.isRecording else { return }
            region.ranges.append((lower, upper))
        }

        func readAll() {
            guard recorder.isRecording else { return }
            region.whole = true
        }
    }

    /// Off while the context is made (it reads each class's metadata row, which
    /// the block did not ask for): on only around the block.
    var isRecording = false
    /// The table whose records' hashes are kept; `nil`: none.
    let hashedTable: String?
    private var parts: [String: TablePart] = [:]

    init(hashingValuesOf hashedTable: String?) {
        self.hashedTable = hashedTable
    }

    /// The part of table `name`, made on first use (a context makes its table
    /// views before the block runs: a part nothing was recorded in is no part of the region).
    func part(ofTable name: String) -> TablePart {
        if let part = parts[name] { return part }
        let part = TablePart(recorder: self, hashesValues: name == hashedTable)
        parts[name] = part
        return part
    }

    /// What the block read, table by table.
    var region: ReadRegion {
        var region = ReadRegion()
        for (name, part) in parts { region.set(part.region, ofTable: name) }
        return region
    }

    /// The hash of the record of `row` in table `name` as the block read it;
    /// `nil` if it read none or `name` is not the hashed table.
    func valueHash(ofRow row: UInt32, inTable name: String) -> Int? {
        parts[name]?.hashes?[row]
    }

    fileprivate static func hash(_ bytes: UnsafeRawBufferPointer) -> Int {
        var hasher = Hasher()
        hasher.combine(bytes: bytes)
        return hasher.finalize()
    }
}

/// A table as an observation's context reads it: every read goes to the
/// table, and what it read to the ``RegionRecorder``. Writes go straight
/// through (a read block's store refuses them before they get here).
class RecordingTable: StorageTable {
    let base: any StorageTable
    let name: String
    let recorded: RegionRecorder.TablePart

    init(base: any StorageTable, name: String, recorder: RegionRecorder) {
        self.base = base
        self.name = name
        recorded = recorder.part(ofTable: name)
    }

    var path: String { base.path }
    var prefersRowReads: Bool { base.prefersRowReads }

    var recordCount: Int {
        get throws {
            recorded.readAll()
            return try base.recordCount
        }
    }

    var byteCount: UInt64 {
        get throws {
            recorded.readAll()
            return try base.byteCount
        }
    }

    func withValue<R>(forKey key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        var found = false
        let result = try base.withValue(forKey: key) { value in
            found = true
            recorded.read(key: key, value: value)
            return try body(value)
        }
        if !found { recorded.read(key: key, value: nil) }
        return result
    }

    func withValues(forKeys keys: [[UInt8]], _ body: (Int, UnsafeRawBufferPointer?) throws -> Void) throws {
        try base.withValues(forKeys: keys) { index, value in
            keys[index].withUnsafeBytes { recorded.read(key: $0, value: value) }
            try body(index, value)
        }
    }

    func withValues(forRows rows: [UInt32], _ body: (Int, UnsafeRawBufferPointer?) throws -> Void) throws {
        try base.withValues(forRows: rows) { index, value in
            recorded.read(row: rows[index], value: value)
            try body(index, value)
        }
    }

    func forEach(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        recorded.readAll()
        try base.forEach(body)
    }

    func forEachRow(in rows: ClosedRange<UInt32>, _ body: (UInt32, UnsafeRawBufferPointer) throws -> Bool) throws {
        // Row keys are little-endian: a range of rows is no range of keys.
        recorded.readAll()
        try base.forEachRow(in: rows, body)
    }

    func setValue(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer) throws {
        try base.setValue(value, forKey: key)
    }

    func removeValue(forKey key: UnsafeRawBufferPointer) throws -> Bool {
        try base.removeValue(forKey: key)
    }

    func reserveCapacity(_ records: Int) throws { try base.reserveCapacity(records) }
    func compact() throws { try base.compact() }
}

/// ``RecordingTable`` for an ordered table (an index file): a range scan adds
/// the range it covered, up to the key it stopped at when its body stopped it.
final class RecordingOrderedTable: RecordingTable, OrderedStorageTable {
    private let ordered: any OrderedStorageTable

    init(ordered: any OrderedStorageTable, name: String, recorder: RegionRecorder) {
        self.ordered = ordered
        super.init(base: ordered, name: name, recorder: recorder)
    }

    var isDamaged: Bool { ordered.isDamaged }

    func removeAll() throws { try ordered.removeAll() }

    func forEach(from lower: UnsafeRawBufferPointer?, to upper: UnsafeRawBufferPointer?, descending: Bool,
                 _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        var stoppedAt: [UInt8]?
        defer {
            // A scan stopped early read up to where it stopped: in its direction, the keys past it are not in the region.
            var (from, below) = (lower.map(Array.init) ?? [], upper.map(Array.init))
            if let key = stoppedAt {
                if descending { from = key } else { below = key + [0] }
            }
            recorded.read(from: from, below: below)
        }
        try ordered.forEach(from: lower, to: upper, descending: descending) { key, value in
            let more = try body(key, value)
            if !more { stoppedAt = Array(key) }
            return more
        }
    }
}

extension RecordingTable: LookupMissVouching {
    /// The table read's question, asked of the table it reads.
    func vouchForLookupMisses() throws { try base.vouchForMisses() }
}
