import CabinetStorage

/// An observation of a plain ``ObjectStore``'s query or object; ``cancel()``
/// ends it. The store keeps it until then (or until the store closes).
///
/// ```swift
/// let observer = try store.observe(Song.self, where: \.artist, equals: "Queen") { songs in print(songs.count) }
/// observer.cancel()
/// ```
public final class StoreObservation {
    weak var store: ObjectStore?
    let id: Int

    init(store: ObjectStore, id: Int) {
        self.store = store
        self.id = id
    }

    /// Stops calling the handler. Call it on the store's thread, as every call of the store.
    public func cancel() {
        store?.liveObservers.removeAll { $0.id == id }
        store = nil
    }
}

/// One observation of a plain store: what its last run read, and how to run it again.
struct StoreLiveObserver {
    let id: Int
    var region: ReadRegion
    /// Runs the query, calls the handler with its objects, and returns what it read.
    let run: (ObjectStore) throws -> ReadRegion
}

/// Live queries on a plain store: the handler gets the query's objects now,
/// then after every save of this store that changes what the query read, and
/// after this store takes in another process's saves (on Redis: at its next
/// save or ``refresh(discardingConflicts:)``) that change it. Handlers run on
/// the store's thread, inside the call that saved or took the saves in, once
/// it is done; they may read and change the store (a change is saved by the
/// next `save()`). A query that throws when it runs again is logged
/// (``logger``) and tried again after the next change.
///
/// What the query read is known from its shape: the index range of a query
/// (a commit that writes or removes an entry in it, of any row), and the rows it
/// returned (a commit that changes one of them). For a block of any shape,
/// and for other threads or processes, use ``StorePool/observe(_:)``.
extension ObjectStore {
    /// Calls `handler` with the objects whose indexed `keyPath` equals `value`,
    /// now and after every commit that changes them.
    ///
    /// ```swift
    /// let observer = try store.observe(Song.self, where: \.artist, equals: "Queen") { songs in print(songs.count) }
    /// observer.cancel()
    /// ```
    /// Throws what ``fetch(_:where:equals:limit:)`` throws, at once.
    @discardableResult
    public func observe<T: StoredObject, V: IndexableValue>(_ type: T.Type, where keyPath: KeyPath<T, V>, equals value: V,
                                                            _ handler: @escaping ([T]) -> Void) throws -> StoreObservation {
        try addLiveObserver { store in
            let (entry, bounds) = try store.valueBounds(type, keyPath, equals: value)
            let objects = try store.fetch(type, where: keyPath, equals: value)
            handler(objects)
            return ObjectStore.region(of: objects, in: entry, index: bounds)
        }
    }

    /// Calls `handler` with the objects whose indexed `keyPath` lies in `range`,
    /// in the value's order, now and after every commit that changes them.
    ///
    /// ```swift
    /// let observer = try store.observe(Song.self, where: \.seconds, in: 300...600) { songs in print(songs.map(\.title)) }
    /// ```
    @discardableResult
    public func observe<T: StoredObject, V: IndexableValue>(_ type: T.Type, where keyPath: KeyPath<T, V>, in range: ClosedRange<V.Bound>,
                                                            _ handler: @escaping ([T]) -> Void) throws -> StoreObservation {
        try addLiveObserver { store in
            let (entry, bounds) = try store.rangeBounds(type, keyPath, from: range.lowerBound, to: range.upperBound, including: true)
            let objects = try store.fetch(type, where: keyPath, in: range)
            handler(objects)
            return ObjectStore.region(of: objects, in: entry, index: bounds)
        }
    }

    /// Calls `handler` with the object of `rowID` (`nil` while there is none),
    /// now and after every commit that changes or deletes it.
    ///
    /// ```swift
    /// let observer = try store.observe(Note.self, rowID: id) { note in print(note?.title ?? "deleted") }
    /// ```
    @discardableResult
    public func observe<T: StoredObject>(_ type: T.Type, rowID: UInt32, _ handler: @escaping (T?) -> Void) throws -> StoreObservation {
        try addLiveObserver { store in
            let entry = try store.requireEntry(for: type)
            handler(try store.fetch(type, rowID: rowID))
            var region = ReadRegion()
            region.read(rows: [rowID], inTable: entry.name)
            return region
        }
    }

    private func addLiveObserver(_ run: @escaping (ObjectStore) throws -> ReadRegion) throws -> StoreObservation {
        try checkOpen()
        nextObserverID += 1
        let id = nextObserverID
        let region = try run(self)
        liveObservers.append(StoreLiveObserver(id: id, region: region, run: run))
        return StoreObservation(store: self, id: id)
    }

    private static func region(of objects: [StoredObject], in entry: ClassEntry, index bounds: IndexBounds) -> ReadRegion {
        var region = ReadRegion()
        region.read(rows: objects.map(\.rowID), inTable: entry.name)
        if let indexes = entry.indexes { region.read(from: bounds.lower, below: bounds.upper, inTable: indexes.tableName) }
        return region
    }

    /// Runs again every observer whose last run read what `changes` changed.
    /// Called once a save, or a take-in of other processes' saves, is done.
    func runLiveObservers(after changes: [ChangedKeys]) {
        guard !liveObservers.isEmpty else { return }
        // A handler may cancel observers or add some: run those touched now, by ID, each once.
        let touched = liveObservers.filter { observer in
            changes.contains { $0.isWholeStore || observer.region.isTouched(by: $0) }
        }.map(\.id)
        for id in touched {
            guard let observer = liveObservers.first(where: { $0.id == id }) else { continue }
            do {
                let region = try observer.run(self)
                if let index = liveObservers.firstIndex(where: { $0.id == id }) { liveObservers[index].region = region }
            } catch {
                logger.error("Cabinet: a live query failed when it ran again after a commit; it runs again after the next one",
                             metadata: ["cabinet.path": "\(path)", "cabinet.error": "\(error)"])
            }
        }
    }

    /// Keeps other processes' saves taken in during a read for the live queries,
    /// which hear of them at the next save or refresh: many become one change of everything.
    func keepForLiveObservers(_ saves: [OthersSave]) {
        takenInForObservers += saves
        if takenInForObservers.count > ObservationHub.missedLimit {
            takenInForObservers = [OthersSave(tables: [:], wholeStore: true)]
        }
    }

    /// Runs the live queries that the saves taken in since the last call touched,
    /// or this store's own `committed` batch: each once.
    func runLiveObserversAfterTakeIn(andCommit committed: WriteBatch? = nil) {
        guard !takenInForObservers.isEmpty || committed != nil else { return }
        let changes = takenInForObservers.map(ChangedKeys.init) + (committed.map { [ChangedKeys($0)] } ?? [])
        takenInForObservers = []
        runLiveObservers(after: changes)
    }
}
