extension ObjectStore {
    /// The objects whose full-text indexed property matches `query`, by row ID.
    ///
    /// ```swift
    /// let hits   = try store.search(Song.self, matching: "walking sunshine")   // both words, any order
    /// let starts = try store.search(Song.self, matching: "sunsh*")             // a word that starts so
    /// let phrase = try store.search(Song.self, matching: "\"on sunshine\"")    // next to each other
    /// ```
    /// Every term must match; case and diacritics do not count (`cafe` finds
    /// `Café`). A plain word matches whole words only: no stemming, no stop words
    /// (`walk` does not find `walking`; `walk*` does). Chinese and Japanese are
    /// matched as the characters next to each other (see ``StoredIndex/fullText(_:named:)``).
    /// An empty query finds nothing. As every query, it sees what is saved.
    ///
    /// Uses the class's first full-text index; name another with ``search(_:in:matching:limit:)``.
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
        let terms = FullTextQuery(query).terms
        guard !terms.isEmpty else { return [] }
        return try readingCommittedState {
            var result: [T] = []
            for row in try FullTextSearch(store: self, entry: entry, number: declared.number).rows(matching: terms) {
                if let limit, result.count >= limit { break }
                guard let object = try loadedObject(entry, rowID: row) else {
                    if entry.live.object(at: row)?.changeState == .deleted { continue }
                    throw CabinetError.malformedRecord(entry.location(row: row),
                                                       reason: "the full-text index names this row, which holds no object; `cabinet reindex` rebuilds the index")
                }
                result.append(unsafeDowncast(object, to: T.self))
            }
            return result
        }
    }
}

/// One search's work on an index: which rows hold every term.
///
/// A word's entries are read up to ``scanLimit`` of them; the rows of the words
/// read whole are intersected, and each row left is then checked against the
/// words too common to read whole with one lookup per row and word. So a query
/// pairing a rare word with a common one reads the rare one's rows, not the
/// common one's.
struct FullTextSearch {
    static let scanLimit = 4_096

    let store: ObjectStore
    let entry: ClassEntry
    let number: UInt8

    private var table: any OrderedStorageTable {
        store.indexView(of: entry.indexes!)
    }

    func rows(matching terms: [FullTextQuery.Term]) throws -> [UInt32] {
        var words: [String] = []
        for term in terms {
            switch term {
            case .word(let word): words.append(word)
            case .phrase(let tokens): words += tokens.map(\.text)
            case .prefix: break
            }
        }
        var complete: [[UInt32]] = []
        var common: [String] = []
        for word in Set(words).sorted() {
            let (rows, whole) = try postings([number] + FullTextIndexing.key(of: word), limit: FullTextSearch.scanLimit)
            if whole { complete.append(rows) } else { common.append(word) }
        }
        for case .prefix(let start) in terms {
            // Every word that starts so: their rows, merged.
            let (rows, _) = try postings([number] + Array(start.utf8), limit: nil)
            complete.append(Array(Set(rows)).sorted())
        }
        var candidates: [UInt32]
        if let smallest = complete.min(by: { $0.count < $1.count }) {
            candidates = smallest
            for rows in complete { candidates = intersect(candidates, rows) }
        } else {
            // Only common words: read the first whole, check the others per row.
            candidates = try postings([number] + FullTextIndexing.key(of: common[0]), limit: nil).rows
        }
        for word in common where !candidates.isEmpty {
            candidates = try candidates.filter { try positions(of: word, in: $0) != nil }
        }
        for case .phrase(let tokens) in terms {
            candidates = try candidates.filter { try holds(tokens, row: $0) }
        }
        return candidates
    }

    /// The rows of the entries whose keys start with `prefix`, in key order (for
    /// one word: by row), and whether that is all of them (at most `limit`).
    private func postings(_ prefix: [UInt8], limit: Int?) throws -> (rows: [UInt32], whole: Bool) {
        var rows: [UInt32] = []
        var whole = true
        try store.scanIndex(entry, (prefix, IndexKeys.keyAfterPrefix(prefix)), descending: false) { row in
            if rows.count == limit {
                whole = false
                return false
            }
            rows.append(row)
            return true
        }
        return (rows, whole)
    }

    /// The positions of `word` in row `row`, or `nil` if the row does not have it.
    private func positions(of word: String, in row: UInt32) throws -> [Int]? {
        let key = IndexKeys.entryKey(index: number, value: FullTextIndexing.key(of: word), row: row)
        let table = self.table
        return try key.withUnsafeBytes { key in
            try table.withValue(forKey: key) { value in
                guard let positions = FullTextIndexing.decode(value) else {
                    throw CabinetError.malformedRecord(RecordLocation(file: table.path, className: entry.name, rowID: row),
                                                       reason: "the positions of '\(word)' do not decode; `cabinet reindex` rebuilds the index")
                }
                return positions
            }
        }
    }

    /// Whether row `row` has `tokens` at their distances from one another.
    private func holds(_ tokens: [FullTextTokenizer.Token], row: UInt32) throws -> Bool {
        var starts: Set<Int>?
        for token in tokens {
            guard let found = try positions(of: token.text, in: row) else { return false }
            let here = Set(found.map { $0 - token.position })
            starts = starts.map { $0.intersection(here) } ?? here
            if starts!.isEmpty { return false }
        }
        return true
    }

    private func intersect(_ a: [UInt32], _ b: [UInt32]) -> [UInt32] {
        var result: [UInt32] = []
        var i = 0, j = 0
        while i < a.count && j < b.count {
            if a[i] == b[j] {
                result.append(a[i])
                i += 1
                j += 1
            } else if a[i] < b[j] {
                i += 1
            } else {
                j += 1
            }
        }
        return result
    }
}
