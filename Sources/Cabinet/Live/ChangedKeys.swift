import CabinetStorage

/// One commit as observations test it (``ReadRegion``): per table, the keys it
/// wrote or removed, or the whole table. Made from this process's committed
/// ``WriteBatch`` or from another process's save (``OthersSave``); a batch
/// shipped from another machine will be read the same way.
///
/// The key sets are made lazily, table by table, and only for tables some
/// observation read: a commit no observation cares about costs a dictionary
/// lookup per table. Used by one thread at a time (the one publishing the commit).
final class ChangedKeys {
    /// The keys a commit changed in one table.
    final class TableKeys {
        let whole: Bool
        /// Every key changed (row keys too: a range check needs them all).
        let keys: Set<[UInt8]>
        /// The row keys among `keys` (four bytes, little-endian), as numbers.
        let rows: Set<UInt32>
        /// `keys` in ascending order, made on the first range check.
        private var sorted: [[UInt8]]?

        init(whole: Bool, keys: Set<[UInt8]>, rows: Set<UInt32>? = nil) {
            self.whole = whole
            self.keys = keys
            self.rows = rows ?? Set(keys.lazy.compactMap(RowKey.row))
        }

        /// Whether a changed key lies from `lower` up to, not including, `upper` (`nil`: no end).
        func hasKey(from lower: [UInt8], below upper: [UInt8]?) -> Bool {
            if whole { return true }
            if keys.isEmpty { return false }
            let ordered = sorted ?? keys.sorted { $0.lexicographicallyPrecedes($1) }
            sorted = ordered
            // The first key at or after `lower`.
            var low = 0, high = ordered.count
            while low < high {
                let middle = (low + high) / 2
                if ordered[middle].lexicographicallyPrecedes(lower) { low = middle + 1 } else { high = middle }
            }
            guard low < ordered.count else { return false }
            guard let upper else { return true }
            return ordered[low].lexicographicallyPrecedes(upper)
        }
    }

    private enum Source {
        case batch(WriteBatch)
        case othersSave(OthersSave)
    }

    private let source: Source
    private var made: [String: TableKeys?] = [:]

    init(_ batch: WriteBatch) {
        source = .batch(batch)
    }

    init(_ save: OthersSave) {
        source = .othersSave(save)
    }

    /// Whether the commit replaced the whole store: everything may have changed.
    var isWholeStore: Bool {
        if case .othersSave(let save) = source { return save.wholeStore }
        return false
    }

    /// The names of the tables the commit changed (every table, for a whole store: see ``isWholeStore``).
    var tableNames: [String] {
        switch source {
        case .batch(let batch): batch.tableNames
        case .othersSave(let save): Array(save.tables.keys)
        }
    }

    /// What the commit changed in table `name`; `nil` if nothing.
    func keys(ofTable name: String) -> TableKeys? {
        if let known = made[name] { return known }
        let keys: TableKeys?
        switch source {
        case .batch(let batch):
            keys = batch.changes(ofTable: name).flatMap { changes in
                var set = Set<[UInt8]>(minimumCapacity: changes.count), rows = Set<UInt32>()
                changes.forEachChange { key, _, _ in
                    set.insert(Array(key))
                    if let row = RowKey.row(key) { rows.insert(row) }
                    return true
                }
                return set.isEmpty ? nil : TableKeys(whole: false, keys: set, rows: rows)
            }
        case .othersSave(let save):
            if save.wholeStore {
                keys = TableKeys(whole: true, keys: [])
            } else if let changed = save.tables[name] {
                keys = TableKeys(whole: changed == nil, keys: changed ?? [])
            } else {
                keys = nil
            }
        }
        made[name] = keys
        return keys
    }
}
