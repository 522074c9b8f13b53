import CabinetStorage

/// Everything a store knows about one registered class: its table, its
/// metadata row, its live instances, and the changes waiting for the next save.
@usableFromInline
final class ClassEntry {
    /// Unretained (the store owns its entries), and cleared by `close()`, which
    /// the store's deinit runs: an entry that outlives its store (held by a
    /// fault of the closed store) finds `nil`.
    unowned(unsafe) var store: ObjectStore?
    let type: StoredObject.Type
    let name: String
    let table: any StorageTable
    // Touched per object in insert and fetch loops; confined to the store's thread.
    @exclusivity(unchecked) var metadata: ClassMetadata
    @exclusivity(unchecked) var metadataChanged = false
    /// The class's reserved rows, on a backend several processes write (``RowReservations``).
    @exclusivity(unchecked) var rowRange: ClassRowRange?
    /// Counts the saves of this class's changes, and every other change of its
    /// records this store made or took in (an upgrade, other processes' saves): a
    /// read that runs ahead of its caller (records read in batches) knows a change
    /// in between made them stale.
    @exclusivity(unchecked) var savesFinished: UInt64 = 0
    /// Whether the last row ID can be trusted: read with a matching checksum, or
    /// written by this process. Otherwise saves check that inserted rows are free.
    var metadataVerified = true
    /// Whether the class's `write(to:)` writes `StoredList`s: its saves and deletes
    /// then look after the lists it keeps out of line.
    var writesLists = false
    /// The class's indexes, if it declares any (and they are built).
    var indexes: ClassIndexes?
    /// Why a class that declares indexes has none to query (a read-only store that could not build them).
    var indexProblem: String?
    /// The class its records refer to that its indexes wait for (not registered
    /// yet): they are built when one more class is registered.
    var indexesAwait: String?
    /// The store's current undo group stamp (see `ObjectStore.setUndoStamp`).
    @exclusivity(unchecked) @usableFromInline var undoStamp: UndoStamp = 0

    let live = UniquingTable()
    /// The store's ``ObjectStore/Options/observable``: its objects take part in Observation.
    let observesObjects: Bool
    /// Objects to write or delete at the next save. An object is listed once
    /// (its `changeState` says which list it is on); entries whose state moved
    /// on since (an insert deleted before saving) are skipped by the save.
    @exclusivity(unchecked) var inserted: [StoredObject] = []
    @exclusivity(unchecked) var updated: [StoredObject] = []
    @exclusivity(unchecked) var deleted: [StoredObject] = []

    init(store: ObjectStore, type: StoredObject.Type, name: String, table: any StorageTable, metadata: ClassMetadata,
         denseOnlyForScans: Bool = false) {
        self.store = store
        self.type = type
        self.name = name
        self.table = table
        self.metadata = metadata
        self.denseOnlyForScans = denseOnlyForScans
        observesObjects = store.options.observable
        updateDenseLimit()
    }

    var hasChanges: Bool {
        metadataChanged || !inserted.isEmpty || !updated.isEmpty || !deleted.isEmpty
    }

    func location(row rowID: UInt32? = nil) -> RecordLocation {
        RecordLocation(file: table.path, className: name, rowID: rowID)
    }

    /// Row IDs up to here go in the uniquing table's directory; beyond, a dictionary
    /// holds them. The last row ID comes from disk, so it only counts as far as the
    /// file's record count backs it: a damaged metadata row cannot make the directory huge.
    @exclusivity(unchecked) private(set) var denseLimit: UInt32 = 0
    /// Set for a pool's contexts, which live for one block and mostly touch a few
    /// rows: their live instances go to the dictionary (the limit stays 0), so a
    /// block that fetches row 1,000,000 neither allocates nor, at its close, walks
    /// a directory for a million rows. A scan, which touches every row, turns the directory on.
    private var denseOnlyForScans: Bool

    /// Before a scan of the whole class: rows may go in the uniquing table's directory from here on.
    @inline(__always)
    func prepareForScan() {
        if _slowPath(denseOnlyForScans) {
            denseOnlyForScans = false
            updateDenseLimit()
        }
    }

