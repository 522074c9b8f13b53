/// The stored subtrees a save's new tree shares with the old one (their root
/// IDs), and which of them the walk of the old tree met.
///
/// An append keeps every child of the nodes on its path but one (a hundred or
/// more IDs a save), and the walk asks about each child of the old path. Kept in
/// a table addressed by the IDs' own bits: node IDs are random, so they need no
/// hashing. A sorted array searched by halving cost a sort a save, and a set
/// hashing each ID more (BENCHMARKS.md has the counts). IDs read from a
/// damaged or crafted file may collide in those bits; that makes probes longer,
/// never wrong: a table is at most a few hundred IDs, a save's own tree.
struct KeptNodes {
    /// What ``insert(_:)`` was given, repeats included, until ``seal()``.
    private var ids: [ListNodeID] = []
    /// Open addressing, linear probing: an index into `ids` plus one, 0 for empty.
    private var table: [Int32] = []
    private var found: [Bool] = []
    private var mask = 0

    /// Adds `id`; ``seal()`` before asking.
    mutating func insert(_ id: ListNodeID) { ids.append(id) }

    /// Builds the table from what was inserted, dropping repeats.
    mutating func seal() {
        var capacity = 8
        while capacity < ids.count * 2 { capacity *= 2 }
        mask = capacity - 1
        table = Array(repeating: 0, count: capacity)
        var unique: [ListNodeID] = []
        unique.reserveCapacity(ids.count)
        for id in ids {
            let place = slot(of: id, in: unique)
            guard place.index == nil else { continue }
            unique.append(id)
            table[place.free] = Int32(unique.count)
        }
        ids = unique
        found = Array(repeating: false, count: ids.count)
    }

    /// Where `id` is in `table` (its index in `known`), or the empty slot it would take.
    private func slot(of id: ListNodeID, in known: [ListNodeID]) -> (index: Int?, free: Int) {
        guard !table.isEmpty else { return (nil, 0) }
        var position = Int(truncatingIfNeeded: id.low ^ id.high) & mask
        while true {
            let entry = Int(table[position])
            if entry == 0 { return (nil, position) }
            if known[entry - 1] == id { return (entry - 1, position) }
            position = (position + 1) & mask
        }
    }

    func contains(_ id: ListNodeID) -> Bool { slot(of: id, in: ids).index != nil }

    /// Marks `id` found if it is kept; `true` if it is.
    mutating func markFound(_ id: ListNodeID) -> Bool {
        guard let index = slot(of: id, in: ids).index else { return false }
        found[index] = true
        return true
    }

    /// A kept ID the old tree did not hold, if any.
    var firstNotFound: ListNodeID? { found.firstIndex(of: false).map { ids[$0] } }
}
