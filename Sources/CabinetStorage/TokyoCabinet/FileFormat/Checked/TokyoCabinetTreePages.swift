import CTokyoCabinet

extension TokyoCabinetTreeScan {
    /// One open B+ tree as its map readers read it: each page found in the hash
    /// file underneath, in the map or (beyond it) with `pread`, and every page the
    /// tree links to that is missing, empty or damaged an error naming the file
    /// and the page, never something handed on to Tokyo Cabinet's page loader.
    struct Tree {
        let bdb: UnsafeMutablePointer<TCBDB>
        let hdb: UnsafeMutablePointer<TCHDB>?
        let bigEndian: Bool
        let path: String

        init(bdb: UnsafeMutablePointer<TCBDB>, bigEndian: Bool, path: String) {
            self.bdb = bdb
            hdb = bdb.pointee.hdb
            self.bigEndian = bigEndian
            self.path = path
        }

        /// Calls `body` with the page of `key` and whether it lies in the map (its
        /// bytes outlive the call only then); `nil` when the file is not one read here.
        func withPage<T>(_ key: PageKey, hdb: UnsafeMutablePointer<TCHDB>,
                         _ body: (UnsafeRawBufferPointer, Bool) throws -> T) throws -> T? {
            try key.withBytes { bytes in
                switch TokyoCabinetLookup.find(hdb, key: bytes, bigEndian: bigEndian) {
                case .found(let page):
                    guard page.count > 0 else { throw damage(page: key, "an empty page") }
                    return try body(page, true)
                case .absent:
                    throw damage(page: key, "a page the tree links to is missing")
                case .damaged(let damage):
                    throw damage.error(path: path)
                case .unsettled:
                    switch try TokyoCabinetLookup.readUnmapped(hdb, key: bytes, bigEndian: bigEndian, path: path, { page in
                        guard page.count > 0 else { throw damage(page: key, "an empty page") }
                        return try body(page, false)
                    }) {
                    case .found(let result): return result
                    case .absent: throw damage(page: key, "a page the tree links to is missing")
                    case .notRead: return nil
                    }
                }
            }
        }

        func damage(leaf id: UInt64, _ what: String) -> CabinetError { damage(page: leafKey(id), what) }
        func damage(node id: UInt64, _ what: String) -> CabinetError { damage(page: nodeKey(id), what) }

        /// A damaged page: the B+ tree's words for what a scan of a hash file says (``BlockReader``).
        func damage(page key: PageKey, _ what: String) -> CabinetError {
            let name = key.withBytes { String(decoding: $0, as: UTF8.self) }
            return .backendFailure(RecordLocation(file: path), operation: "read", code: Int32(TCEMISC),
                                   message: "invalid B+ tree page '\(name)' (\(what)); run `cabinet verify`, then `cabinet reindex` the class or restore a backup")
        }

        /// How many leaves a walk along the leaves' links may visit: as many as the
        /// file can hold pages, so that even leaves without keys linked in a circle end.
        var maxLeaves: Int {
            guard let hdb else { return 0 }
            return Int(clamping: hdb.pointee.fsiz / 16) + 1
        }
    }

    /// What a walk along the leaves does after one: go on to the leaf named, end,
    /// or leave the rest to Tokyo Cabinet's cursor (the table changed under it).
    enum LeafStep {
        case goOn(UInt64)
        case finished
        case unsettled
    }

    /// Walks the leaves from `start` while `visit` goes on: each leaf's page parsed
    /// whole (damage throws, naming it), at most ``Tree/maxLeaves`` of them, so
    /// that leaves linked in a circle end with an error.
    static func walkLeaves(_ tree: Tree, hdb: UnsafeMutablePointer<TCHDB>, from start: UInt64,
                           _ visit: (_ leaf: UInt64, _ page: UnsafeRawBufferPointer, _ entries: UnsafeBufferPointer<Entry>,
                                     _ links: (prev: UInt64, next: UInt64)) throws -> LeafStep) throws -> Outcome {
        let leaves = LeafEntries(tree.bdb)
        var leafID = start
        var steps = tree.maxLeaves
        while leafID != 0 {
            guard steps > 0 else { throw tree.damage(leaf: leafID, "leaves linked in a circle") }
            steps -= 1
            let id = leafID
            let step = try tree.withPage(leafKey(id), hdb: hdb) { page, _ in
                let (prev, next, count) = try leaves.parse(page, leaf: id, tree: tree)
                return try visit(id, page, UnsafeBufferPointer(rebasing: leaves.entries[0..<count]), (prev, next))
            }
            switch step {
            case .none, .unsettled?: return .unsettled   // not a file read here, or changed under the walk
            case .finished?: return .finished
            case .goOn(let next)?: leafID = next
            }
        }
        return .finished
    }

    /// Copies `key` into `delivered` (where a scan handed over to Tokyo Cabinet
    /// resumes), after checking it follows the key delivered before in the scan's
    /// direction: keys out of order are damage (a circle of leaves, a page changed).
    @inline(__always)
    static func deliver(_ key: UnsafeRawBufferPointer, into delivered: inout [UInt8]?, descending: Bool, tree: Tree, leaf: UInt64) throws {
        if delivered == nil {
            delivered = []
            delivered!.reserveCapacity(max(key.count, 64))
        } else if !delivered!.withUnsafeBytes({ descending ? orderedKeyPrecedes(key, $0) : orderedKeyPrecedes($0, key) }) {
            throw tree.damage(leaf: leaf, "keys out of order: leaves linked in a circle, or a page changed")
        }
        delivered!.removeAll(keepingCapacity: true)
        delivered!.append(contentsOf: key)
    }

    /// Room for a leaf's records, allocated once a scan and grown for a page
    /// with more records than it holds (a leaf holds at most `lmemb` records, a
    /// few more while Tokyo Cabinet splits it; each takes at least 3 bytes).
    final class LeafEntries {
        private(set) var entries: UnsafeMutableBufferPointer<Entry>

        init(_ bdb: UnsafeMutablePointer<TCBDB>) {
            entries = .allocate(capacity: Int(min(max(bdb.pointee.lmemb, 64), 4_096)) * 2)
        }

        deinit { entries.deallocate() }

        /// ``parseLeaf(_:into:)`` of the page of leaf `id`; damage throws.
        func parse(_ page: UnsafeRawBufferPointer, leaf id: UInt64, tree: Tree) throws -> (prev: UInt64, next: UInt64, count: Int) {
            if page.count / 3 + 1 > entries.count {
                entries.deallocate()
                entries = .allocate(capacity: page.count / 3 + 1)
            }
            guard let parsed = parseLeaf(page, into: entries) else {
                throw tree.damage(leaf: id, "a leaf that does not parse whole, or a key with duplicates")
            }
            return parsed
        }
    }
}
