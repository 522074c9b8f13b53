import CabinetStorage

/// One save's changes to the posting blocks (``PostingBlock``) of a class's
/// full-text indexes: gathered row by row as the save goes, then written word
/// by word, each block the rows fall in read once and written once, however
/// many of the save's rows it holds.
struct PostingChanges {
    private struct Change {
        var word: Int
        var row: UInt32
        var sequence: Int
        /// The row's positions in ``positions``; `nil` takes the row out.
        var positions: Range<Int>?
    }

    /// The key prefix of each changed word's blocks: index number, word key.
    private var words: [[UInt8]] = []
    private var wordNumbers: [[UInt8]: Int] = [:]
    private var changes: [Change] = []
    private var positions: [UInt8] = []

    var count: Int { changes.count }

    /// Puts `row` in the blocks of `word` (its key, ``FullTextIndexing/key(of:)``) in index `index`, with `positions`.
    mutating func set(index: UInt8, word: [UInt8], row: UInt32, positions bytes: [UInt8]) {
        let start = positions.count
        positions += bytes
        add(index, word, row, start..<positions.count)
    }

    /// Takes `row` out of the blocks of `word` in index `index`.
    mutating func remove(index: UInt8, word: [UInt8], row: UInt32) {
        add(index, word, row, nil)
    }

    private mutating func add(_ index: UInt8, _ word: [UInt8], _ row: UInt32, _ range: Range<Int>?) {
        let prefix = [index] + word
        let number: Int
        if let known = wordNumbers[prefix] {
            number = known
        } else {
            number = words.count
            words.append(prefix)
            wordNumbers[prefix] = number
        }
        changes.append(Change(word: number, row: row, sequence: changes.count, positions: range))
    }

    /// Writes every change: for each word, the blocks its changed rows fall in
    /// are read through `view` and their new contents go to `sink` (a block left
    /// empty is removed). Then empties itself.
    mutating func flush(view: any OrderedStorageTable, sink: ClassIndexes.Sink, className: String) throws {
        guard !changes.isEmpty else { return }
        // Words in key order, then rows; a row changed twice keeps its last change.
        var rank = [Int](repeating: 0, count: words.count)
        for (order, word) in words.indices.sorted(by: { words[$0].lexicographicallyPrecedes(words[$1]) }).enumerated() { rank[word] = order }
        changes.sort { (rank[$0.word], $0.row, $0.sequence) < (rank[$1.word], $1.row, $1.sequence) }
        var start = 0
        while start < changes.count {
            var end = start + 1
            while end < changes.count && changes[end].word == changes[start].word { end += 1 }
            var merged: [Change] = []
            for i in start..<end where i + 1 == end || changes[i + 1].row != changes[i].row { merged.append(changes[i]) }
            try rewrite(words[changes[start].word], merged, view: view, sink: sink, className: className)
            start = end
        }
        self = PostingChanges()
    }

    /// Rewrites the blocks of one word (`prefix`) that `changes` (ascending rows) fall in.
    private func rewrite(_ prefix: [UInt8], _ changes: [Change], view: any OrderedStorageTable, sink: ClassIndexes.Sink,
                         className: String) throws {
        let damaged = { (reason: String) in
            CabinetError.malformedRecord(RecordLocation(file: view.path, className: className),
                                         reason: "a posting block of the word '\(String(decoding: prefix.dropFirst().dropLast(), as: UTF8.self))' is damaged (\(reason)); `cabinet reindex` rebuilds the index")
        }
        // The blocks in play: the one the first row falls in (the last block that
        // starts at or before it), and every block that starts up to the last row.
        var blocks: [(firstRow: UInt32, bytes: [UInt8]?)] = []
        func keep(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool {
            guard key.count == prefix.count + 4, let row = IndexKeys.row(ofEntry: key) else { throw damaged("a key of \(key.count) bytes") }
            blocks.append((row, Array(value)))
            return true
        }
        let word = Array(prefix.dropFirst())
        let first = IndexKeys.entryKey(index: prefix[0], value: word, row: changes.first!.row) + [0]
        let last = IndexKeys.entryKey(index: prefix[0], value: word, row: changes.last!.row) + [0]
        try prefix.withUnsafeBytes { lower in
            try first.withUnsafeBytes { upper in
                try view.forEach(from: lower, to: upper, descending: true) { key, value in _ = try keep(key, value); return false }
            }
        }
        try first.withUnsafeBytes { lower in
            try last.withUnsafeBytes { upper in try view.forEach(from: lower, to: upper, descending: false, keep) }
        }
        // Rows below the first block (or with no block) start blocks of their own.
        if blocks.first.map({ changes.first!.row < $0.firstRow }) ?? true { blocks.insert((changes.first!.row, nil), at: 0) }
        var removed: [UInt32] = []
        var written: [(UInt32, [UInt8])] = []
        var next = 0
        for (i, block) in blocks.enumerated() {
            let end = i + 1 < blocks.count ? blocks[i + 1].firstRow : nil
            var mine = next
            // Only a block that holds changed rows is read: its last row must lie below the next block's first.
            while mine < changes.count && end.map({ changes[mine].row < $0 }) ?? true { mine += 1 }
            guard mine > next else { continue }
            var members: [PostingBlock.Member]
            do {
                members = try block.bytes?.withUnsafeBytes { try PostingBlock.members(of: $0, firstRow: block.firstRow) } ?? []
            } catch let error as PostingBlock.Damage {
                throw damaged(error.description)
            }
            if let end, let last = members.last?.row, last >= end {
                throw damaged("its block at row \(block.firstRow) holds row \(last), past the next block's first row \(end)")
            }
            members = merge(members, changes[next..<mine])
            next = mine
            let runs = PostingBlock.split(members)
            if block.bytes != nil && runs.first?.first?.row != block.firstRow { removed.append(block.firstRow) }
            for run in runs { written.append((run.first!.row, PostingBlock.encode(run))) }
        }
        for row in removed { try sink(IndexKeys.entryKey(index: prefix[0], value: word, row: row), nil) }
        for (row, bytes) in written { try sink(IndexKeys.entryKey(index: prefix[0], value: word, row: row), bytes) }
    }

    /// `members` with `changes` (both ascending by row) applied.
    private func merge(_ members: [PostingBlock.Member], _ changes: ArraySlice<Change>) -> [PostingBlock.Member] {
        var result: [PostingBlock.Member] = []
        result.reserveCapacity(members.count + changes.count)
        var m = 0
        for change in changes {
            while m < members.count && members[m].row < change.row {
                result.append(members[m])
                m += 1
            }
            if m < members.count && members[m].row == change.row { m += 1 }
            if let range = change.positions { result.append(PostingBlock.Member(row: change.row, positions: Array(positions[range]))) }
        }
        result += members[m...]
        return result
    }
}
