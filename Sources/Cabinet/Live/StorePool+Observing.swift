import CabinetStorage

/// Live data: queries and objects whose values follow the commits.
///
/// How the pool knows what to run again: while an observation's block runs,
/// the tables of its context record every key it looks up and every key
/// range it scans (region tracking, as GRDB's `ValueObservation` does; see
/// docs/ARCHITECTURE.md, "Live data"). After each commit, only observations
/// whose last run read a key the commit wrote or removed run again: a commit
/// of a class an observation never read costs it nothing; an indexed query
/// runs again only when a changed row's old or new index entry falls in its
/// range, or a row of its result changed; objects reached through references
/// count as read, since their records were.
extension StorePool {
    /// A live query: `block`'s value now, then a new value after every commit
    /// that changes what it read.
    ///
    /// ```swift
    /// let queen = pool.observe { store in
    ///     try store.fetch(Song.self, where: \.artist, equals: "Queen").map { SongRow(title: $0.title, seconds: $0.seconds) }
    /// }
    /// for try await rows in queen { print(rows.count) }
    /// ```
    /// `block` runs as a read block does (``read(_:)``), in a context of its
    /// own, on one committed state, on the pool's threads; it returns a
    /// `Sendable` value made from the objects. A block that changes objects
    /// throws ``/CabinetStorage/CabinetError/readOnly(path:reason:)``, which
    /// ends the observation. See ``LiveQuery`` for how values are delivered.
    public func observe<Value: Sendable>(_ block: @escaping @Sendable (ObjectStore) throws -> Value) -> LiveQuery<Value> {
        LiveQuery(core: core, evaluate: { store, _ in try block(store) }, hashedTable: nil)
    }

    /// One object: what `transform` makes of it now, and after every commit
    /// that changes it (or an object `transform` reads through it); `nil`
    /// while there is no such row (it was deleted, or not inserted yet).
    ///
    /// ```swift
    /// for try await title in pool.observe(Note.self, rowID: id, { note in note.title }) {
    ///     print(title ?? "deleted")
    /// }
    /// ```
    public func observe<T: StoredObject, Value: Sendable>(_ type: T.Type, rowID: UInt32,
                                                         _ transform: @escaping @Sendable (T) throws -> Value) -> LiveQuery<Value?> {
        observe { store in try store.fetch(type, rowID: rowID).map(transform) }
    }

    /// Live results of a range query, with the changes between two values, as a
    /// list on screen applies them: positions deleted from the previous rows,
    /// inserted into these, and modified (saved with other content) in these.
    ///
    /// ```swift
    /// let long = pool.observeResults(Song.self, where: \.seconds, in: 300...600) { song in
    ///     SongRow(title: song.title, seconds: song.seconds)
    /// }
    /// for try await update in long {
    ///     update.rows        // [SongRow], in the query's order
    ///     update.deleted     // positions in the previous rows
    ///     update.inserted    // positions in these rows
    ///     update.modified    // positions in these rows whose object was saved with other content
    /// }
    /// ```
    /// The rows are in the index's order (equal values by row ID), as
    /// ``ObjectStore/fetch(_:where:in:limit:descending:)-(_,_,ClosedRange<V.Bound>,_,_)`` returns them. The
    /// first update lists every row as inserted. A row that moved is deleted
    /// and inserted. See ``ResultsUpdate``.
    public func observeResults<T: StoredObject, V: IndexableValue, Row: Sendable>(
        _ type: T.Type, where keyPath: KeyPath<T, V> & Sendable, in range: ClosedRange<V.Bound>,
        _ transform: @escaping @Sendable (T) throws -> Row
    ) -> LiveResults<Row> where V: Sendable, V.Bound: Sendable {
        let table = type.storedName
        let query = LiveQuery<ObservedRows<Row>>(core: core, evaluate: { store, recorder in
            let objects = try store.fetch(type, where: keyPath, in: range)
            let rows = try objects.map(transform)
            return ObservedRows(rows: rows, identities: objects.map { RowIdentity(row: $0.rowID, content: recorder.valueHash(ofRow: $0.rowID, inTable: table)) })
        }, hashedTable: table)
        return LiveResults(query: query)
    }
}

/// What one run of a results observation found: the rows, and which row (and
/// which saved content) each came from, for the consumer's iterator to diff.
struct ObservedRows<Row: Sendable>: Sendable {
    let rows: [Row]
    let identities: [RowIdentity]
}

/// The updates of ``StorePool/observeResults(_:where:in:_:)``: an `AsyncSequence`
/// of ``ResultsUpdate``, delivered as ``LiveQuery`` delivers values.
///
/// A consumer slower than the commits gets the newest rows, not each update;
/// the positions it gets are always relative to the rows it had before (the
/// iterator diffs what it hands out against what it handed out last), so a
/// list that applies every update it reads stays right.
public struct LiveResults<Row: Sendable>: AsyncSequence, Sendable {
    public typealias Element = ResultsUpdate<Row>
    let query: LiveQuery<ObservedRows<Row>>

    public func makeAsyncIterator() -> Iterator {
        Iterator(base: query.makeAsyncIterator())
    }

    /// Waits for the next update.
    public struct Iterator: AsyncIteratorProtocol {
        var base: LiveQuery<ObservedRows<Row>>.Iterator
        /// The rows of the update handed out last; `nil` before the first.
        var previous: [RowIdentity]?

        /// The next update; `nil` once the observation ended (cancelled, or the pool closed).
        public mutating func next() async throws -> ResultsUpdate<Row>? {
            guard let found = try await base.next() else { return nil }
            defer { previous = found.identities }
            return ResultsUpdate(rows: found.rows, changes: ResultsDiff(from: previous, to: found.identities), isInitial: previous == nil)
        }
    }
}

/// One value of a live result (``StorePool/observeResults(_:where:in:_:)``):
/// the rows, and how they differ from the previous update's.
///
/// ```swift
/// var shown: [SongRow] = []
/// for try await update in long {
///     // What a table view does with it: deletions from the end first, then insertions.
///     for position in update.deleted.reversed() { shown.remove(at: position) }
///     for position in update.inserted { shown.insert(update.rows[position], at: position) }
///     for position in update.modified { shown[position] = update.rows[position] }
/// }
/// ```
public struct ResultsUpdate<Row: Sendable>: Sendable {
    /// The query's rows, in its order.
    public let rows: [Row]
    /// Positions, ascending, in the previous update's rows of the rows gone (or moved).
    public let deleted: [Int]
    /// Positions, ascending, in ``rows`` of the rows new (or moved).
    public let inserted: [Int]
    /// Positions, ascending, in ``rows`` of rows that were there before, in the
    /// same order, and whose object was saved with other content since.
    public let modified: [Int]
    /// Whether this is the observation's first update (every row inserted).
    public let isInitial: Bool

    init(rows: [Row], changes: ResultsDiff, isInitial: Bool) {
        self.rows = rows
        deleted = changes.deleted
        inserted = changes.inserted
        modified = changes.modified
        self.isInitial = isInitial
    }
}
