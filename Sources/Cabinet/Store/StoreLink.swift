import CabinetStorage

/// What a store is attached to, given when it is made: its own backend
/// (``DirectLink``), or a ``StorePool`` block (`ContextLink`). The store
/// encodes its saves and reads its tables; the link decides where a save's
/// batch goes (the committer) and which view of a table the store sees (the
/// table source), so the store keeps no pool mode of its own.
///
/// Composed as GRDB composes its `DatabasePool` around a `Database` that knows
/// nothing of pools: a pool makes each block's store with a link to itself.
protocol StoreLink {
    /// Whether the store's ``ObjectStore/close()`` closes the backend: a pool's blocks share the pool's.
    var ownsBackend: Bool { get }

    /// Whether the store is a pool block's, made for one block from the pool's
    /// registered classes. Such a store registers no class, leaves metadata
    /// upgrades to the pool's root store, keeps its rows dense only until its
    /// first scan, and fails its save when a row reservation fails (the block can
    /// run again) where a store of its own waits for its next save to try again.
    var isPoolBlock: Bool { get }

    /// Whether the store may write at all: a pool's read block may not.
    var allowsWrites: Bool { get }

    /// Decoded list nodes kept between a pool's write blocks (see ``ListNodeCache``).
    var listNodes: ListNodeCache? { get }

    /// The lists this store's saves keep for a pool group's commit (see ``PendingLists``); `nil` unless saves stage.
    var pendingLists: PendingLists? { get }

    /// The view of `table` the store reads and writes: the table itself, or a
    /// pool write block's view with the group's staged batches laid over it.
    func view(of table: any StorageTable, named name: String) -> any StorageTable

    /// ``view(of:named:)`` for an ordered table (an index): its view scans in order too.
    func orderedView(of table: any OrderedStorageTable, named name: String) -> any OrderedStorageTable

    /// A table holding no class that was opened before the store was made (a
    /// pool opens them once for all its blocks); `nil` to look it up in the backend.
    func openedAuxiliaryTable(named name: String) -> (any StorageTable)?

    /// Hands a save's encoded `batch` on: to the backend, or to a pool group's
    /// staging, whose commit hands it on with the group's other batches.
    func commit(_ batch: WriteBatch, of store: ObjectStore) throws

    /// Runs `body`, which writes the store's tables, where the link allows it,
    /// and tells whoever listens what a save committed: `committed` gives the
    /// save's batch once `body` ran (`nil` for writes that are not a save).
    func writingTables<R>(of store: ObjectStore, announcing committed: (() -> WriteBatch?)?, _ body: () throws -> R) throws -> R
}

/// The link of a store that owns its backend: its saves go to the backend,
/// it sees the tables as they are, and its writes hold the backend's commit
/// lock (other processes' readers wait; see ``ObjectStore/changingTables(_:)``).
struct DirectLink: StoreLink {
    var ownsBackend: Bool { true }
    var isPoolBlock: Bool { false }
    var allowsWrites: Bool { true }
    var listNodes: ListNodeCache? { nil }
    var pendingLists: PendingLists? { nil }

    func view(of table: any StorageTable, named name: String) -> any StorageTable { table }

    func orderedView(of table: any OrderedStorageTable, named name: String) -> any OrderedStorageTable { table }

    func openedAuxiliaryTable(named name: String) -> (any StorageTable)? { nil }

    func commit(_ batch: WriteBatch, of store: ObjectStore) throws {
        try store.commitToBackend(batch)
    }

    func writingTables<R>(of store: ObjectStore, announcing committed: (() -> WriteBatch?)?, _ body: () throws -> R) throws -> R {
        try store.changingTables(body)
    }
}
