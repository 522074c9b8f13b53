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
    let base: any StorageTable
    /// The real table's name, as a batch names it.
    let name: String
    unowned let staging: GroupStaging
    /// The group's changes to this table, in the order first staged (the commit
    /// writes them so, the same at every run); a change's `isNew`: the real
    /// table lacks the key. The same `TableChanges` a save's batch is made of.
    private var staged = TableChanges()
    /// Staged records present minus the real table's records staged as removed.
    private var countDelta = 0

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
    func forEachStaged(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer?) throws -> Void) rethrows {
        try staged.forEachChange { key, value, isNew in
            if value != nil || !isNew { try body(key, value) }
            return true
        }
    }

    /// The staged records whose keys are at least `lower` and below `upper`, in key order.
    func stagedRecords(from lower: UnsafeRawBufferPointer?, to upper: UnsafeRawBufferPointer?) -> [(key: [UInt8], value: [UInt8]?)] {
        var records: [(key: [UInt8], value: [UInt8]?)] = []
        staged.forEach { key, value in
            if (lower.map { !orderedKeyPrecedes(key, $0) } ?? true) && (upper.map { orderedKeyPrecedes(key, $0) } ?? true) {
                records.append((Array(key), value.map(Array.init)))
            }
            return true
        }
        return records.sorted { $0.key.lexicographicallyPrecedes($1.key) }
    }

    /// After the group's commit (the real table has it all) or its failure (none of it).
    func discardStaged() {
        staged = TableChanges()
        countDelta = 0
    }

    /// Whether the real table has each key of `changes` that is not staged yet,
    /// in their order (`nil` for one already staged): the one part of staging
    /// that reads, so may fail, done for a whole batch before any of it is staged.
    func presence(of changes: TableChanges) throws -> [Bool?] {
        var inBase: [Bool?] = []
        inBase.reserveCapacity(changes.count)
        try changes.forEach { key, _ in
            inBase.append(staged.contains(key) ? nil : try base.withValue(forKey: key) { _ in true } != nil)
            return true
        }
        return inBase
    }

    /// Stages every change of `changes`, given ``presence(of:)``'s answer for them.
    func stage(_ changes: TableChanges, presence: [Bool?]) {
        var index = 0
        changes.forEach { key, value in
            // `nil`: staged when asked, so its first staging knows (never called then).
            stage(key, value) { presence[index] ?? true }
            index += 1
            return true
        }
    }

    // MARK: StorageTable

    var path: String { base.path }
    var recordCount: Int { get throws { staging.isDirect ? try base.recordCount : try base.recordCount + countDelta } }
    var byteCount: UInt64 { get throws { try base.byteCount } }

    func withValue<R>(forKey key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        // Nothing staged (the first block of a group reads): no lookup.
        if !staging.isDirect, !staged.isEmpty, let change = try staged.withChange(of: key, { value in try value.map(body) }) {
            return change
        }
        return try base.withValue(forKey: key, body)
    }

    /// The staged records answer for their keys; the rest go to the base table in one call.
    func withValues(forKeys keys: [[UInt8]], _ body: (Int, UnsafeRawBufferPointer?) throws -> Void) throws {
        if staging.isDirect || staged.isEmpty { return try base.withValues(forKeys: keys, body) }
        let unstaged = keys.indices.filter { index in keys[index].withUnsafeBytes { !staged.contains($0) } }
        var fromBase: [Int: [UInt8]] = [:]
        try base.withValues(forKeys: unstaged.map { keys[$0] }) { index, value in
            if let value { fromBase[unstaged[index]] = Array(value) }
        }
        for (index, key) in keys.enumerated() {
            let value = key.withUnsafeBytes { key in staged.withChange(of: key) { $0.map(Array.init) } } ?? fromBase[index]
            if let value { try value.withUnsafeBytes { try body(index, $0) } } else { try body(index, nil) }
        }
    }

    func setValue(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer) throws {
        if staging.isDirect { return try base.setValue(value, forKey: key) }
        try stage(key, value)
    }

    @discardableResult
    func removeValue(forKey key: UnsafeRawBufferPointer) throws -> Bool {
        if staging.isDirect { return try base.removeValue(forKey: key) }
        let present = try withValue(forKey: key) { _ in true } != nil
        try stage(key, nil)
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
            if let change = try staged.withChange(of: key, { newValue in try newValue.map { try body(key, $0) } ?? true }) {
                goOn = change
            } else {
                goOn = try body(key, value)
            }
            return goOn
        }
        guard goOn else { return }
        // Then the keys the real table lacks, in the order first staged, as Tokyo Cabinet lists records it appended.
        try staged.forEachChange { key, value, isNew in
            guard isNew, let value else { return true }
            return try body(key, value)
        }
    }

    // MARK: Staging

    private func stage(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer?) throws {
        try stage(key, value) { try base.withValue(forKey: key) { _ in true } != nil }
    }

    /// Stages one change; `inBase` says whether the real table has the key,
    /// asked only for a key not staged yet (its first staging knew).
    private func stage(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer?, inBase real: () throws -> Bool) rethrows {
        let inBase: Bool
        if let before = staged.change(of: key) {
            inBase = !before.isNew
            countDelta -= Self.countChange(inBase: inBase, present: before.hasValue)
        } else {
            inBase = try real()
        }
        staged.set(key, to: value, isNew: !inBase)
        countDelta += Self.countChange(inBase: inBase, present: value != nil)
        staging.stagedBytes += key.count + (value?.count ?? 0)
    }

    /// How a staged record changes the count of the real table's records.
    private static func countChange(inBase: Bool, present: Bool) -> Int {
        switch (inBase, present) {
        case (false, true): 1
        case (true, false): -1
        default: 0
        }
    }
}

extension StagedTable: LookupMissVouching {
    /// Asked of the table below: its misses are the ones its file must vouch for
    /// (a miss of a staged removal needs none, and the question costs it nothing more).
    func vouchForLookupMisses() throws { try base.vouchForMisses() }
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
