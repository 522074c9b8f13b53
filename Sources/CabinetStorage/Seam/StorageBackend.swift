/// Where a store keeps its tables, and (through ``services``) what it keeps
/// beside them. ``TokyoCabinetBackend`` keeps each table in a Tokyo Cabinet
/// hash database file of one directory; ``MemoryBackend`` keeps everything in
/// memory, and is the smallest complete backend to read.
///
/// The layer above talks to a store only through this protocol,
/// ``StorageTable`` and ``StoreServices``; this is the whole contract. Every
/// requirement must be implemented (there are no defaults, but for the
/// progress-reporting ``replaceContents(with:formatMarker:progress:)``), and every one that
/// can fail throws a ``CabinetError`` that names where (a table's ``location(ofTable:)``,
/// the store's ``path``); none traps on damaged data. A minimal backend's shape:
/// ```swift
/// final class KeyValueBackend: StorageBackend, StoreServices {
///     let path: String                                   // "redis://host:6379/music"
///     var services: any StoreServices { self }           // journal, marker, catalog kept beside the tables
///     init(path: String) throws { ... }                  // connects, takes the store's lock (see StoreServices.isReadOnly)
///
///     func openTable(named name: String) throws -> any StorageTable { ... }   // creates it if missing
///     func openOrderedTable(named name: String) throws -> any OrderedStorageTable { ... }   // for indexes
///     func removeTable(named name: String) throws { ... }
///     func tableNames() throws -> [String] { ... }
///     func hasTable(named name: String) throws -> Bool { ... }
///     func location(ofTable name: String) -> String { path + "/" + name }
///     func storageProblems() throws -> [StorageProblem] { [] }               // nothing but tables where they are kept
///     func replaceContents(with source: any StorageBackend, formatMarker: String) throws { ... }
///     func commit(_ batch: WriteBatch) throws { ... }   // every change of a save, all or nothing
///     var hasUnfinishedCommit: Bool { false }            // nothing decided and left half-applied
///     func finishUnfinishedCommit() throws -> Int? { nil }
///     func close() { ... }                               // closes the tables, releases the lock
///     // StoreServices: isReadOnly, needsJournal, the journal, the format marker, the catalog, pendingRecovery()
/// }
/// ```
/// Opening is the backend's own initializer (each needs its own address and
/// options). It must take the store's lock before anything else (a store
/// other processes can reach; see ``StoreServices/isReadOnly``), and a
/// writable open must finish what a killed writer left inside the backend
/// itself (a table's half-done transaction, an interrupted ``replaceContents(with:formatMarker:)``)
/// before it returns; the journal's replay is the layer above's, through ``services``.
///
/// Table names are checked (`TableName`) before they reach a backend: 1 to
/// 255 bytes, no leading dot, no `/`, newline or NUL, and no `.wal` or `.tmp.N`
/// ending (Tokyo Cabinet's own files).
///
/// Beyond this contract, a backend says what more it can do by conforming to
/// other protocols, which the layer above asks for with `as?`:
/// - ``ConcurrentReadingBackend``: its tables may be read from several threads
///   at once. Without it a writable `StorePool` runs its read blocks one at a
///   time (a read-only one always does): conform if the reads allow it.
/// - ``OtherWritersBackend``: other processes write the store at the same time.
/// - ``CommitWatchingBackend``: a read-only open learns of another process's commits.
public protocol StorageBackend: AnyObject {
    /// Where the store is kept (a directory path, a URL, or a name for in-memory stores).
    var path: String { get }

    /// The journal, format marker, catalog, lock and pending recovery of this
    /// store: see ``StoreServices`` for why they are a protocol of their own.
    var services: any StoreServices { get }

    /// Opens the table `name`, creating it (empty, whole or not at all) if it
    /// does not exist. Opening an open table returns the same table. An ordered
    /// table (``openOrderedTable(named:)``) opened here is returned as itself, an
    /// ``OrderedStorageTable``: a copy tells the two kinds apart by `is`, and
    /// makes its copy the same kind.
    ///
    /// Throws ``CabinetError/notADatabase(_:reason:)`` when something that is
    /// not a table is in its place, ``CabinetError/readOnly(path:reason:)`` when
    /// a read-only store would have to create it, ``CabinetError/storeClosed(path:)``
    /// after ``close()``, and ``CabinetError/backendFailure(_:operation:underlying:)`` (or
    /// ``CabinetError/systemCallFailure(_:operation:errno:message:)``) otherwise.
    func openTable(named name: String) throws -> any StorageTable

    /// Opens the ordered table `name` (see ``OrderedStorageTable``), creating it
    /// empty if it does not exist. Opening an open table returns the same table;
    /// ``openTable(named:)`` opens it too, as a plain table.
    ///
    /// Throws as ``openTable(named:)`` does, and ``CabinetError/notADatabase(_:reason:)``
    /// when a table that keeps no order is in its place.
    func openOrderedTable(named name: String) throws -> any OrderedStorageTable

