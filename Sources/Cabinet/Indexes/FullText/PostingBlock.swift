import CabinetStorage

/// A run of one word's rows in a full-text index, stored as one record: the
/// rows that hold the word, ascending, each with the word's positions.
///
/// Key: the index number, the word's key (``FullTextIndexing/key(of:)``), then
/// the block's first row (UInt32 big-endian): ``IndexKeys/entryKey(index:value:row:)``.
/// Value, per row: the gap from the row before (the first row's, from the
/// key's row: 0) as a varint, the byte count of its positions as a varint, and
/// the positions (``FullTextIndexing/encode(_:)``).
///
/// A word's blocks partition the row IDs: a block holds rows from its first row
/// up to the next block's first row. A save rewrites only the blocks its rows
/// fall in, and keeps each near ``targetSize`` bytes, so a word in a million
/// titles is a few hundred records a search reads in order (as FTS5's doclists
/// and Lucene's blocks), and a save of one object rewrites a couple of
/// kilobytes per word.
enum PostingBlock {
    /// A block grows to this many bytes before a save splits it.
    static let sizeLimit = 2_048
    /// The size a split or a bulk write fills blocks to, leaving room to grow.
    static let targetSize = 1_536

    /// One row of a block, as a save rewrites it.
    struct Member {
        var row: UInt32
        var positions: [UInt8]
    }

    /// What is wrong with a block's bytes (the caller says where).
    struct Damage: Error, CustomStringConvertible {
        let description: String
    }

    /// Reads a stored block's rows in order, checking every number: damage is
    /// a thrown ``Damage``, never a trap.
    struct Reader {
        private let bytes: UnsafeRawBufferPointer
        private var offset = 0
        private var row: UInt32
        private var started = false

        init(_ bytes: UnsafeRawBufferPointer, firstRow: UInt32) throws(Damage) {
            guard !bytes.isEmpty else { throw Damage(description: "an empty posting block") }
            self.bytes = bytes
            row = firstRow
        }

        /// The next row and its positions' bytes; `nil` after the last.
        mutating func next() throws(Damage) -> (row: UInt32, positions: UnsafeRawBufferPointer)? {
            guard offset < bytes.count else { return nil }
            guard let gap = Varint.read(bytes, at: &offset, limit: UInt64(UInt32.max - row)) else {
                throw Damage(description: "a row gap past the largest row ID, or cut short, at byte \(offset)")
            }
            // The first row is the key's; each next one is above the one before.
            guard started ? gap > 0 : gap == 0 else {
                throw Damage(description: started ? "rows out of order at byte \(offset)" : "a first row other than the key's")
            }
            started = true
            row += UInt32(gap)
            // The limit is checked after the count is read: past its own bytes.
            guard let count = Varint.read(bytes, at: &offset), count > 0, count <= UInt64(bytes.count - offset) else {
                throw Damage(description: "row \(row)'s positions are missing or run past the block")
            }
            let start = offset
            offset += Int(count)
            return (row, UnsafeRawBufferPointer(rebasing: bytes[start..<offset]))
        }
    }

    /// The key and bytes of the block of `word` (its key) in index `index` that
    /// `row` falls in (the last that starts at or before it), passed to `body`;
    /// `nil` when the word has no such block.
    static func withBlock<R>(index: UInt8, word: [UInt8], row: UInt32, in table: any OrderedStorageTable,
                             _ body: (_ firstRow: UInt32, _ bytes: UnsafeRawBufferPointer) throws -> R) throws -> R? {
        let prefix = [index] + word
        let upper = IndexKeys.entryKey(index: index, value: word, row: row) + [0]
        var result: R?
        try prefix.withUnsafeBytes { lower in
            try upper.withUnsafeBytes { upper in
                try table.forEach(from: lower, to: upper, descending: true) { key, value in
                    guard key.count == prefix.count + 4, let first = IndexKeys.row(ofEntry: key) else {
                        throw Damage(description: "a posting block whose key is \(key.count) bytes")
                    }
                    result = try body(first, value)
                    return false
                }
            }
        }
        return result
    }

    /// The positions' bytes of `row` in the block of `word` it falls in; `nil` if it is not there.
    static func positions(index: UInt8, word: [UInt8], row: UInt32, in table: any OrderedStorageTable) throws -> [UInt8]? {
        try withBlock(index: index, word: word, row: row, in: table) { first, bytes -> [UInt8]? in
            var reader = try Reader(bytes, firstRow: first)
            while let member = try reader.next(), member.row <= row {
                if member.row == row { return Array(member.positions) }
            }
            return nil
        } ?? nil
    }

