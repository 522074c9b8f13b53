extension ObjectStore {
    /// The objects whose full-text indexed property matches `query`, by row ID.
    ///
    /// ```swift
    /// let hits   = try store.search(Song.self, matching: "walking sunshine")   // both words, any order
    /// let starts = try store.search(Song.self, matching: "sunsh*")             // a word that starts so
    /// let phrase = try store.search(Song.self, matching: "\"on sunshine\"")    // next to each other
    /// ```
    /// Every term must match; case, diacritics and Unicode compatibility forms
    /// do not count (`cafe` finds `Café`, `カタカナ` finds `ｶﾀｶﾅ`, `abc` finds `ＡＢＣ`). A plain word matches whole words only: no stemming, no stop words
    /// (`walk` does not find `walking`; `walk*` does). Chinese and Japanese are
    /// matched as the characters next to each other (see ``StoredIndex/fullText(_:named:)-(KeyPath<Object,String>,_)``).
    /// An empty query finds nothing. As every query, it sees what is saved.
    ///
    /// Uses the class's first full-text index; name another with ``search(_:in:matching:limit:)-(_,KeyPath<T,String>,_,_)``.
    public func search<T: StoredObject>(_ type: T.Type, matching query: String, limit: Int? = nil) throws -> [T] {
        let entry = try requireEntry(for: type)
        guard let declared = entry.indexes?.declared.first(where: { $0.index.kind == .fullText }) else {
            let name = String(describing: type)
            throw CabinetError.noSuchIndex(className: name, reason: entry.indexProblem
                ?? "full-text index: declare .fullText(\\.property) in \(name).indexes")
        }
        return try search(entry, declared.index.keyPath, query, limit: limit)
    }

    /// ``search(_:matching:limit:)`` in the full-text index of `keyPath`.
    public func search<T: StoredObject>(_ type: T.Type, in keyPath: KeyPath<T, String>, matching query: String,
                                        limit: Int? = nil) throws -> [T] {
        try search(try requireEntry(for: type), keyPath, query, limit: limit)
    }

    /// ``search(_:matching:limit:)`` in the full-text index of an optional string's `keyPath`.
    public func search<T: StoredObject>(_ type: T.Type, in keyPath: KeyPath<T, String?>, matching query: String,
                                        limit: Int? = nil) throws -> [T] {
        try search(try requireEntry(for: type), keyPath, query, limit: limit)
    }

    private func search<T: StoredObject>(_ entry: ClassEntry, _ keyPath: AnyKeyPath, _ query: String, limit: Int?) throws -> [T] {
        useDetector.enter("search(_:matching:)")
        defer { useDetector.leave() }
        let (_, declared) = try declaredIndex(entry.type, keyPath, kind: .fullText)
        let query = FullTextQuery(query)
        let terms = query.terms
        guard !terms.isEmpty else { return [] }
        return try readingCommittedState {
            var result: [T] = []
            if let limit, limit <= 0 { return result }
            let rows = try FullTextSearch(store: self, entry: entry, number: declared.number).rows(matching: terms)
            try indexedObjects(entry, index: "the full-text index", { _, visit in
                for row in rows where try !visit(row, nil) { return }
            }, stillListed: nil) { object, decoded in
                // A damaged posting block can name another row: only a row whose saved text matches is an answer.
                if decoded, !vouches(query, declared.index, object) {
                    throw ObjectStore.unvouched(entry, row: object.rowID, index: "the full-text index")
                }
                result.append(try ObjectStore.typed(object, as: T.self))
                return result.count != limit
            }
            return result
        }
    }

    /// Whether `object`'s saved text matches `query`, as the index found it.
    /// (Both ``StoredIndex/fullText(_:named:)`` forms give the index its text.)
    private func vouches(_ query: FullTextQuery, _ index: StoredIndex, _ object: StoredObject) -> Bool {
        index.text?(object).map(query.isMatched(byText:)) == true
    }
}
