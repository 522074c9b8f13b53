/// Queries answered from a class's indexes (``StoredIndex``).
///
/// They see what is saved: an object inserted or changed since the last save
/// is found by its saved values (or not at all, if it was never saved), and one
/// deleted since then is left out. The objects come back uniqued (a live object
/// is the same instance, with its unsaved changes), in index order, equal
/// values by row ID.
extension ObjectStore {
    /// The objects whose indexed `keyPath` equals `value`, by row ID.
    ///
    /// ```swift
    /// let queen = try store.fetch(Song.self, where: \.artist, equals: "Queen")
    /// ```
    public func fetch<T: StoredObject, V: IndexableValue>(_ type: T.Type, where keyPath: KeyPath<T, V>, equals value: V,
                                                          limit: Int? = nil) throws -> [T] {
        try collect(limit) { body in try enumerate(type, where: keyPath, equals: value, body) }
    }

    /// The objects whose indexed `keyPath` lies in `range`, in ascending order
    /// of the value (descending if asked), at most `limit` of them.
    ///
    /// ```swift
    /// let long = try store.fetch(Song.self, where: \.seconds, in: 300...600, limit: 50)
    /// let recent = try store.fetch(Song.self, where: \.added, in: lastWeek...now, descending: true)
    /// ```
    public func fetch<T: StoredObject, V: IndexableValue>(_ type: T.Type, where keyPath: KeyPath<T, V>, in range: ClosedRange<V.Bound>,
                                                          limit: Int? = nil, descending: Bool = false) throws -> [T] {
        try collect(limit) { body in try enumerate(type, where: keyPath, in: range, descending: descending, body) }
    }

    /// How many saved objects have `value` at `keyPath`, counted in the index without loading them.
    ///
    /// ```swift
    /// let n = try store.count(Song.self, where: \.artist, equals: "Queen")
    /// ```
    public func count<T: StoredObject, V: IndexableValue>(_ type: T.Type, where keyPath: KeyPath<T, V>, equals value: V) throws -> Int {
        let (entry, bounds) = try valueBounds(type, keyPath, equals: value)
        var count = 0
        try scanIndex(entry, bounds, descending: false) { row, _ in
            // What is saved, less what was deleted since (as a fetch leaves it out).
            if entry.live.object(at: row)?.changeState != .deleted { count += 1 }
            return true
        }
        return count
    }

    /// The objects whose list at `keyPath` holds `target`, by row ID: the inverse
    /// of a to-many relationship, from its ``StoredIndex/references(_:named:)`` index.
    ///
    /// ```swift
    /// let lists = try store.fetch(Playlist.self, where: \.songs, contains: song)
    /// ```
    public func fetch<T: StoredObject, U: StoredObject>(_ type: T.Type, where keyPath: KeyPath<T, [U]>, contains target: U,
                                                        limit: Int? = nil) throws -> [T] {
        let (entry, declared) = try declaredIndex(type, keyPath, kind: .references)
        guard target.rowID != 0 else { return [] }   // never inserted: no saved list holds it
        let prefix = [declared.number] + IndexKeys.rowBytes(target.rowID)
        return try collect(limit) { body in
            var stop = false
            try objects(entry, (prefix, IndexKeys.keyAfterPrefix(prefix)), descending: false) { object, decoded in
                let typed = try ObjectStore.typed(object, as: T.self)
                // A damaged index page can name another row (see ``vouch(_:_:within:entry:)``).
                if decoded && !ObjectStore.list(typed[keyPath: keyPath], holds: target.rowID) {
                    throw ObjectStore.unvouched(entry, row: typed.rowID, index: "the references index")
                }
                try body(typed, &stop)
                return !stop
            }
        }
    }

    /// Whether `list` holds the object of row `rowID`.
    ///
    /// This runs unspecialized (`U` is the caller's class), where iterating a `[U]`
    /// goes through the element type's witnesses for every element. `U` can only
    /// be a class (`StoredObject` is a superclass bound: no existential meets it),
    /// and an array of class references is one buffer of object pointers whose
    /// header and element offset do not depend on the class, so the list is read
    /// as `[StoredObject]`, whose loop is specialized. (An `as` upcast would copy
    /// element by element on Linux.) The view is only read, never mutated, and is
    /// released with the scope.
    static func list<U: StoredObject>(_ list: [U], holds rowID: UInt32) -> Bool {
        // The cast's premise, checked once a list: a generic constraint loosened
        // later would make it read other values as objects.
        precondition((U.self as Any.Type) is StoredObject.Type, "list(_:holds:) reads its list as objects; \(U.self) is not a StoredObject")
        let objects = unsafeBitCast(list, to: [StoredObject].self)
        for object in objects where object.rowID == rowID { return true }
        return false
    }

