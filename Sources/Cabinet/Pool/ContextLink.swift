import CabinetStorage

/// A pool block's tie to its pool: the ``StoreLink`` of the store a block is
/// given. A read block's store may not write at all; a write block's store
/// stages its saves in the group's staging (committed with the group), and
/// writes that are not a save while holding the pool's lock exclusively (no
/// read block is running, so every read sees whole saves); the pool is told
/// what each commit changed.
///
/// Used by one thread at a time, as its store is.
final class ContextLink: StoreLink {
    let allowsWrites: Bool
    private let pool: PoolCore
    /// A write block's commit group: its saves are staged there (see `WriteGroup`).
    private let group: WriteGroup?
    /// How deep this context is inside writes that hold the lock (a save that
    /// replays a journal writes inside a write); 1 from the start when the
    /// whole block holds the lock already (a pool that serializes its blocks).
    private var depth: Int

    /// An observation's read block: every table it reads records what it read (see ``ReadRegion``).
    private let recorder: RegionRecorder?

    init(pool: PoolCore, group: WriteGroup?, holdsLock: Bool, recorder: RegionRecorder? = nil) {
        self.pool = pool
        self.group = group
        self.recorder = recorder
        allowsWrites = group != nil
        depth = holdsLock ? 1 : 0
    }

    /// A write block's decoded list nodes, kept between the blocks (see ``ListNodeCache``).
    var listNodes: ListNodeCache? { group?.listNodes }

    /// The lists this block's saves keep for the group's commit (see ``PendingLists``); `nil` unless saves stage.
    var pendingLists: PendingLists? {
        guard let group, stages, !group.committedInBlock else { return nil }
        return group.pendingLists
    }

    /// Whether a save goes to the group's staging rather than to the tables.
    var stages: Bool { group.map { !$0.staging.isDirect } ?? false }

    var ownsBackend: Bool { false }
    var isPoolBlock: Bool { true }

    func openedAuxiliaryTable(named name: String) -> (any StorageTable)? {
        pool.template.auxiliaryTables[name].map { view(of: $0, named: name) }
    }

    func commit(_ batch: WriteBatch, of store: ObjectStore) throws {
        if stages { return try stage(batch) }
        try store.commitToBackend(batch)
    }

    /// A read block's writes are refused; a write block's save is staged for
    /// the group's commit; other writes (an upgrade, a compaction) hold the
    /// pool's lock and then the backend's commit lock. Whatever was committed is
    /// announced to the pool's subscribers.
    func writingTables<R>(of store: ObjectStore, announcing committed: (() -> WriteBatch?)?, _ body: () throws -> R) throws -> R {
        let summary = { committed?().map(store.saveSummary(of:)) }
        if committed != nil && stages { return try stage(announcing: summary, body) }
        // The pool's lock keeps this process's read blocks out; the commit lock keeps readers in other processes out.
        return try write(path: store.path, announcing: summary) { try store.changingTables(body) }
    }

    /// The view of `table` this context reads and writes: the group's staged one in a write block.
    func view(of table: any StorageTable, named name: String) -> any StorageTable {
        if let recorder {
            if let ordered = table as? any OrderedStorageTable { return RecordingOrderedTable(ordered: ordered, name: name, recorder: recorder) }
            return RecordingTable(base: table, name: name, recorder: recorder)
        }
        return group.map { $0.staging.table(over: table, named: name) } ?? table
    }

    /// ``view(of:named:)`` for an ordered table: its staged view scans in order too.
    func orderedView(of table: any OrderedStorageTable, named name: String) -> any OrderedStorageTable {
        if let recorder { return RecordingOrderedTable(ordered: table, name: name, recorder: recorder) }
        guard let group else { return table }
        // The staging makes an ordered view over an ordered table, always.
        guard let ordered = group.staging.table(over: table, named: name) as? any OrderedStorageTable else {
            preconditionFailure("Cabinet: the staged view of the ordered table \(name) is not ordered")
        }
        return ordered
    }

    /// Runs `body`, a save that writes the group's staged tables (memory only:
    /// no lock, no commit lock), and records what `summary` then says it
    /// staged, for the group's commit to announce.
    private func stage<R>(announcing summary: () -> SaveSummary?, _ body: () throws -> R) throws -> R {
        guard let group else { preconditionFailure("Cabinet: staging without a commit group") }
        if let failure = group.blockFailure { throw failure }
        // A group that grew large commits first, keeping its journal and memory bounded.
        if group.isLarge { try pool.commitGroup(holdingLock: depth > 0) }
        let result = try body()
        if let summary = summary(), !summary.isNothing { group.staged(summary) }
        return result
    }

    /// Lays a save's `batch` over the group's staged tables: all of it, or,
    /// if reading what the real tables hold fails, none of it.
    private func stage(_ batch: WriteBatch) throws {
        guard let group else { preconditionFailure("Cabinet: staging without a commit group") }
        var prepared: [(table: StagedTable, changes: TableChanges, presence: [Bool?])] = []
        try batch.forEachTable { name, changes in
            // The view the block's store reads (a backend may hand out another object for the same table).
            let table = try group.staging.table(named: name)
                ?? group.staging.table(over: pool.template.backend.openTable(named: name), named: name)
            prepared.append((table, changes, try table.presence(of: changes)))
        }
        for (table, changes, presence) in prepared { table.stage(changes, presence: presence) }
        group.demand(batch.durability)
    }

    /// Runs `body`, which writes tables, holding the pool's lock exclusively, then
    /// announces what `summary` says it committed, if anything. A save that throws
    /// ``CabinetError/Code-swift.struct/saveNotFinished`` is decided (its journal finishes it), so it is announced too.
    ///
    /// In a write block that stages (an upgrade or a compaction: writes that
    /// are not a save), the group so far is committed first, and `body` then
    /// writes the real tables, after it.
    private func write<R>(path: String, announcing summary: () -> SaveSummary?, _ body: () throws -> R) throws -> R {
        guard allowsWrites else {
            throw CabinetError.readOnly(path: path, reason: "a StorePool read block cannot change the store; use write { } instead")
        }
        if let group, !group.staging.isDirect {
            if let failure = group.blockFailure { throw failure }
            try pool.commitGroup(holdingLock: depth > 0)
            group.staging.isDirect = true
            // An upgrade rewrites lists without the cache's ListWriter: no node kept before it is trusted after.
            defer {
                group.staging.isDirect = false
                group.listNodes.removeAll()
            }
            return try write(path: path, announcing: summary, body)
        }
        depth += 1
        defer { depth -= 1 }
        let result: R
        do {
            result = depth == 1 ? try pool.writingExclusively(body) : try body()
        } catch let error as CabinetError where error.leavesSaveCommitted {
            if let summary = summary(), !summary.isNothing { pool.publish(summary) }
            throw error
        }
        if let summary = summary(), !summary.isNothing { pool.publish(summary) }
        return result
    }
}
