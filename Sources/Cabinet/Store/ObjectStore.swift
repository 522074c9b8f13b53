import CabinetStorage
import Foundation
import Logging

/// A store of objects: every instance of each registered class, one file per
/// class in a store directory (or in memory).
///
/// ```swift
/// let store = try ObjectStore(path: "/tmp/music")   // a directory, created if missing
/// try store.register(Song.self, Playlist.self)
/// let song = Song(); song.title = "Walking on Sunshine"
/// store.insert(song)
/// try store.save()
/// let songs = try store.fetchAll(Song.self)
/// store.close()
/// ```
/// The store hands out one live instance per row (uniquing), loads related
/// objects lazily (faults), tracks what changed, and writes inserts, updates
/// and deletes together in ``save()``.
///
/// An `ObjectStore` and its objects are not thread-safe: use them from one
/// thread or actor (Swift 6's checking enforces this, as neither is `Sendable`).
/// To share a store among tasks, open a ``StorePool``: each of its blocks gets a store of its own.
public final class ObjectStore {
    /// Choices that change how records are written.
    public struct Options: Sendable, Equatable {
        /// Whether each record starts with the version byte of the class that
        /// wrote it (BNRPersistence's per-instance versioning). On by default;
        /// turn it off only for stores written without it.
        public var perInstanceVersioning = true

        /// The record format; `nil` (the default) takes the store's own, and makes
        /// new stores ``RecordFormat/checksummed``. Ask for ``RecordFormat/plain``
        /// for a new store that BNRPersistence must read.
        public var recordFormat: RecordFormat?

        /// Whether the store's objects take part in Swift's Observation:
        /// `withObservationTracking` (and SwiftUI, and `Observations`) then sees
        /// their `@Stored` properties. Off by default: each observable object
        /// read gets a registrar, and each read and change tells it, which a
        /// store nobody observes should not pay for. See ``StoredObject``.
        public var observable = false

        public init(perInstanceVersioning: Bool = true, recordFormat: RecordFormat? = nil, observable: Bool = false) {
            self.perInstanceVersioning = perInstanceVersioning
            self.recordFormat = recordFormat
            self.observable = observable
        }
    }

    /// The name of the table that holds named buffers.
    public static let namedBuffersTableName = "NamedBuffers"

    /// The tables of a store that hold no class: named buffers and out-of-line lists.
    static let auxiliaryTableNames: Set<String> = [namedBuffersTableName, ListRecords.tableName]

    /// The backend's location: the store directory, or the in-memory store's name.
    public let path: String
    public let options: Options
    /// How this store's records are laid out: decided when the store was created.
    public let recordFormat: RecordFormat
    let backend: any StorageBackend
    /// The classes by type and class ID, shared with the buffers the store reads
    /// so that they can resolve references (see ``ReferenceResolver``).
    let resolver: ReferenceResolver
    var entriesByName: [String: ClassEntry] = [:]
    @exclusivity(unchecked) var isClosed = false
    /// Set while `save()` writes: a change made then (from a `write(to:)`) would be lost, so it stops the program.
    @exclusivity(unchecked) var isSaving = false
    /// Stops the program when two threads use the store at once.
    let useDetector: ConcurrentUseDetector
    /// What the store is attached to: its own backend, or a ``StorePool`` block
    /// (see ``StoreLink``): where its saves go and which view of a table it reads.
    let link: any StoreLink
    /// The backend, if other processes write the store too (Redis), for a store
    /// that is not a pool's context (a context lives for one block, and reads afresh).
    let otherWriters: (any OtherWritersBackend)?
    /// This open's reserved row ranges, on a backend several processes write
    /// (shared with a pool's contexts); `nil` with one writer.
    let rowReservations: RowReservations?
    /// Set while other processes' saves are taken in (``takeInAnnouncedSaves()``), which reads.
    var isTakingInOthersSaves = false
    /// Rows other processes changed that hold unsaved changes here: table → keys (`nil`: all).
    var staleRows: [String: Set<[UInt8]>?] = [:]
    /// Undo and redo of every change to this store's objects; see ``StoreUndoManager``.
    ///
    /// ```swift
    /// store.undoManager.beginGroup(named: "Rename")
    /// list.title = "Road trip"
    /// store.undoManager.endGroup()
    /// try store.undoManager.undo()
    /// ```
    public let undoManager = StoreUndoManager()
    /// The undo group stamp every class entry carries (0: not recording).
    var undoStamp: UndoStamp = 0
    @exclusivity(unchecked) var observers: [(id: Int, handler: (StoreChange) -> Void)] = []
    var nextObserverID = 0
    /// Live queries of this store (``observe(_:where:equals:_:)``), run again after commits.
    var liveObservers: [StoreLiveObserver] = []
    /// Other processes' saves taken in during reads, for the live queries to hear of at the next save or refresh.
    var takenInForObservers: [OthersSave] = []
    /// Changes gathered during an undo or redo, posted together.
    var pendingChange: ([StoredObject], [StoredObject], [StoredObject])?

