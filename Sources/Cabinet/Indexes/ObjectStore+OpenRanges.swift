/// Range queries with half-open and one-sided ranges, as ``ObjectStore/fetch(_:where:in:limit:descending:)``
/// with a closed one: in the value's order (or descending), equal values by row ID.
extension ObjectStore {
    /// The objects whose indexed `keyPath` is in `range` (its upper end excluded).
    ///
    /// ```swift
    /// let today = try store.fetch(Note.self, where: \.created, in: midnight..<tomorrow)
    /// ```
    public func fetch<T: StoredObject, V: IndexableValue>(_ type: T.Type, where keyPath: KeyPath<T, V>, in range: Range<V.Bound>,
                                                          limit: Int? = nil, descending: Bool = false) throws -> [T] {
        try collect(limit) { body in
            try enumerate(type, keyPath, from: range.lowerBound, to: range.upperBound, including: false, descending: descending, body)
        }
    }

    /// The objects whose indexed `keyPath` is at least `range.lowerBound` (a `nil` date never is).
    ///
    /// ```swift
    /// let long = try store.fetch(Song.self, where: \.seconds, in: 600..., limit: 10)
    /// ```
    public func fetch<T: StoredObject, V: IndexableValue>(_ type: T.Type, where keyPath: KeyPath<T, V>, in range: PartialRangeFrom<V.Bound>,
                                                          limit: Int? = nil, descending: Bool = false) throws -> [T] {
        try collect(limit) { body in
            try enumerate(type, keyPath, from: range.lowerBound, to: nil, including: true, descending: descending, body)
        }
    }

    /// Calls `body` with each object whose indexed `keyPath` is in `range` (its upper end excluded); set `stop` to end early.
    public func enumerate<T: StoredObject, V: IndexableValue>(_ type: T.Type, where keyPath: KeyPath<T, V>, in range: Range<V.Bound>,
                                                              descending: Bool = false, _ body: (T, inout Bool) throws -> Void) throws {
        try enumerate(type, keyPath, from: range.lowerBound, to: range.upperBound, including: false, descending: descending, body)
    }
}
