import CabinetStorage

/// A pool table as the write blocks of one commit group see it: the table's
/// committed records with the saves of the group's earlier blocks laid over
/// them. A block's save writes here, in memory; the group's commit then writes
/// every staged record to the real table in one transaction (see `WriteGroup`).
///
/// So a block that throws is rolled back alone: its unsaved changes never reach
/// the staging, and its context goes. And every block sees the blocks before it,
/// as it would if each had been saved on its own.
///
/// While ``GroupStaging/isDirect`` (an upgrade or a compaction inside a block,
/// after the group was committed) every call goes to the real table.
///
/// Used by the pool's writer queue only, one block at a time.
class StagedTable: StorageTable {
    /// A staged record: its value (`nil`: removed), and whether the real table has the key.
    private struct Staged {
        var value: [UInt8]?
        let inBase: Bool
    }

    let base: any StorageTable
    /// The real table's name, as a journal names it.
    let name: String
    unowned let staging: GroupStaging
    private var staged: [StagedKey: Staged] = [:]
    /// Keys the real table lacks, in the order first staged: a scan lists them after
    /// the real table's records, as Tokyo Cabinet lists records it appended.
    private var appended: [[UInt8]] = []
    /// Every staged key, in the order first staged: the commit writes them so, the
    /// same at every run (a dictionary's order changes from process to process).
    private var order: [[UInt8]] = []
    private var orderAtBegin = 0
    /// Staged records present minus the real table's records staged as removed.
    private var countDelta = 0
    /// Inside a transaction (``inTransaction``): each key's staging before it
    /// (`nil`: not staged), to undo an abort. Emptied, not dropped, between
    /// transactions: every block's save begins one.
    private var undo: [StagedKey: Staged?] = [:]
    private var inTransaction = false
    private var appendedAtBegin = 0

    init(base: any StorageTable, name: String, staging: GroupStaging) {
        self.base = base
        self.name = name
        self.staging = staging
    }

    var hasStagedRecords: Bool { !staged.isEmpty }

    /// Every staged record the real table needs, for the commit: a key staged and
    /// then removed within the group, which the real table never had, is left
    /// out (a list appended to by every block of a group writes nodes the next
    /// block replaces).
    func forEachStaged(_ body: ([UInt8], [UInt8]?) throws -> Void) rethrows {
        for key in order {
            guard let record = staged[StagedKey(key)], record.value != nil || record.inBase else { continue }
            try body(key, record.value)
        }
    }

    /// The staged records whose keys are at least `lower` and below `upper`, in key order.
    func stagedRecords(from lower: UnsafeRawBufferPointer?, to upper: UnsafeRawBufferPointer?) -> [(key: [UInt8], value: [UInt8]?)] {
        var records: [(key: [UInt8], value: [UInt8]?)] = []
        for (key, record) in staged {
            let inRange = key.bytes.withUnsafeBytes { key in
                (lower.map { !orderedKeyPrecedes(key, $0) } ?? true) && (upper.map { orderedKeyPrecedes(key, $0) } ?? true)
            }
            if inRange { records.append((key.bytes, record.value)) }
        }
        return records.sorted { $0.key.lexicographicallyPrecedes($1.key) }
    }

    /// After the group's commit (the real table has it all) or its failure (none of it).
    func discardStaged() {
        // Kept at their size (unless huge): the next group is likely as large, and a
        // dictionary regrowing rehashes every key.
        staged.removeAll(keepingCapacity: staged.capacity <= Self.keptCapacity)
        appended.removeAll(keepingCapacity: appended.capacity <= Self.keptCapacity)
        order.removeAll(keepingCapacity: order.capacity <= Self.keptCapacity)
        countDelta = 0
        endTransaction()
    }

    // MARK: StorageTable

    var path: String { base.path }
    var recordCount: Int { get throws { staging.isDirect ? try base.recordCount : try base.recordCount + countDelta } }
    var byteCount: UInt64 { get throws { try base.byteCount } }

    func withValue<R>(forKey key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        // Nothing staged (the first block of a group reads): no key copied.
        if !staging.isDirect, !staged.isEmpty, let record = staged[StagedKey(Array(key))] {
            guard let value = record.value else { return nil }
            return try value.withUnsafeBytes(body)
        }
        return try base.withValue(forKey: key, body)
    }

    /// The staged records answer for their keys; the rest go to the base table in one call.
    func withValues(forKeys keys: [[UInt8]], _ body: (Int, UnsafeRawBufferPointer?) throws -> Void) throws {
        if staging.isDirect || staged.isEmpty { return try base.withValues(forKeys: keys, body) }
        let unstaged = keys.indices.filter { staged[StagedKey(keys[$0])] == nil }
        var fromBase: [Int: [UInt8]] = [:]
        try base.withValues(forKeys: unstaged.map { keys[$0] }) { index, value in
            if let value { fromBase[unstaged[index]] = Array(value) }
        }
        for (index, key) in keys.enumerated() {
            let value = staged[StagedKey(key)].map { $0.value } ?? fromBase[index]
            if let value { try value.withUnsafeBytes { try body(index, $0) } } else { try body(index, nil) }
        }
    }

    func setValue(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer) throws {
        if staging.isDirect { return try base.setValue(value, forKey: key) }
        try stage(Array(key), Array(value))
    }