    /// The rows of a block, appended to `rows` in order.
    /// The same checks as ``Reader``, in one loop: a search reads every row of
    /// a common word this way, and most gaps and lengths are one byte.
    static func appendRows(of bytes: UnsafeRawBufferPointer, firstRow: UInt32, to rows: inout [UInt32]) throws(Damage) {
        guard !bytes.isEmpty else { throw Damage(description: "an empty posting block") }
        // Every row takes at least three bytes. Grown by doubling: reserving the exact
        // count at each block copied the whole array once a block. Reserved on every
        // call: then the optimizer keeps the appends below free of a uniqueness
        // check each (a reserve under an `if` made every append check).
        let most = rows.count + bytes.count / 3
        rows.reserveCapacity(most > rows.capacity ? max(most, 2 * rows.capacity) : most)
        var offset = 0, row = firstRow, started = false
        while offset < bytes.count {
            var gap: UInt64, count: UInt64
            if bytes[offset] < 0x80 {
                gap = UInt64(bytes[offset])
                offset += 1
            } else {
                guard let long = Varint.read(bytes, at: &offset) else { throw Damage(description: "a row gap cut short at byte \(offset)") }
                gap = long
            }
            guard gap <= UInt64(UInt32.max - row) else { throw Damage(description: "a row gap past the largest row ID at byte \(offset)") }
            guard started ? gap > 0 : gap == 0 else {
                throw Damage(description: started ? "rows out of order at byte \(offset)" : "a first row other than the key's")
            }
            started = true
            row += UInt32(gap)
            if offset < bytes.count && bytes[offset] < 0x80 {
                count = UInt64(bytes[offset])
                offset += 1
            } else {
                guard let long = Varint.read(bytes, at: &offset) else { throw Damage(description: "row \(row)'s positions are missing") }
                count = long
            }
            guard count > 0, count <= UInt64(bytes.count - offset) else {
                throw Damage(description: "row \(row)'s positions are missing or run past the block")
            }
            offset += Int(count)
            rows.append(row)
        }
    }

    /// A block's members, copied out.
    static func members(of bytes: UnsafeRawBufferPointer, firstRow: UInt32) throws(Damage) -> [Member] {
        var reader = try Reader(bytes, firstRow: firstRow)
        var members: [Member] = []
        while let member = try reader.next() { members.append(Member(row: member.row, positions: Array(member.positions))) }
        return members
    }

    /// The bytes of a block holding `members` (ascending rows, at least one),
    /// whose key names the first one's row.
    static func encode(_ members: ArraySlice<Member>) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(members.reduce(0) { $0 + 3 + $1.positions.count })
        var last = members.first!.row
        for member in members {
            Varint.append(UInt64(member.row - last), to: &bytes)
            last = member.row
            Varint.append(UInt64(member.positions.count), to: &bytes)
            bytes += member.positions
        }
        return bytes
    }

    /// The bytes `member` takes in a block after a row `gap` below it.
    private static func size(of member: Member, gap: UInt32) -> Int {
        varintSize(UInt64(gap)) + varintSize(UInt64(member.positions.count)) + member.positions.count
    }

    private static func varintSize(_ value: UInt64) -> Int { max(1, (64 - value.leadingZeroBitCount + 6) / 7) }

    /// `members` cut into blocks: one if it fits in ``sizeLimit``, else runs of
    /// about ``targetSize``. Each run is keyed by its first row.
    static func split(_ members: [Member]) -> [ArraySlice<Member>] {
        guard !members.isEmpty else { return [] }
        var sizes: [Int] = []
        sizes.reserveCapacity(members.count)
        for (i, member) in members.enumerated() { sizes.append(size(of: member, gap: i == 0 ? 0 : member.row - members[i - 1].row)) }
        guard sizes.reduce(0, +) > sizeLimit else { return [members[...]] }
        var runs: [ArraySlice<Member>] = []
        var start = 0, size = 0
        for i in members.indices {
            // A run's first member has a gap of 0 (1 byte) instead of its gap from the one before.
            let here = size == 0 ? PostingBlock.size(of: members[i], gap: 0) : sizes[i]
            if size > 0 && size + here > targetSize {
                runs.append(members[start..<i])
                start = i
                size = PostingBlock.size(of: members[i], gap: 0)
            } else {
                size += here
            }
        }
        runs.append(members[start...])
        return runs
    }
}
