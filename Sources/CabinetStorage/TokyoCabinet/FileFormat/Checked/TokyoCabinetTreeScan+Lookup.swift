import CTokyoCabinet

extension TokyoCabinetTreeScan {
    /// The value of `key` in `bdb`, read in the map as ``forEach(_:bigEndian:path:from:to:nodes:generation:delivered:isCurrent:_:)``
    /// reads (same conditions, same checks): `body`'s result, `.some(nil)` when the
    /// tree has no such key, `nil` when the file is not one read here. Damage throws.
    ///
    /// Why not `tcbdbget`: Tokyo Cabinet's page loader trusts the sizes in a page
    /// (a damaged one is an allocation of gigabytes, or a copy past the page), so a
    /// read of a damaged index must stop here, with an error naming the page.
    static func value<R>(of key: UnsafeRawBufferPointer, in bdb: UnsafeMutablePointer<TCBDB>, bigEndian: Bool, path: String,
                         nodes: TokyoCabinetTreeNodes, generation: Int, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R?? {
        let tree = Tree(bdb: bdb, bigEndian: bigEndian, path: path)
        guard let hdb = tree.hdb, let leafID = try leaf(of: key, in: tree, nodes: nodes, generation: generation) else { return nil }
        return try tree.withPage(leafKey(leafID), hdb: hdb) { page, _ -> R? in
            try withUnsafeTemporaryAllocation(of: Entry.self, capacity: page.count / 3 + 1) { room in
                guard let (_, _, count) = parseLeaf(page, into: room) else {
                    throw tree.damage(leaf: leafID, "a leaf that does not parse whole, or a key with duplicates")
                }
                // Not checked around the key as a scan's start is: a damaged key that hides a
                // row's record here leaves its old entries in place, which the queries' check
                // of each object then reports.
                let entries = UnsafeBufferPointer(rebasing: room[0..<count])
                let index = startIndex(of: key, in: entries, page: page)
                guard index < count else { return nil }
                let entry = entries[index]
                guard orderedKeyCompare(key, UnsafeRawBufferPointer(rebasing: page[entry.key..<entry.value])) == 0 else { return nil }
                return try body(UnsafeRawBufferPointer(rebasing: page[entry.value..<entry.value + entry.valueSize]))
            }
        }
    }

    /// ``forEach(_:bigEndian:path:from:to:nodes:generation:delivered:isCurrent:_:)``
    /// in descending order: from the last key below `upper` (the last key when
    /// `nil`) down to `lower` (inclusive), along the leaves' `prev` links, each
    /// key delivered copied into `delivered` first (an unsettled scan goes on
    /// with Tokyo Cabinet's cursor below it). Keys must descend: a circle of
    /// leaves, or a page out of order, is damage.
    static func forEachDescending(_ bdb: UnsafeMutablePointer<TCBDB>, bigEndian: Bool, path: String,
                                  from lower: UnsafeRawBufferPointer?, to upper: UnsafeRawBufferPointer?,
                                  nodes: TokyoCabinetTreeNodes, generation: Int, delivered: inout [UInt8]?, isCurrent: () -> Bool,
                                  _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws -> Outcome {
        let tree = Tree(bdb: bdb, bigEndian: bigEndian, path: path)
        guard let hdb = tree.hdb else { return .unsettled }
        let start: UInt64
        if let upper {
            guard let found = try leaf(of: upper, in: tree, nodes: nodes, generation: generation) else { return .unsettled }
            start = found
        } else {
            start = bdb.pointee.last
        }
        return try walkLeaves(tree, hdb: hdb, from: start, descending: true) { leafID, page, entries, links in
            let base = page.baseAddress!
            // In the first leaf, below the first key not below `upper` (Tokyo Cabinet's jump, then one back).
            var index = entries.count
            if leafID == start, let upper {
                index = min(startIndex(of: upper, in: entries, page: page), entries.count)
                try checkStart(at: index - 1, of: entries, page: page, bound: upper, leaf: leafID, links: links, descending: true, tree: tree, hdb: hdb)
            }
            while index > 0 {
                index -= 1
                let entry = entries[index]
                let key = UnsafeRawBufferPointer(start: base + entry.key, count: entry.keySize)
                if let lower, orderedKeyPrecedes(key, lower) {
                    try checkStop(at: index, of: entries, page: page, leaf: leafID, links: links, descending: true, tree: tree, hdb: hdb)
                    return .finished
                }
                try deliver(key, into: &delivered, descending: true, tree: tree, leaf: leafID)
                if try !body(key, UnsafeRawBufferPointer(start: base + entry.value, count: entry.valueSize)) { return .finished }
                guard isCurrent() else { return .unsettled }
            }
            return .goOn(links.prev)
        }
    }
}
