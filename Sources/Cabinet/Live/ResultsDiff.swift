/// A row of a live result as the diff knows it: its row ID and a hash of the
/// record it was read from (`nil` for an object not read from its record).
struct RowIdentity: Sendable, Equatable {
    let row: UInt32
    let content: Int?
}

/// The changes from one list of rows to the next, as a list UI applies them
/// (the positions ``ResultsUpdate`` hands out): rows kept in the same order
/// stay; every other row of the old list is deleted and of the new one
/// inserted, so a row that moved is deleted and inserted; a kept row whose
/// record changed is modified.
///
/// Which rows stay: the longest run of common rows whose order both lists
/// agree on (a longest increasing subsequence of their new positions, taken
/// in old order), so that as few rows as possible are deleted and inserted.
struct ResultsDiff: Equatable {
    var deleted: [Int] = []
    var inserted: [Int] = []
    var modified: [Int] = []

    init(from old: [RowIdentity]?, to new: [RowIdentity]) {
        guard let old else {
            inserted = Array(new.indices)
            return
        }
        var newPosition: [UInt32: Int] = [:]
        newPosition.reserveCapacity(new.count)
        for (position, identity) in new.enumerated() { newPosition[identity.row] = position }
        // Common rows, in old order: (old position, new position).
        let common = old.enumerated().compactMap { position, identity in newPosition[identity.row].map { (position, $0) } }
        let kept = Self.longestIncreasing(common.map(\.1))
        var keptOld = Set<Int>(), keptNew = Set<Int>()
        for index in kept {
            let (oldPosition, newPosition) = common[index]
            keptOld.insert(oldPosition)
            keptNew.insert(newPosition)
            if old[oldPosition].content != new[newPosition].content || new[newPosition].content == nil { modified.append(newPosition) }
        }
        deleted = old.indices.filter { !keptOld.contains($0) }
        inserted = new.indices.filter { !keptNew.contains($0) }
        modified.sort()
    }

    /// Indices into `values` of a longest strictly increasing subsequence (patience sorting, O(n log n)).
    static func longestIncreasing(_ values: [Int]) -> [Int] {
        var tails: [Int] = []          // index into `values` of the smallest tail of each length
        var before = [Int](repeating: -1, count: values.count)
        for (index, value) in values.enumerated() {
            var low = 0, high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if values[tails[middle]] < value { low = middle + 1 } else { high = middle }
            }
            if low > 0 { before[index] = tails[low - 1] }
            if low == tails.count { tails.append(index) } else { tails[low] = index }
        }
        var result: [Int] = []
        var index = tails.last ?? -1
        while index >= 0 {
            result.append(index)
            index = before[index]
        }
        return result.reversed()
    }
}