    func updateDenseLimit() {
        if denseOnlyForScans { return }
        let wanted = metadata.lastRowID &+ 1024
        func backed(_ records: Int) -> UInt32 { UInt32(clamping: records * 2 + 65_536 + inserted.count) }
        // The table's count is a round trip on a networked backend, and this runs
        // every 1,024 inserts: it is read again only when the last count read would
        // cap the array (a count that went down since only lets the array be larger).
        if let counted = recordCountForDenseLimit, backed(counted) >= wanted {
            denseLimit = max(denseLimit, wanted)
            return
        }
        // Only the directory's size depends on the count: one that cannot be read leaves it as it is.
        guard let counted = try? table.recordCount else { return }
        recordCountForDenseLimit = counted
        denseLimit = max(denseLimit, min(wanted, backed(counted)))
    }

    /// The table's record count as ``updateDenseLimit()`` last read it.
    private var recordCountForDenseLimit: Int?

    /// The live instance of `rowID`, or a new fault for it.
    @inline(__always)
    func object(at rowID: UInt32) -> StoredObject {
        if let existing = live.object(at: rowID) { return existing }
        let fault = type.init()
        fault.rowID = rowID
        fault.hasContent = false
        adopt(fault)
        return fault
    }

    /// Makes `object` the live instance of its row.
    @inline(__always)
    func adopt(_ object: StoredObject) {
        object.entry = self
        if _slowPath(observesObjects) { object.contentState.insert(.observable) }
        live.insert(object, at: object.rowID, denseLimit: denseLimit)
    }

    /// The next row ID for an insert, or `nil` if every row ID is used. A row
    /// with a live instance already (a fault made for a row not handed out yet,
    /// by `fault(_:rowID:)` or a damaged reference) is skipped: it keeps its instance.
    @inline(__always)
    func takeNextRowID() -> UInt32? {
        while metadata.lastRowID < UInt32.max {
            metadata.lastRowID += 1
            if _fastPath(live.object(at: metadata.lastRowID) == nil) { return metadata.lastRowID }
        }
        return nil
    }

    /// Called from `StoredObject.deinit`. Returns `true` when the object was the
    /// last fault of a closed store: the caller then drops the entry's hold on
    /// itself (see `keepForFaults`), after this call has returned.
    @inline(__always)
    func objectDidDeinit(_ object: StoredObject) -> Bool {
        live.remove(object, at: object.rowID)
        return _slowPath(heldForFaults) && live.count == 0 && stopHoldingForFaults()
    }

    // MARK: Faults of a closed store

    /// Whether the entry keeps itself alive for the faults of its closed store.
    @exclusivity(unchecked) private var heldForFaults = false
    /// Told when a fault of the closed store is read: the store's fault error handler.
    private var closedStoreHandler: ((CabinetError) -> Void)?
    private var closedStorePath = ""

    /// At close: faults still alive keep pointing here, so reading one tells
    /// `handler` the store is closed instead of silently giving default values.
    /// The entry holds itself (one retain) until the last of them is freed, so
    /// their unretained reference never dangles.
    func keepForFaults(reportingTo handler: @escaping (CabinetError) -> Void, path: String) {
        guard live.count > 0, !heldForFaults else { return }
        closedStoreHandler = handler
        closedStorePath = path
        heldForFaults = true
        _ = Unmanaged.passRetained(self)
    }

    private func stopHoldingForFaults() -> Bool {
        heldForFaults = false
        closedStoreHandler = nil
        return true
    }

    /// A `@Stored` property of a fault of the closed store was read.
    func reportClosedStore(readingFault object: StoredObject) {
        object.contentLoadFailed = true
        closedStoreHandler?(.storeClosed(path: closedStorePath))
    }

    /// Detaches `object` from the store (after its delete is saved, or on close).
    func release(_ object: StoredObject) {
        live.remove(object, at: object.rowID)
        object.entry = nil
        object.changeState = .clean
    }

    /// The class's records changed other than by a save of its objects (an
    /// upgrade rewrote them, another process's save was taken in).
    func recordsChanged() {
        savesFinished &+= 1
    }

    /// Forgets every pending change; used when the store closes.
    func discardChanges() {
        savesFinished &+= 1
        inserted.removeAll()
        updated.removeAll()
        deleted.removeAll()
        metadataChanged = false
    }
}
