import CTokyoCabinet
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An ascending scan of an open Tokyo Cabinet B+ tree that reads its pages
/// straight from the map of the hash file underneath, as ``TokyoCabinetLookup``
/// reads a hash file's records, instead of through the tree's page cache.
///
/// Why: Tokyo Cabinet loads a page into its cache by copying every record of it
/// into a `malloc`ed block of its own (and frees a page's worth when the cache is
/// full), so an index query that finds ten songs among a million paid for a whole
/// leaf of records, copied and freed, to read a few of them. Here a scan walks from the root to its first leaf
/// and along the leaves' `next` links, reading keys and values in place.
///
/// The page formats are Tokyo Cabinet's (`tcbdbnodesave`, `tcbdbleafsave`;
/// `docs/FORMAT.md`): a leaf is the record of its ID in lowercase hexadecimal,
/// an inner node the record of `#` and its ID less `BDBNODEIDBASE`; numbers are
/// Tokyo Cabinet's variable-length ones. The tree must have no page that only
/// its cache holds: the owner scans this way only outside a transaction and with
/// no write since the last commit or sync (each flushes every changed page).
///
/// Every length and offset is checked. A page beyond the map is read with
/// `pread(2)` (``TokyoCabinetLookup/readUnmapped(_:key:bigEndian:path:_:)``).
/// Damage (a page the tree links to that is missing or does not parse whole, a
/// key with duplicates, keys out of order, a tree deeper than Tokyo Cabinet
/// allows) throws `backendFailure` naming the file and the page: Tokyo
/// Cabinet's own page loader trusts the sizes it reads, so a damaged page must
/// never reach it. Only a file this does not read at all (compression, a custom
/// codec) makes the scan ``Outcome/unsettled``, for Tokyo Cabinet's cursor to
/// go on after the last key delivered. Same rule as the lookups: it changes
/// nothing, and runs while no thread writes.
enum TokyoCabinetTreeScan {
    /// Tokyo Cabinet's `BDBNODEIDBASE`: inner nodes' IDs are above it, leaves' below.
    static let nodeIDBase: UInt64 = (1 << 48) + 1
    /// Tokyo Cabinet's `BDBLEVELMAX`: no tree it makes is deeper.
    static let maxLevels = 64

    enum Outcome: Equatable {
        /// The scan ended: at `upper`, at the last record, or because `body` said so.
        case finished
        /// A page that this does not read: go on with Tokyo Cabinet after the
        /// last key delivered (from `lower` when none was).
        case unsettled
    }

    /// One record of a leaf, by its place in the page: its key, then its value.
    struct Entry {
        var key: Int
        var keySize: Int
        var valueSize: Int
        var value: Int { key + keySize }
    }