    /// Calls `body` with each object whose indexed `keyPath` equals `value`, by row
    /// ID; set `stop` to end early. Memory stays bounded: the records are read a
    /// batch at a time (8 rows, then twice as many up to 128: on Redis one round
    /// trip each), and each object is made just before `body` gets it.
    public func enumerate<T: StoredObject, V: IndexableValue>(_ type: T.Type, where keyPath: KeyPath<T, V>, equals value: V,
                                                              _ body: (T, inout Bool) throws -> Void) throws {
        let (entry, bounds) = try valueBounds(type, keyPath, equals: value)
        var stop = false
        try objects(entry, bounds, descending: false) { object, decoded in
            let typed = try ObjectStore.typed(object, as: T.self)
            if decoded { try vouch(typed, keyPath, within: bounds, entry: entry) }
            try body(typed, &stop)
            return !stop
        }
    }

    /// Calls `body` with each object whose indexed `keyPath` lies in `range`, in
    /// the value's order (or descending); set `stop` to end early. Read in
    /// batches, as ``enumerate(_:where:equals:_:)``.
    ///
    /// ```swift
    /// try store.enumerate(Song.self, where: \.seconds, in: 0...59) { song, stop in print(song.title) }
    /// ```
    public func enumerate<T: StoredObject, V: IndexableValue>(_ type: T.Type, where keyPath: KeyPath<T, V>, in range: ClosedRange<V.Bound>,
                                                              descending: Bool = false, _ body: (T, inout Bool) throws -> Void) throws {
        try enumerate(type, keyPath, from: range.lowerBound, to: range.upperBound, including: true, descending: descending, body)
    }

    /// Scans the objects whose `keyPath` is at least `lower` (`nil`: no bound) and
    /// at most, or below (`including`), `upper` (`nil`: no bound).
    func enumerate<T: StoredObject, V: IndexableValue>(_ type: T.Type, _ keyPath: KeyPath<T, V>, from lower: V.Bound?, to upper: V.Bound?,
                                                       including: Bool, descending: Bool, _ body: (T, inout Bool) throws -> Void) throws {
        let (entry, bounds) = try rangeBounds(type, keyPath, from: lower, to: upper, including: including)
        var stop = false
        try objects(entry, bounds, descending: descending) { object, decoded in
            let typed = try ObjectStore.typed(object, as: T.self)
            if decoded { try vouch(typed, keyPath, within: bounds, entry: entry) }
            try body(typed, &stop)
            return !stop
        }
    }

    /// Throws unless `object`'s value at `keyPath` lies within `bounds` (its
    /// index number, then its value's bytes), as the index entry that found it
    /// says: a damaged index page can name another row, whose object would be
    /// handed over as a match. Only an object whose content this query decoded
    /// from its record is checked: a live one is found by its saved value (see
    /// the extension's comment), which its properties need not hold.
    private func vouch<T: StoredObject, V: IndexableValue>(_ object: T, _ keyPath: KeyPath<T, V>, within bounds: IndexBounds,
                                                          entry: ClassEntry) throws {
        var bytes: [UInt8] = [bounds.lower[0]]
        let inside: Bool
        do {
            try object[keyPath: keyPath].indexBytes(into: &bytes)
            inside = !bytes.lexicographicallyPrecedes(bounds.lower) && bounds.upper.map { bytes.lexicographicallyPrecedes($0) } != false
        } catch {
            inside = false
        }
        guard !inside else { return }
        throw ObjectStore.unvouched(entry, row: object.rowID, index: "the index")
    }

    /// The error of a query whose `index` named `row` for a value its saved record does not hold.
    static func unvouched(_ entry: ClassEntry, row: UInt32, index: String) -> CabinetError {
        CabinetError.malformedRecord(entry.location(row: row),
                                     reason: "\(index) names this row for a value its record does not hold: the index file is damaged; `cabinet reindex` rebuilds it")
    }

    /// Up to `limit` objects (all, when `nil`) that `scan` hands its body, which stops it at the limit.
    ///
    /// The objects are gathered as `StoredObject`s and made a `[T]` once at the
    /// end: this code is not specialized for `T`, and appending to a `[T]` here
    /// looked up the array type's metadata for every object.
    func collect<T: StoredObject>(_ limit: Int?, _ scan: ((T, inout Bool) throws -> Void) throws -> Void) throws -> [T] {
        if let limit, limit <= 0 { return [] }
        var gathered: [StoredObject] = []
        try scan { object, stop in
            gathered.append(object)
            stop = gathered.count == limit
        }
        // None: the standard library's initializer would store the count of 0 into
        // the one empty-array storage every thread shares (a race ThreadSanitizer reports).
        guard !gathered.isEmpty else { return [] }
        return [T](unsafeUninitializedCapacity: gathered.count) { buffer, count in
            for (index, object) in gathered.enumerated() {
                buffer.initializeElement(at: index, to: unsafeDowncast(object, to: T.self))   // each was handed over as a T
            }
            count = gathered.count
        }
    }

    // MARK: Scanning an index

    /// The keys of an index scan: from `lower` up to (not including) `upper`, `nil` for no end.
    typealias IndexBounds = (lower: [UInt8], upper: [UInt8]?)