    /// The tables the store holds (`nil` for a store that has no catalog yet).
    var catalog: StoreCatalog?
    /// Set once a commit of this store was decided but not applied in full
    /// (``CabinetError/Code-swift.struct/saveNotFinished``), or its replay
    /// failed: only then is the backend asked, at every read.
    var commitMayBeUnfinished = false
    /// Whether a save's batch is decided but not applied in full (its journal finishes it).
    var journalAwaitsReplay: Bool {
        guard commitMayBeUnfinished else { return false }
        if backend.hasUnfinishedCommit { return true }
        commitMayBeUnfinished = false
        return false
    }
    /// Whether each read goes through the backend's ``StoreServices/withCommittedState(_:)``:
    /// a read-only store, whose writer may be saving in another process.
    let coordinatesReads: Bool
    /// How many read operations of a read-only store are running, nested (see ``readingCommittedState(_:)``).
    var committedReadDepth = 0
    /// An error found where the API cannot throw (an insert), reported by the next save.
    var deferredSaveError: CabinetError?

    /// Named buffers set or removed since the last save (`nil`: removed).
    var pendingNamedBuffers: [String: [UInt8]?] = [:]
    /// Reused for reading records; taken out while in use so nested reads get their own.
    @exclusivity(unchecked) var readBuffer = DataBuffer(capacity: 256)
    /// Reused for writing records during a save.
    @exclusivity(unchecked) var writeBuffer = DataBuffer(capacity: 256)
    /// Reused for undo snapshots.
    @exclusivity(unchecked) var snapshotBuffer = DataBuffer(capacity: 256)
    /// The undo snapshots that keep list trees, for the saves that delete their nodes.
    let undoListRegistry = UndoListRegistry()
    /// The lists' roots this store saved, on a backend other processes write
    /// (shared with a pool's contexts and group); `nil` with one writer.
    let listRootsWritten: ListRootsWritten?

    /// Where the store reports what it cannot throw: a fault that could not be
    /// loaded (error), a save's journal replayed at open (notice). Set it to
    /// your service's logger, or change its `logLevel`:
    ///
    /// ```swift
    /// let store = try ObjectStore(path: "/var/lib/notes", logger: Logger(label: "notes.store"))
    /// store.logger.logLevel = .warning
    /// ```
    /// Each message carries the store's path, and for record errors the file,
    /// class and row, as metadata (`cabinet.path`, `cabinet.file`, `cabinet.class`, `cabinet.row`).
    public var logger: Logger

    /// Called when a fault's content cannot be loaded by a `@Stored` getter,
    /// which cannot throw. The object keeps its default values and is marked so
    /// that changing and saving it throws instead of overwriting the damaged
    /// record. By default the error is logged to ``logger`` at error level
    /// (swift-log's default handler prints it to standard error). Use
    /// ``load(_:)-(StoredObject)`` to load a fault and get the error thrown instead.
    public lazy var faultErrorHandler: (CabinetError) -> Void = { [weak self] error in
        self?.log(error, level: .error)
    }

    /// Told how a build of a class's indexes goes (when ``register(_:)-(StoredObject.Type)``
    /// builds new indexes from existing objects, and in ``reindex(_:)``), after
    /// every few thousand rows and at the end. See ``IndexBuildProgress``.
    public var indexBuildProgress: ((IndexBuildProgress) -> Void)?

