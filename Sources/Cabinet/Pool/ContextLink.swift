import CabinetStorage
import Logging

/// What every context of a pool is made from: the pool's open backend and the
/// classes its root store registered, with their tables, all opened once when
/// the pool was made (so no table is opened, and no catalog written, while
/// blocks run on several threads).
///
/// `@unchecked Sendable`: nothing in it changes after the pool's initializer,
/// and the tables are only read from several threads at once, which the
/// backend allows (``ConcurrentReadingBackend``) or the pool serializes.
final class ContextTemplate: @unchecked Sendable {
    struct RegisteredClass {
        let type: StoredObject.Type
        let name: String
        let table: any StorageTable
        let writesLists: Bool
        let indexes: ClassIndexes?
    }

    /// The store that opened the backend, registered the classes and closes it all at the end.
    let root: ObjectStore
    let backend: any StorageBackend
    let options: ObjectStore.Options
    let recordFormat: RecordFormat
    let catalog: StoreCatalog?
    /// The root store's logger: every context logs where the pool does.
    let logger: Logger
    let classes: [RegisteredClass]
    /// The largest class ID of `classes`, for a context to size its tables once.
    let largestClassID: UInt8
    /// The tables holding no class (out-of-line lists, named buffers) that exist
    /// when the pool is made, opened once; one made later is found as the root finds it.
    let auxiliaryTables: [String: any StorageTable]

    init(root: ObjectStore) {
        self.root = root
        backend = root.backend
        options = root.options
        recordFormat = root.recordFormat
        logger = root.logger
        classes = root.entriesByName.keys.sorted().compactMap { name in
            root.entriesByName[name].map { RegisteredClass(type: $0.type, name: name, table: $0.table, writesLists: $0.writesLists, indexes: $0.indexes) }
        }
        largestClassID = root.entriesByName.values.map(\.metadata.classID).max() ?? 0
        // Found as the root store would find them (and not at all if that throws: a
        // context then looks as the root does, and reports what it finds).
        auxiliaryTables = ObjectStore.auxiliaryTableNames.reduce(into: [:]) { tables, name in
            if let table = try? root.auxiliaryTable(named: name, creating: false) { tables[name] = table }
        }
        // After the lookup above, which catalogs a table the catalog did not list yet.
        catalog = root.catalog
    }
}

/// A context's tie to its pool, consulted wherever a store writes its tables
/// (``ObjectStore/writingTables(announcing:_:)``): a read block's context may
/// not write at all; a write block's context writes while holding the pool's
/// lock exclusively (no read block is running, so every read sees whole saves),
/// and tells the pool what each save committed.
///
/// Used by one thread at a time, as its store is.
final class ContextLink {
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
    func stage<R>(announcing summary: () -> SaveSummary?, _ body: () throws -> R) throws -> R {
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
    func stage(_ batch: WriteBatch) throws {
        guard let group else { preconditionFailure("Cabinet: staging without a commit group") }
        var prepared: [(table: StagedTable, changes: TableChanges, presence: [Bool?])] = []
        try batch.forEachTable { name, changes in
            // The view the block's store reads (a backend may hand out another object for the same table).
            let table = try group.staging.table(named: name)
                ?? group.staging.table(over: pool.template.backend.openTable(named: name), named: name)
            prepared.append((table, changes, try table.presence(of: changes)))
        }
        for (table, changes, presence) in prepared { table.stage(changes, presence: presence) }
    }

    /// Runs `body`, which writes tables, holding the pool's lock exclusively, then
    /// announces what `summary` says it committed, if anything. A save that throws
    /// ``CabinetError/Code-swift.struct/saveNotFinished`` is decided (its journal finishes it), so it is announced too.
    ///
    /// In a write block that stages (an upgrade or a compaction: writes that
    /// are not a save), the group so far is committed first, and `body` then
    /// writes the real tables, after it.
    func write<R>(path: String, announcing summary: () -> SaveSummary?, _ body: () throws -> R) throws -> R {
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
        } catch let error as CabinetError where error.code == .saveNotFinished {
            if let summary = summary(), !summary.isNothing { pool.publish(summary) }
            throw error
        }
        if let summary = summary(), !summary.isNothing { pool.publish(summary) }
        return result
    }
}
