import CabinetStorage

/// One search's work on an index: which rows hold every term.
///
/// Each word's posting blocks (``PostingBlock``) are read up to ``scanLimit``
/// rows; the words read whole are intersected. A word too common to read whole
/// is checked row by row when few candidates are left (a lookup of the block
/// each row falls in, consecutive rows sharing it), and read whole and
/// intersected otherwise. So a query pairing a rare word with a common one
/// reads the rare one's rows, and two common words are two sequential reads
/// of a few hundred blocks and a merge.
struct FullTextSearch {
    /// The rows of a word read before it counts as common.
    static let scanLimit = 4_096
    /// Up to this many candidates, a common word is looked up per row instead of read whole.
    static let lookupLimit = 512

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
            let (rows, whole) = try postings(prefix(of: word), limit: FullTextSearch.scanLimit)
            if whole { complete.append(rows) } else { common.append(word) }
        }
        for case .prefix(let start) in terms {
            // Every word that starts so: their rows, merged.
            let (rows, _) = try postings([number] + Array(start.utf8), limit: nil)
            complete.append(Array(Set(rows)).sorted())
        }
        var candidates: [UInt32]?
        for rows in complete.sorted(by: { $0.count < $1.count }) {
            candidates = candidates.map { intersect($0, rows) } ?? rows
        }
        var lookups: [String: Lookup] = [:]
        for word in common {
            if var known = candidates, known.count <= FullTextSearch.lookupLimit {
                var lookup = Lookup(search: self, word: word)
                known = try known.filter { try lookup.positions(in: $0) != nil }
                lookups[word] = lookup
                candidates = known
            } else {
                let rows = try postings(prefix(of: word), limit: nil).rows
                candidates = candidates.map { intersect($0, rows) } ?? rows
            }
        }
        guard var result = candidates else { return [] }
        for case .phrase(let tokens) in terms where !result.isEmpty {
            result = try result.filter { row in
                var starts: Set<Int>?
                for token in tokens {
                    var lookup = lookups[token.text] ?? Lookup(search: self, word: token.text)
                    defer { lookups[token.text] = lookup }
                    guard let found = try lookup.positions(in: row) else { return false }
                    let here = Set(found.map { $0 - token.position })
                    starts = starts.map { $0.intersection(here) } ?? here
                    if starts!.isEmpty { return false }
                }
                return true
            }
        }
        return result
    }

    /// The key prefix of `word`'s posting blocks.
    private func prefix(of word: String) -> [UInt8] { [number] + FullTextIndexing.key(of: word) }

    private func damaged(_ reason: String) -> CabinetError {
        CabinetError.malformedRecord(RecordLocation(file: table.path, className: entry.name),
                                     reason: "\(reason); `cabinet reindex` rebuilds the index")
    }

    /// The rows in the posting blocks whose keys start with `prefix`, in key order
    /// (for one word: ascending), and whether that is all of them (more than `limit`: not).
    private func postings(_ prefix: [UInt8], limit: Int?) throws -> (rows: [UInt32], whole: Bool) {
        var rows: [UInt32] = []
        var whole = true
        let table = self.table
        // One word's blocks follow one another; a prefix's words are merged by the caller.
        let oneWord = prefix.last == 0
        try store.readingCommittedState {
            try prefix.withUnsafeBytes { lower in
                try IndexKeys.keyAfterPrefix(prefix).withUnsafeOptionalBytes { upper in
                    try table.forEach(from: lower, to: upper, descending: false) { key, value in
                        guard key.count >= prefix.count + 4, key[key.count - 5] == 0, let first = IndexKeys.row(ofEntry: key) else {
                            throw damaged("a full-text posting block whose key is \(key.count) bytes")
                        }
                        if oneWord, let last = rows.last, first <= last {
                            throw damaged("posting blocks of one word whose rows overlap (row \(first) after \(last))")
                        }
                        do {
                            try PostingBlock.appendRows(of: value, firstRow: first, to: &rows)
                        } catch {
                            throw damaged("a posting block of the word '\(String(decoding: key[1..<(key.count - 5)], as: UTF8.self))' is damaged (\(error))")
                        }
                        if let limit, rows.count > limit {
                            whole = false
                            return false
                        }
                        return true
                    }
                }
            }
        }
        return (rows, whole)
    }

    /// One word's positions, row by row, for ascending rows: the block the last
    /// row fell in is kept, so rows close together read it once.
    struct Lookup {
        let search: FullTextSearch
        let word: String
        private var block: (rows: [UInt32], positions: [[UInt8]])?

        init(search: FullTextSearch, word: String) {
            self.search = search
            self.word = word
        }

        /// The positions of the word in `row`, or `nil` if the row does not have it.
        mutating func positions(in row: UInt32) throws -> [Int]? {
            if block.map({ row < $0.rows.first! || row > $0.rows.last! }) ?? true {
                block = try load(row)
            }
            guard let block, let at = block.rows.firstIndex(of: row) else { return nil }
            guard let positions = block.positions[at].withUnsafeBytes(FullTextIndexing.decode) else {
                throw search.damaged("the positions of '\(word)' in row \(row) do not decode")
            }
            return positions
        }

        /// The block `row` falls in: the last one that starts at or before it.
        private func load(_ row: UInt32) throws -> (rows: [UInt32], positions: [[UInt8]])? {
            let table = search.table
            do {
                return try search.store.readingCommittedState {
                    try PostingBlock.withBlock(index: search.number, word: FullTextIndexing.key(of: word), row: row, in: table) { first, bytes in
                        let members = try PostingBlock.members(of: bytes, firstRow: first)
                        return (members.map(\.row), members.map(\.positions))
                    }
                }
            } catch let error as PostingBlock.Damage {
                throw search.damaged("a posting block of the word '\(word)' is damaged (\(error))")
            }
        }
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