    /// Removes table `name` and all that is kept of it (a file and its
    /// transaction log), closing it if it is open; a table that does not exist
    /// is not an error. Only for tables whose content can be made again (a
    /// class's index file, rebuilt from its records): nothing journals it.
    func removeTable(named name: String) throws

    /// The names of the tables that exist, whether opened or not, sorted. Only
    /// tables: never the services' own values, nor leftovers of interrupted work.
    func tableNames() throws -> [String]

    /// Whether anything is in table `name`'s place: a table, or (for a file
    /// backend) a file that may be a damaged one. `false` means opening it would
    /// create it, which the layer above refuses for a table its catalog lists.
    func hasTable(named name: String) throws -> Bool

    /// Where table `name` is or would be kept, for messages (a file's path, a
    /// key's name), without opening it: the ``StorageTable/path`` it opens with.
    func location(ofTable name: String) -> String

    /// What `cabinet verify` reports that only the backend can see, each with
    /// what to do about it: anything in the store's place that is neither a
    /// table nor one of the services' values (a foreign file, a link), and
    /// leftovers of interrupted work (a table's unfinished transaction, a
    /// half-written copy). Empty for a store that holds only what it should.
    /// It only looks, writing nothing; it does not read the tables' records
    /// (the layer above does, through ``openTable(named:)``).
    func storageProblems() throws -> [StorageProblem]

    /// Replaces everything this store holds with a copy of `source`: its tables
    /// and their records (tables `source` lacks are removed), its catalog (or
    /// none, if `source` has none), and `formatMarker` as the format marker (the
    /// layer above decides it: `source` may have none and still have a format).
    /// Any journal is removed. This is a restore, and a backup into an existing backend.
    ///
    /// All or nothing, even if the process dies at any instant: until the
    /// replacement is decided the store is as it was; once it is, the next
    /// writable open finishes it and a read-only open refuses the store
    /// (Tokyo Cabinet copies `source` into a folder inside the store, renames
    /// it to decide, then moves the files in). `source` is only read; its
    /// ``StoreServices/pendingRecovery()`` must be empty. Tables of this store
    /// that were open are closed: open them again.
    func replaceContents(with source: any StorageBackend, formatMarker: String) throws

    /// ``replaceContents(with:formatMarker:)``, calling `progress` as the records
    /// of `source` are copied (see ``StoreProgress``). The one requirement with a
    /// default: a backend written before it copies without reports.
    ///
    /// ```swift
    /// try target.replaceContents(with: source, formatMarker: marker) { print($0) }
    /// ```
    func replaceContents(with source: any StorageBackend, formatMarker: String, progress: StoreProgress.Handler?) throws

    /// Commits every change of `batch`, in all its tables, all or nothing:
    /// a save's records, list nodes, index entries and named buffers. Tables
    /// the batch names that do not exist are created, except one the store's
    /// catalog lists (its file is gone): that throws ``CabinetError/missingClassFile(_:classID:)``
    /// (check every table before changing any). A table created here is a plain
    /// one, as ``openTable(named:)`` makes: the layer above opens an ordered table
    /// with ``openOrderedTable(named:)`` before a batch writes it. Apply each
    /// table's changes in the order ``TableChanges/forEach(_:)`` gives them: an
    /// unindexed table's changes may name a key twice, and the last one stands.
    ///
    /// The batch's ``WriteBatch/catalogAdditions`` join the store's catalog
    /// (``StoreServices/readCatalog()``) in the same commit, after the tables
    /// (a batch may add to the catalog and change no table). If one clashes with
    /// the catalog as it is when the batch commits (``StoreCatalog/adding(_:refusal:)``:
    /// another writer gave the tag to another table), throw
    /// ``CabinetError/Code-swift.struct/saveConflict`` with nothing written; the
    /// layer above chooses again.
    ///
    /// ```swift
    /// var batch = WriteBatch()
    /// batch.set(record, forKey: rowKey, inTable: "Song")
    /// try backend.commit(batch)
    /// ```
    /// When it returns, every change is where the store is kept (and, for a
    /// backend that promises it, on the disk). When it throws, nothing of the
    /// batch was made, whenever the process dies, and the same batch may be
    /// committed again; except ``CabinetError/Code-swift.struct/saveNotFinished``:
    /// the batch is decided (kept whole, as a journal), some table could not
    /// take it yet, and ``finishUnfinishedCommit()`` (or the next commit, or
    /// the next writable open) finishes it. Tokyo Cabinet writes a batch that
    /// changes several files to its journal first (`JournaledCommit`); Redis
    /// sends it in one `MULTI`/`EXEC`; the memory backend applies it at once.
    ///
    /// The batch's ``WriteBatch/durability`` says how far it must have gone
    /// when this returns. At ``CommitDurability/asOpened`` (the default), as far
    /// as the backend goes when opened as it was. At ``CommitDurability/flushed``,
    /// on stable storage, surviving a power loss, and with it every batch this
    /// backend committed before: flush what it wrote (files, their directory
    /// entries), or have the server confirm it did. A backend that cannot promise
    /// it throws ``CabinetError/Code-swift.struct/durabilityUnavailable`` before
    /// writing anything; one that wrote the batch and could not confirm its flush
    /// throws ``CabinetError/Code-swift.struct/durabilityUnconfirmed`` (the batch
    /// is committed). A backend that keeps nothing on a disk (memory) has
    /// nothing to flush and commits such a batch as any other.
    func commit(_ batch: WriteBatch) throws