    @discardableResult
    func removeValue(forKey key: UnsafeRawBufferPointer) throws -> Bool {
        if staging.isDirect { return try base.removeValue(forKey: key) }
        let present = try withValue(forKey: key) { _ in true } != nil
        try stage(Array(key), nil)
        return present
    }

    func reserveCapacity(_ records: Int) throws {
        if staging.isDirect { try base.reserveCapacity(records) }
    }

    func compact() throws {
        try compact { _ in }
    }

    func compact(progress: (_ recordsCopied: Int) -> Void) throws {
        guard staging.isDirect else {
            throw CabinetError.readOnly(path: path, reason: "a table cannot be compacted while a commit group stages records in it")
        }
        try base.compact(progress: progress)
    }

    func forEach(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        if staging.isDirect || staged.isEmpty { return try base.forEach(body) }
        var goOn = true
        try base.forEach { key, value in
            if let record = staged[StagedKey(Array(key))] {
                guard let newValue = record.value else { return true }
                goOn = try newValue.withUnsafeBytes { try body(key, $0) }
            } else {
                goOn = try body(key, value)
            }
            return goOn
        }
        guard goOn else { return }
        for key in appended {
            guard let value = staged[StagedKey(key)]?.value else { continue }
            let more = try key.withUnsafeBytes { key in try value.withUnsafeBytes { try body(key, $0) } }
            if !more { return }
        }
    }

    func beginTransaction() throws {
        if staging.isDirect { return try base.beginTransaction() }
        undo.removeAll(keepingCapacity: true)
        inTransaction = true
        appendedAtBegin = appended.count
        orderAtBegin = order.count
    }

    func commitTransaction() throws {
        if staging.isDirect { return try base.commitTransaction() }
        endTransaction()
    }

    private func endTransaction() {
        inTransaction = false
        // A block that staged a whole import would otherwise keep its undo's size for good.
        undo.removeAll(keepingCapacity: undo.capacity <= Self.keptCapacity)
    }

    /// Up to how many entries a dictionary of keys keeps its room when emptied.
    private static let keptCapacity = 4096

    func abortTransaction() throws {
        if staging.isDirect { return try base.abortTransaction() }
        guard inTransaction else { return }
        for (key, before) in undo {
            if let current = staged[key] { countDelta -= Self.countChange(current) }
            staged[key] = before
            if let before { countDelta += Self.countChange(before) }
        }
        appended.removeSubrange(appendedAtBegin...)
        order.removeSubrange(orderAtBegin...)
        endTransaction()
    }

    // MARK: Staging

    private func stage(_ bytes: [UInt8], _ value: [UInt8]?) throws {
        let key = StagedKey(bytes)
        let before = staged[key]
        if inTransaction, undo.index(forKey: key) == nil { undo[key] = .some(before) }
        let inBase: Bool
        if let before {
            inBase = before.inBase
            countDelta -= Self.countChange(before)
        } else {
            inBase = try bytes.withUnsafeBytes { try base.withValue(forKey: $0) { _ in true } } != nil
            if !inBase { appended.append(bytes) }
            order.append(bytes)
        }
        let record = Staged(value: value, inBase: inBase)
        staged[key] = record
        countDelta += Self.countChange(record)
        staging.stagedBytes += bytes.count + (value?.count ?? 0)
    }

    /// How a staged record changes the count of the real table's records.
    private static func countChange(_ record: Staged) -> Int {
        switch (record.inBase, record.value != nil) {
        case (false, true): 1
        case (true, false): -1
        default: 0
        }
    }
}

/// A staged record's key. Its bytes are hashed once, as one run (an array of
/// bytes hashes each byte on its own, which cost several percent of a pool
/// write), when the key is made: a staging looks one key up four times, and a
/// growing dictionary rehashes every key it holds.
private struct StagedKey: Hashable {
    let bytes: [UInt8]
    private let bytesHash: Int

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        var hasher = Hasher()
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        bytesHash = hasher.finalize()
    }

    static func == (left: StagedKey, right: StagedKey) -> Bool {
        left.bytesHash == right.bytesHash && left.bytes == right.bytes
    }

    func hash(into hasher: inout Hasher) { hasher.combine(bytesHash) }
}

/// The staged tables of the pool's write blocks, one per real table, made the
/// first time a context asks for that table. Used by the writer queue only.
final class GroupStaging {
    private(set) var tables: [ObjectIdentifier: StagedTable] = [:]
    /// Set while a block upgrades or compacts, after the group so far was
    /// committed: the staged tables pass every call to the real ones.
    var isDirect = false
    /// Bytes staged since the last commit (keys and values, each write counted): the group's size.
    var stagedBytes = 0

    /// The staged view of `table` (ordered, for an ordered table).
    func table(over table: any StorageTable, named name: String) -> StagedTable {
        if let staged = tables[ObjectIdentifier(table)] { return staged }
        let staged = (table as? any OrderedStorageTable).map { StagedOrderedTable(ordered: $0, name: name, staging: self) }
            ?? StagedTable(base: table, name: name, staging: self)
        tables[ObjectIdentifier(table)] = staged
        return staged
    }

    /// The staged view of the table called `name`, if a context has made one.
    func table(named name: String) -> StagedTable? {
        tables.values.first { $0.name == name }
    }

    var hasStagedRecords: Bool { tables.values.contains(where: \.hasStagedRecords) }

    func discardStaged() {
        for table in tables.values { table.discardStaged() }
        stagedBytes = 0
    }
}