    /// Opens the store directory at `path`, on Tokyo Cabinet, creating it if
    /// missing unless `createIfMissing` is `false`.
    ///
    /// ```swift
    /// let store = try ObjectStore(path: "/tmp/music")
    /// let reader = try ObjectStore(path: "/tmp/music", readOnly: true)           // shares with other readers
    /// let existing = try ObjectStore(path: "/tmp/music", createIfMissing: false)  // a typo is an error, not a new store
    /// ```
    /// A read-only store reads alongside other readers and a writer in another
    /// process, and each of its reads (a fetch, a scan, a fault) sees whole saves
    /// only, the last committed when the read began; it never creates or writes
    /// anything, so it needs only read permission (`save()` with changes throws
    /// ``/CabinetStorage/CabinetError/readOnly(path:reason:)``). It refuses a store with a save a
    /// killed writer left to finish (``/CabinetStorage/CabinetError/recoveryPending(path:reason:)``):
    /// open it writable once first.
    /// Throws ``/CabinetStorage/CabinetError/notADirectory(path:)`` if `path` is a file,
    /// ``/CabinetStorage/CabinetError/notAStore(path:reason:)`` if the store must exist and does not, and
    /// ``/CabinetStorage/CabinetError/storeLocked(path:pid:)`` if another writer has the store open
    /// (or, for a reader, this process has it open for writing).
    public convenience init(path: String, readOnly: Bool = false, createIfMissing: Bool = true, options: Options = Options(),
                            logger: Logger = ObjectStore.defaultLogger) throws {
        var tuning = TokyoCabinetBackend.Options()
        tuning.readOnly = readOnly
        tuning.createIfMissing = createIfMissing
        try self.init(backend: TokyoCabinetBackend(directory: path, options: tuning), options: options, logger: logger)
    }

    /// Opens a store on any backend, such as ``MemoryBackend``:
    ///
    /// ```swift
    /// let scratch = try ObjectStore(backend: MemoryBackend())
    /// ```
    /// `logger` receives what the store cannot throw (see ``logger``), from the
    /// open on: a save finished from its journal while opening is logged there.
    public init(backend: any StorageBackend, options: Options = Options(), logger: Logger = ObjectStore.defaultLogger) throws {
        let services = backend.services
        var format = RecordFormat.plain, catalog: StoreCatalog?
        try services.withCommittedState {
            // A reader may not finish what a killed writer left, and must not read half-written files.
            if services.isReadOnly {
                let pending = try services.pendingRecovery()
                if !pending.isEmpty {
                    // A Mac's file with a transaction of its own: say what the file is.
                    for table in pending.compactMap(\.table) {
                        if let foreign = TokyoCabinetDirectory.foreignLayoutError(ofTable: backend.location(ofTable: table)) { throw foreign }
                    }
                    throw CabinetError.recoveryPending(path: backend.path, reason: pending.map(\.description).joined(separator: "; "))
                }
            }
            format = try ObjectStore.recordFormat(of: backend, asked: options.recordFormat)
            catalog = try services.readCatalog()
        }
        (recordFormat, self.catalog) = (format, catalog)
        self.backend = backend
        self.logger = logger
        self.path = backend.path
        self.options = options
        coordinatesReads = services.isReadOnly
        useDetector = ConcurrentUseDetector(path: backend.path)
        resolver = ReferenceResolver(useDetector: useDetector)
        link = DirectLink()
        otherWriters = backend as? any OtherWritersBackend
        rowReservations = services.isReadOnly ? nil : otherWriters.map(RowReservations.init(backend:))
        listRootsWritten = otherWriters == nil ? nil : ListRootsWritten()
        undoManager.store = self
        // A save killed between its files left a journal: finish that save before anything else.
        if !backend.services.isReadOnly { try recoverInterruptedSave() }
    }