    /// The index keys of the values from `lower` to `upper` (`nil`: no bound), `upper` included or not.
    func rangeBounds<T: StoredObject, V: IndexableValue>(_ type: T.Type, _ keyPath: KeyPath<T, V>, from lower: V.Bound?, to upper: V.Bound?,
                                                         including: Bool) throws -> (ClassEntry, IndexBounds) {
        let (entry, declared) = try declaredIndex(type, keyPath, kind: .value)
        var lowerKey: [UInt8] = [declared.number], upperKey: [UInt8] = [declared.number]
        do {
            if let lower { try V.boundBytes(lower, into: &lowerKey) }
            if let upper { try V.boundBytes(upper, into: &upperKey) }
        } catch {
            throw CabinetError.unindexableValue(entry.location(), index: declared.label, reason: error.description)
        }
        // Below the next value's bytes includes `upper` (every row of it); below its own excludes it.
        let end = upper == nil || including ? IndexKeys.keyAfterPrefix(upperKey) : upperKey
        return (entry, (lowerKey, end))
    }

    func valueBounds<T: StoredObject, V: IndexableValue>(_ type: T.Type, _ keyPath: KeyPath<T, V>,
                                                                 equals value: V) throws -> (ClassEntry, IndexBounds) {
        let (entry, declared) = try declaredIndex(type, keyPath, kind: .value)
        var prefix: [UInt8] = [declared.number]
        do {
            try value.indexBytes(into: &prefix)
        } catch {
            throw CabinetError.unindexableValue(entry.location(), index: declared.label, reason: error.description)
        }
        return (entry, (prefix, IndexKeys.keyAfterPrefix(prefix)))
    }

    /// The class's entry and its index of `kind` on `keyPath`, or a clear error saying what is missing.
    func declaredIndex(_ type: StoredObject.Type, _ keyPath: AnyKeyPath, kind: StoredIndex.Kind) throws -> (ClassEntry, ClassIndexes.Declared) {
        try checkOpen()
        let entry = try requireEntry(for: type)
        // Named for errors only: describing a type costs more than the rest of this lookup.
        var className: String { String(describing: type) }
        // A key path prints as `<computed 0x…>` on Linux: say its value's type instead.
        var property: String { "the \(Swift.type(of: keyPath).valueType) property asked for" }
        guard let indexes = entry.indexes else {
            if let problem = entry.indexProblem { throw CabinetError.noSuchIndex(className: className, reason: problem) }
            throw CabinetError.noSuchIndex(className: className, reason: "indexes: declare .\(kind.rawValue)(\\.property) for \(property) in \(className).indexes")
        }
        guard let declared = indexes.index(on: keyPath, kind: kind) else {
            let others = indexes.declared.map(\.label).joined(separator: "; ")
            throw CabinetError.noSuchIndex(className: className, reason: ".\(kind.rawValue) index on \(property): declare .\(kind.rawValue)(\\.property) for it in \(className).indexes (it declares \(others.isEmpty ? "none" : others))")
        }
        return (entry, declared)
    }

    /// Calls `body` with the row ID of each entry in `bounds` and the entry's key,
    /// in order, on committed saves.
    func scanIndex(_ entry: ClassEntry, _ bounds: IndexBounds, descending: Bool,
                   _ body: (UInt32, UnsafeRawBufferPointer) throws -> Bool) throws {
        guard let indexes = entry.indexes else { return }
        let table = indexView(of: indexes)
        try readingCommittedState {
            try bounds.lower.withUnsafeBytes { lower in
                try bounds.upper.withUnsafeOptionalBytes { upper in
                    try table.forEach(from: lower, to: upper, descending: descending) { key, _ in
                        guard let row = IndexKeys.row(ofEntry: key), row >= ClassMetadata.firstObjectRowID else {
                            throw CabinetError.malformedRecord(RecordLocation(file: table.path, className: entry.name),
                                                               reason: "an index entry too short to end in a row ID; `cabinet reindex` rebuilds the index")
                        }
                        return try body(row, key)
                    }
                }
            }
        }
    }

    /// Calls `body` with the object of each entry in `bounds` (skipping rows deleted
    /// since the save), the records read in batches (``indexedObjects(_:index:_:_:)``).
    private func objects(_ entry: ClassEntry, _ bounds: IndexBounds, descending: Bool, _ body: (StoredObject, _ decoded: Bool) throws -> Bool) throws {
        useDetector.enter("an index query")
        defer { useDetector.leave() }
        guard let indexes = entry.indexes else { return }
        let table = indexView(of: indexes)
        try readingCommittedState {
            try indexedObjects(entry, index: "the index", { after, visit in
                var bounds = bounds
                // Again after a save in the body: from the first key past `after`, in the scan's direction.
                if let after {
                    if descending { bounds.upper = after } else { bounds.lower = after + [0] }
                }
                try scanIndex(entry, bounds, descending: descending) { row, key in try visit(row, key) }
            }, stillListed: { key in try table.withValue(forKey: key) { _ in true } != nil }, body)
        }
    }
}
