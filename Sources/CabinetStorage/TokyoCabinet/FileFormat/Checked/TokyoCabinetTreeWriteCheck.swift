import CTokyoCabinet

extension TokyoCabinetTreeScan {
    /// The pages a B+ tree's writes will make Tokyo Cabinet load, read first by
    /// Cabinet's checked reader, so that a damaged index file fails a save with
    /// an error naming the page instead of crashing the process.
    ///
    /// Why: `tcbdbput` and `tcbdbout` load pages with `tcbdbleafload` and
    /// `tcbdbnodeload`, which trust the sizes they read (a damaged page is an
    /// allocation of gigabytes or a copy past the page), and at commit the hash
    /// file underneath walks each page's bucket chain as `tchdbput` does. Reads
    /// avoid them by reading the map (``TokyoCabinetTreeScan``); a write cannot.
    ///
    /// What a write loads, in `tcbdb.c`: the inner nodes from the root down to
    /// the key's leaf and the leaf (`tcbdbsearchleaf`); when the leaf splits, the
    /// leaf after it (`tcbdbleafdivide` relinks it); when a removal empties a leaf,
    /// the leaves before and after it (`tcbdbleafkill`), and the parent's removal
    /// can route that leaf's keys through its neighbours' nodes. Pages it creates
    /// take the next IDs (`++lnum`, `++nnum`), whose bucket chains the commit walks.
    ///
    /// In a transaction Tokyo Cabinet writes no page to the file before the
    /// commit (its cache is not flushed while `tran` is set), so the file holds
    /// the tree as it was when the transaction began: every page a write loads
    /// from the file is a page of that tree, reached from the root it had then.
    /// Splits and removals only add pages in the cache or reroute a key to a
    /// neighbouring leaf, so the pages above cover what later writes of the same
    /// transaction load. A check remembers what it read, once per page.
    final class WriteCheck {
        let root: UInt64
        let bigEndian: Bool
        /// The generation the inner nodes are kept under (``TokyoCabinetTreeNodes``):
        /// the file does not change while this check lasts.
        let generation: Int
        /// Leaves read whole, with their links.
        private var leaves: [UInt64: (prev: UInt64, next: UInt64)] = [:]
        /// Leaves whose neighbours, and the nodes above those, have been read.
        private var surroundings: Set<UInt64> = []
        /// The highest leaf and inner-node IDs whose bucket chains have been walked.
        private var walkedLeaf: UInt64
        private var walkedNode: UInt64
        /// The file's last inner-node ID when the check began.
        private let firstNode: UInt64

        /// A check of the tree `bdb` holds in its file now, whose root is `root`.
        init(_ bdb: UnsafeMutablePointer<TCBDB>, root: UInt64, bigEndian: Bool, generation: Int) {
            self.root = root
            self.bigEndian = bigEndian
            self.generation = generation
            // IDs are never used twice: only those above the file's last ones are new.
            walkedLeaf = bdb.pointee.lnum
            walkedNode = bdb.pointee.nnum
            firstNode = bdb.pointee.nnum
        }

        /// Reads every page a put (or, when `removing`, a delete) of `key` may make
        /// Tokyo Cabinet load from `bdb`'s file, and walks the bucket chains of
        /// the pages it may create. Damage throws `backendFailure` naming `path`
        /// and the page; a file this does not read is left to Tokyo Cabinet.
        func check(_ key: UnsafeRawBufferPointer, removing: Bool, in bdb: UnsafeMutablePointer<TCBDB>, path: String,
                   nodes: TokyoCabinetTreeNodes) throws {
            let tree = Tree(bdb: bdb, bigEndian: bigEndian, path: path)
            guard let hdb = tree.hdb,
                  let (leaf, levels) = try descend(to: key, from: root, in: tree, nodes: nodes, generation: generation) else { return }
            // A put may split the leaf and every node above it, and add a root: that many new IDs at most.
            // The tree is `levels` deep in the file, and one deeper for each root this transaction added,
            // each of which took a node ID: so never deeper than `levels` and the node IDs taken since.
            let nodesTaken = bdb.pointee.nnum &- firstNode
            try walkNewPages(leaves: bdb.pointee.lnum &+ 1, nodes: bdb.pointee.nnum &+ UInt64(levels) &+ nodesTaken &+ 1, tree: tree, hdb: hdb)
            guard let links = try read(leaf: leaf, tree: tree, hdb: hdb)?.links else { return }
            if links.next != 0 { _ = try read(leaf: links.next, tree: tree, hdb: hdb) }
            guard removing, !surroundings.contains(leaf) else { return }
            // The neighbours, and the nodes their edge keys pass on their way down.
            for (neighbour, last) in [(links.prev, true), (links.next, false)] where neighbour != 0 {
                guard let edge = try read(leaf: neighbour, tree: tree, hdb: hdb, edgeKey: last)?.edge else { continue }
                _ = try edge.withUnsafeBytes { try descend(to: $0, from: root, in: tree, nodes: nodes, generation: generation) }
            }
            surroundings.insert(leaf)
        }

        /// The links of leaf `id`, its page parsed whole the first time; with
        /// `edgeKey`, read again for its last key (`true`) or first (`false`).
        /// `nil` when the file is not one read here.
        private func read(leaf id: UInt64, tree: Tree, hdb: UnsafeMutablePointer<TCHDB>,
                          edgeKey: Bool? = nil) throws -> (links: (prev: UInt64, next: UInt64), edge: [UInt8]?)? {
            if let known = leaves[id], edgeKey == nil { return (known, nil) }
            let read = try tree.withPage(leafKey(id), hdb: hdb) { page, _ in
                try withUnsafeTemporaryAllocation(of: Entry.self, capacity: page.count / 3 + 1) { room in
                    guard let (prev, next, count) = parseLeaf(page, into: room) else {
                        throw tree.damage(leaf: id, "a leaf that does not parse whole, or a key with duplicates")
                    }
                    let edge = edgeKey.flatMap { last in
                        count > 0 ? Array(page[room[last ? count - 1 : 0].key..<room[last ? count - 1 : 0].value]) : nil
                    }
                    return (links: (prev: prev, next: next), edge: edge)
                }
            }
            if let read { leaves[id] = read.links }
            return read
        }

        /// Walks the bucket chains of the IDs up to `leaves` and `nodes` (node
        /// IDs counted from `BDBNODEIDBASE`), as the commit's `tchdbput` of a new
        /// page walks its chain, each ID once.
        private func walkNewPages(leaves: UInt64, nodes: UInt64, tree: Tree, hdb: UnsafeMutablePointer<TCHDB>) throws {
            while walkedLeaf < leaves {
                walkedLeaf &+= 1
                try walk(leafKey(walkedLeaf), tree: tree, hdb: hdb)
            }
            while walkedNode < nodes {
                walkedNode &+= 1
                try walk(PageKey(walkedNode, node: true), tree: tree, hdb: hdb)
            }
        }

        private func walk(_ key: PageKey, tree: Tree, hdb: UnsafeMutablePointer<TCHDB>) throws {
            try key.withBytes { try TokyoCabinetLookup.refuseDamagedWalk(hdb, key: $0, bigEndian: bigEndian, path: tree.path, operation: "write") }
        }
    }
}