    /// Whether a batch was decided but not applied in full (see ``commit(_:)``):
    /// reads must wait for ``finishUnfinishedCommit()``. Cheap: asked before every save.
    var hasUnfinishedCommit: Bool { get }

    /// Finishes what a decided batch left (a kill between its journal and its
    /// tables, or a table that failed to take it), and returns the size of
    /// what it replayed; `nil` if nothing was left. Called by a writer before
    /// it reads or writes again; idempotent.
    @discardableResult
    func finishUnfinishedCommit() throws -> Int?

    /// Closes every table and releases the store's lock. Calling it twice does nothing.
    ///
    /// What was committed stays where the store is kept, for the next open (a
    /// new backend on the same directory, address or in-memory contents). The
    /// tables handed out, the backend's own requirements and its ``services``
    /// throw ``CabinetError/storeClosed(path:)`` afterwards; a backend whose store is
    /// the object itself (``MemoryBackend``) may instead keep serving, so that
    /// the next store is opened on the same object.
    func close()
}

/// One thing wrong in a store, with where it is: see ``StorageBackend/storageProblems()``.
public struct StorageProblem: Sendable, CustomStringConvertible {
    /// What kind of damage a problem is, for code that acts on some kinds
    /// (`nil` for problems that only say so in their reason). Layers above the
    /// storage add their own kinds, as the `StoredLists` checks do.
    public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }
    }

    public var location: RecordLocation
    /// What is wrong and what to do about it.
    public var reason: String
    public var kind: Kind?
    public var description: String { "\(location): \(reason)" }

    public init(location: RecordLocation, reason: String, kind: Kind? = nil) {
        self.location = location
        self.reason = reason
        self.kind = kind
    }
}

extension StorageBackend {
    /// Copies without reports: the default for a backend that implements only
    /// ``replaceContents(with:formatMarker:)``.
    public func replaceContents(with source: any StorageBackend, formatMarker: String, progress: StoreProgress.Handler?) throws {
        try replaceContents(with: source, formatMarker: formatMarker)
    }

    /// Copies `source`'s tables record by record, its catalog and `formatMarker`
    /// into this backend, which should be new and empty: the marker first, then
    /// the tables (in batches, ``writeRecords(toTable:_:)``), and the catalog last,
    /// after the tables it lists, as a store writes them. Not all-or-nothing by
    /// itself: callers copy into a store that is not yet in place (see ``replaceContents(with:formatMarker:)``).
    package func copyContents(of source: any StorageBackend, formatMarker: String, progress: StoreProgress.Handler? = nil) throws {
        try services.writeFormatMarker(formatMarker)
        let names = try source.tableNames()
        var counter = try ProgressCounter(progress, recordsOf: names, in: source)
        for name in names {
            counter.begin(name)
            let from = try source.openTable(named: name)
            // An ordered table stays ordered: the copy is made the same kind before any record goes in.
            let to: any StorageTable = from is any OrderedStorageTable ? try openOrderedTable(named: name) : try openTable(named: name)
            try to.reserveCapacity(from.recordCount)
            try writeRecords(toTable: name) { put in
                try from.forEach { key, value in
                    try put(key, value)
                    counter.advance()
                    return true
                }
            }
            counter.report()
        }
        counter.finish()
        if let catalog = try source.services.readCatalog() { try services.writeCatalog(catalog) }
    }

    /// Writes the records `produce` puts into table `name`, through batches
    /// committed as they fill (``commit(_:)``), so a copy of a table of any size
    /// holds a bounded part of it in memory. Not all-or-nothing: for copies
    /// into a store that is not in place yet. The table is made a plain one if
    /// it does not exist; open an ordered one first.
    ///
    /// ```swift
    /// try backend.writeRecords(toTable: "Song") { put in
    ///     try source.forEach { key, value in try put(key, value); return true }
    /// }
    /// ```
    package func writeRecords(toTable name: String,
                              _ produce: (_ put: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws {
        var changes = TableChanges(indexed: false)   // each key once: a log, no lookups
        func commitChanges() throws {
            var batch = WriteBatch()
            batch.add(changes, toTable: name)
            try commit(batch)
            changes = TableChanges(indexed: false)
        }
        try produce { key, value in
            _ = changes.set(key, to: value)
            if changes.byteCount >= StorageLimits.copyBatchBytes { try commitChanges() }
        }
        if !changes.isEmpty { try commitChanges() }
    }
}