    /// A context of a ``StorePool``: a store of its own objects over the pool's
    /// backend, already open, with the pool's classes registered on their open
    /// tables. It does not own the backend (its ``close()`` leaves it open),
    /// replays no journal, records no undo, and reads each class's metadata row
    /// afresh, so its row IDs follow the last save.
    init(context template: ContextTemplate, link: ContextLink) throws {
        backend = template.backend
        path = backend.path
        options = template.options
        recordFormat = template.recordFormat
        catalog = template.catalog
        logger = template.logger
        useDetector = ConcurrentUseDetector(path: backend.path)
        resolver = ReferenceResolver(useDetector: useDetector)
        self.link = link
        otherWriters = nil
        rowReservations = template.root.rowReservations
        listRootsWritten = template.root.listRootsWritten
        // A read-only pool's: its writer is another process (see ``PoolCore/runReadBlock(_:recorder:holdingLock:)``).
        coordinatesReads = template.root.coordinatesReads
        undoManager.store = self
        undoManager.isEnabled = false
        entriesByName.reserveCapacity(template.classes.count)
        resolver.reserve(classes: template.classes.count, largestClassID: template.largestClassID)
        for registered in template.classes {
            // A write block's metadata as the group's earlier blocks left it (their row IDs taken).
            let table = link.view(of: registered.table, named: registered.name)
            guard let metadata = try ClassRegistrar.readMetadata(of: table, className: registered.name) else {
                throw CabinetError.malformedMetadata(RecordLocation(file: registered.table.path, className: registered.name, rowID: ClassMetadata.rowID),
                                                     reason: "the metadata row is missing")
            }
            add(registered.type, name: registered.name, table: table, metadata: metadata, writesLists: registered.writesLists)
                .indexes = registered.indexes
        }
    }

    deinit {
        close()
    }

    /// Gives every class entry the undo group stamp, so `@Stored` setters can tell
    /// with one compare whether an object was already recorded in this group.
    func setUndoStamp(_ stamp: UndoStamp) {
        undoStamp = stamp
        for entry in entriesByName.values { entry.undoStamp = stamp }
    }

    /// Forgets every live object's stamp, when the stamps wrap around: a stamp
    /// left from 65,535 groups ago must not pass for the new group's.
    func clearUndoStamps() {
        for entry in entriesByName.values {
            entry.live.forEachObject { $0.undoStamp = 0 }
        }
    }

    /// The classes registered so far.
    public var registeredClasses: [StoredObject.Type] {
        entriesByName.keys.sorted().compactMap { entriesByName[$0]?.type }
    }

    @inline(__always)
    func entry(for type: StoredObject.Type) -> ClassEntry? {
        resolver.entry(for: type)
    }

    func requireEntry(for type: StoredObject.Type) throws -> ClassEntry {
        try checkOpen()
        // A save that memory counts as done but the files do not have yet: reads must see it.
        if journalAwaitsReplay { try recoverInterruptedSave() }
        guard let entry = entry(for: type) else {
            throw CabinetError.classNotRegistered(className: String(describing: type))
        }
        return entry
    }

    func checkOpen() throws {
        if isClosed { throw CabinetError.storeClosed(path: path) }
    }

    /// Closes the store: unsaved changes are discarded, every live object's
    /// ``StoredObject/dissolveAllRelationships()`` is called to free cycles,
    /// and objects are detached (they keep their values but belong to no store).
    /// A fault (an object whose content was never loaded) has no values to keep:
    /// reading one of its `@Stored` properties afterwards gives the default value
    /// and tells ``faultErrorHandler`` ``/CabinetStorage/CabinetError/storeClosed(path:)``.
    /// The files are closed and the lock released. Calling it twice does nothing.
    ///
    /// ```swift
    /// store.close()
    /// try store.load(song)    // throws storeClosed
    /// ```
    public func close() {
        if isSaving { changeDuringSave("close()") }
        useDetector.enterAlone("close()")
        defer { useDetector.leave() }
        guard !isClosed else { return }
        isClosed = true
        // Their handlers may hold objects of this store.
        liveObservers = []
        let entries = Array(entriesByName.values)
        // Hold every live object so none is freed while others are being dissolved.
        let liveObjects = entries.flatMap { $0.live.allObjects() }
        for object in liveObjects where object.hasContent {
            object.changeState = .loading   // the dissolving setters record nothing
            object.dissolveAllRelationships()
        }
        for entry in entries { entry.discardChanges() }
        for object in liveObjects {
            object.changeState = .clean
            if object.hasContent { object.entry?.release(object) }
        }
        for entry in entries {
            entry.keepForFaults(reportingTo: faultErrorHandler, path: path)
            entry.store = nil
        }
        pendingNamedBuffers.removeAll()
        undoManager.removeAllActions()
        undoManager.store = nil
        observers.removeAll()
        resolver.close()   // buffers kept by the app now throw storeClosed for references
        if link.ownsBackend { backend.close() }
    }
}
