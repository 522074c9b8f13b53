import CabinetStorage

/// Gathers what an observation's block reads, while it runs: the
/// ``ReadRegion`` its tables' reads add up to, and, when asked, a hash of each
/// record's bytes (for ``StorePool/observeResults(_:where:in:_:)`` to tell a
/// row saved with other content). Used by the block's thread only.
final class RegionRecorder {
    /// Off while the context is made (it reads each class's metadata row, which
    /// the block did not ask for): on only around the block.
    var isRecording = false
    private(set) var region = ReadRegion()
    /// Table name → key → the hash of the value read, when ``hashesValues``.
    private(set) var valueHashes: [String: [[UInt8]: Int]] = [:]
    let hashesValues: Bool

    init(hashesValues: Bool) {
        self.hashesValues = hashesValues
    }

    func read(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer?, inTable name: String) {
        guard isRecording else { return }
        region.read(key: key, inTable: name)
        if hashesValues, let value { valueHashes[name, default: [:]][Array(key)] = Self.hash(value) }
    }

    func read(from lower: [UInt8], below upper: [UInt8]?, inTable name: String) {
        guard isRecording else { return }
        region.read(from: lower, below: upper, inTable: name)
    }

    func readAll(ofTable name: String) {
        guard isRecording else { return }
        region.readAll(ofTable: name)
    }

    /// The hash of the record of `row` in table `name` as the block read it; `nil` if it read none.
    func valueHash(ofRow row: UInt32, inTable name: String) -> Int? {
        valueHashes[name]?[withUnsafeBytes(of: row.littleEndian, Array.init)]
    }

    private static func hash(_ bytes: UnsafeRawBufferPointer) -> Int {
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
    let recorder: RegionRecorder

    init(base: any StorageTable, name: String, recorder: RegionRecorder) {
        self.base = base
        self.name = name
        self.recorder = recorder
    }

    var path: String { base.path }
    var prefersRowReads: Bool { base.prefersRowReads }

    var recordCount: Int {
        get throws {
            recorder.readAll(ofTable: name)
            return try base.recordCount
        }
    }

    var byteCount: UInt64 {
        get throws {
            recorder.readAll(ofTable: name)
            return try base.byteCount
        }
    }

    func withValue<R>(forKey key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        var found = false
        let result = try base.withValue(forKey: key) { value in
            found = true
            recorder.read(key: key, value: value, inTable: name)
            return try body(value)
        }
        if !found { recorder.read(key: key, value: nil, inTable: name) }
        return result
    }

    func withValues(forKeys keys: [[UInt8]], _ body: (Int, UnsafeRawBufferPointer?) throws -> Void) throws {
        try base.withValues(forKeys: keys) { index, value in
            keys[index].withUnsafeBytes { recorder.read(key: $0, value: value, inTable: name) }
            try body(index, value)
        }
    }

    func withValues(forRows rows: [UInt32], _ body: (Int, UnsafeRawBufferPointer?) throws -> Void) throws {
        try base.withValues(forRows: rows) { index, value in
            withUnsafeBytes(of: rows[index].littleEndian) { recorder.read(key: $0, value: value, inTable: name) }
            try body(index, value)
        }
    }

    func forEach(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        recorder.readAll(ofTable: name)
        try base.forEach(body)
    }

    func forEachRow(in rows: ClosedRange<UInt32>, _ body: (UInt32, UnsafeRawBufferPointer) throws -> Bool) throws {
        // Row keys are little-endian: a range of rows is no range of keys.
        recorder.readAll(ofTable: name)
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
    func beginTransaction() throws { try base.beginTransaction() }
    func commitTransaction() throws { try base.commitTransaction() }
    func abortTransaction() throws { try base.abortTransaction() }
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
            recorder.read(from: from, below: below, inTable: name)
        }
        try ordered.forEach(from: lower, to: upper, descending: descending) { key, value in
            let more = try body(key, value)
            if !more { stoppedAt = Array(key) }
            return more
        }
    }
}