    /// Scans `bdb` from `lower` (inclusive) to `upper` (exclusive) in ascending
    /// order. Before each call of `body`, its key is copied into `delivered`, so
    /// an unsettled scan (or one `isCurrent` says was changed under it) resumes
    /// right after it; `delivered` stays `nil` until a key is. Inner nodes are
    /// parsed once per `generation` of the table, kept in `nodes`. Throws
    /// `backendFailure` on damage (see the type's comment), naming `path`.
    static func forEach(_ bdb: UnsafeMutablePointer<TCBDB>, bigEndian: Bool, path: String,
                        from lower: UnsafeRawBufferPointer?, to upper: UnsafeRawBufferPointer?,
                        nodes: TokyoCabinetTreeNodes, generation: Int, delivered: inout [UInt8]?, isCurrent: () -> Bool,
                        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws -> Outcome {
        let tree = Tree(bdb: bdb, bigEndian: bigEndian, path: path)
        guard let hdb = tree.hdb, let start = try leaf(of: lower, in: tree, nodes: nodes, generation: generation) else { return .unsettled }
        return try walkLeaves(tree, hdb: hdb, from: start, descending: false) { leafID, page, entries, links in
            let base = page.baseAddress!
            // Where the cursor lands in the first leaf; the following leaves are read whole.
            var first = 0
            if leafID == start, let lower {
                first = min(startIndex(of: lower, in: entries, page: page), entries.count)
                try checkStart(at: first, of: entries, page: page, bound: lower, leaf: leafID, links: links, descending: false, tree: tree, hdb: hdb)
            }
            for index in first..<entries.count {
                let entry = entries[index]
                let key = UnsafeRawBufferPointer(start: base + entry.key, count: entry.keySize)
                if let upper, !orderedKeyPrecedes(key, upper) {
                    try checkStop(at: index, of: entries, page: page, leaf: leafID, links: links, descending: false, tree: tree, hdb: hdb)
                    return .finished
                }
                try deliver(key, into: &delivered, descending: false, tree: tree, leaf: leafID)
                let value = UnsafeRawBufferPointer(start: base + entry.value, count: entry.valueSize)
                if try !body(key, value) { return .finished }
                // The contract says the table does not change during a scan; if it
                // did, the page read here may be stale: Tokyo Cabinet goes on.
                guard isCurrent() else { return .unsettled }
            }
            return .goOn(links.next)
        }
    }

    /// The ID of the leaf where a scan from `lower` starts (the first leaf when
    /// `nil`), walked down from the root as `tcbdbsearchleaf` walks; `nil` if the
    /// file is not one read here. Throws on damage.
    static func leaf(of lower: UnsafeRawBufferPointer?, in tree: Tree, nodes: TokyoCabinetTreeNodes, generation: Int) throws -> UInt64? {
        guard let lower else { return tree.bdb.pointee.first }
        return try descend(to: lower, from: tree.bdb.pointee.root, in: tree, nodes: nodes, generation: generation)?.leaf
    }

    /// The leaf that holds `key` in the tree whose root is `root`, and how many
    /// inner nodes lie above it; `nil` if the file is not one read here.
    static func descend(to key: UnsafeRawBufferPointer, from root: UInt64, in tree: Tree, nodes: TokyoCabinetTreeNodes,
                        generation: Int) throws -> (leaf: UInt64, levels: Int)? {
        guard let hdb = tree.hdb else { return nil }
        var id = root
        var levels = 0
        while id > nodeIDBase {
            guard levels < maxLevels else { throw tree.damage(node: id, "a tree deeper than Tokyo Cabinet makes one") }
            levels += 1
            if let kept = nodes.kept(id, generation: generation) {
                id = kept.child(for: key)
                continue
            }
            let nodeID = id
            let child = try tree.withPage(nodeKey(nodeID), hdb: hdb) { page, mapped -> UInt64 in
                guard let node = TokyoCabinetTreeNodes.parse(page) else {
                    throw tree.damage(node: nodeID, "an inner node that does not parse whole, or separators out of order")
                }
                // Separators point into the page: only a page in the map outlives this read.
                if mapped { nodes.keep(node, as: nodeID, generation: generation) }
                return node.child(for: key)
            }
            guard let child else { return nil }
            id = child
        }
        return (id, levels)
    }

    /// Fills `entries` with a leaf page's records and returns the IDs of the
    /// previous and the next leaf (0: none) and the number of records; `nil` if
    /// the page does not parse whole, as `tcbdbleafload` requires, has a key with
    /// duplicates, or more records than `entries` holds.
    static func parseLeaf(_ page: UnsafeRawBufferPointer, into entries: UnsafeMutableBufferPointer<Entry>) -> (prev: UInt64, next: UInt64, count: Int)? {
        var cursor = 0
        guard let prev = number(page, &cursor), let next = number(page, &cursor), let base = page.baseAddress else { return nil }
        var count = 0
        let end = page.count, capacity = entries.count
        while end - cursor >= 3 {
            let keySize: Int, valueSize: Int
            // An index record's sizes fit in a byte each and it has no extra values:
            // its three numbers are three bytes, tested with one load where four fit.
            let head = end - cursor >= 4 ? UInt32(littleEndian: base.loadUnaligned(fromByteOffset: cursor, as: UInt32.self))
                                         : UInt32(base.load(fromByteOffset: cursor, as: UInt8.self))
                                           | UInt32(base.load(fromByteOffset: cursor + 1, as: UInt8.self)) << 8
                                           | UInt32(base.load(fromByteOffset: cursor + 2, as: UInt8.self)) << 16
            if head & 0x00FF_8080 == 0 {
                keySize = Int(head & 0x7F)
                valueSize = Int(head >> 8 & 0x7F)
                cursor += 3
            } else {
                guard let longKey = number(page, &cursor), let longValue = number(page, &cursor),
                      let duplicates = number(page, &cursor), duplicates == 0,
                      longKey <= UInt64(end - cursor), longValue <= UInt64(end - cursor) else { return nil }
                keySize = Int(longKey)
                valueSize = Int(longValue)
            }
            guard keySize + valueSize <= end - cursor, count < capacity else { return nil }
            entries[count] = Entry(key: cursor, keySize: keySize, valueSize: valueSize)
            cursor += keySize + valueSize
            count += 1
        }
        return cursor == end && next < nodeIDBase && prev < nodeIDBase ? (prev, next, count) : nil
    }

    /// Where Tokyo Cabinet's cursor lands in a leaf when it jumps to `key`
    /// (`tcbdbcurjumpimpl`, forward): its binary search of the records
    /// (`tcbdbsearchrec`), step for step, so that even a leaf whose keys a damaged
    /// file put out of order starts where Tokyo Cabinet's scan would. In a sound
    /// leaf, the first record not below `key`. `entries.count` means the next leaf.
    static func startIndex(of key: UnsafeRawBufferPointer, in entries: UnsafeBufferPointer<Entry>, page: UnsafeRawBufferPointer) -> Int {
        let count = entries.count
        guard count > 0 else { return 0 }
        func order(_ index: Int) -> Int {
            let entry = entries[index]
            return orderedKeyCompare(key, UnsafeRawBufferPointer(rebasing: page[entry.key..<entry.key + entry.keySize]))
        }
        var left = 0, right = count, index = (left + right) / 2
        while right >= left && index < count {
            let found = order(index)
            if found == 0 { return index }
            if found < 0 { right = index - 1 } else { left = index + 1 }
            index = (left + right) / 2   // truncated toward zero, as C's
        }
        if index > 0 && index >= count { index = count - 1 }
        return order(index) < 0 ? index : index + 1
    }

    /// A page's key in the hash file: its ID in lowercase hexadecimal (`%llx`),
    /// after `#` for an inner node. At most 17 bytes, kept on the stack.
    struct PageKey {
        var bytes: (UInt64, UInt64, UInt64) = (0, 0, 0)
        var count = 0

        init(_ number: UInt64, node: Bool) {
            count = withUnsafeMutableBytes(of: &bytes) { out in
                var digits = 1
                while digits < 16 && number >> (4 * UInt64(digits)) != 0 { digits += 1 }
                var index = 0
                if node { out[0] = UInt8(ascii: "#"); index = 1 }
                for place in stride(from: digits - 1, through: 0, by: -1) {
                    let digit = UInt8((number >> (4 * UInt64(place))) & 0xF)
                    out[index] = digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10
                    index += 1
                }
                return index
            }
        }

        func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
            try withUnsafeBytes(of: bytes) { try body(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        }
    }

    static func leafKey(_ id: UInt64) -> PageKey { PageKey(id, node: false) }
    static func nodeKey(_ id: UInt64) -> PageKey { PageKey(id - nodeIDBase, node: true) }

    /// One of Tokyo Cabinet's variable-length numbers (`TCREADVNUMBUF64`): seven
    /// bits a byte, low first; a byte that is not the last is stored as minus its
    /// bits minus one (its top bit set). `nil` past the page or past 64 bits.
    @inline(__always)
    static func number(_ page: UnsafeRawBufferPointer, _ cursor: inout Int) -> UInt64? {
        // Most numbers of a page (sizes, duplicate counts) fit in one byte.
        if cursor < page.count, page[cursor] < 0x80 {
            cursor += 1
            return UInt64(page[cursor - 1])
        }
        return longNumber(page, &cursor)
    }

    private static func longNumber(_ page: UnsafeRawBufferPointer, _ cursor: inout Int) -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while cursor < page.count {
            let byte = Int8(bitPattern: page[cursor])
            cursor += 1
            let bits = UInt64(byte >= 0 ? Int(byte) : -(Int(byte) + 1))
            guard shift < 64, (bits << shift) >> shift == bits else { return nil }
            value |= bits << shift
            if byte >= 0 { return value }
            shift += 7
        }
        return nil
    }
}
