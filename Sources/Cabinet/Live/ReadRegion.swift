/// What one evaluation of an observation read, table by table: the keys it
/// looked up, the key ranges it scanned, or a whole table (a full scan, a
/// count). A commit that changed none of it cannot change what the
/// evaluation computed, so the observation is not run again.
///
/// It is recorded below the objects, by the tables a context reads through
/// (``RecordingTable``): whatever a block reads — a fetch by row, an index
/// range, an object faulted through a reference, a list's nodes, a named
/// buffer — is in the region, with no bookkeeping in the object layer. A
/// commit is described in the same terms (``ChangedKeys``: per table, the
/// keys it wrote or removed), whether it is this process's ``WriteBatch``,
/// another process's save, or one shipped from another machine.
struct ReadRegion: Sendable {
    /// The region's part in one table.
    struct TableRegion: Sendable {
        /// Every key: a change anywhere in the table touches the region.
        var whole = false
        /// Row keys (four bytes, little-endian) looked up, found or not, as
        /// numbers: a query's rows cost no allocation each.
        var rows: Set<UInt32> = []
        /// Other keys looked up, found or not (a key that was missing may be inserted).
        var keys: Set<[UInt8]> = []
        /// Key ranges scanned: from `lower` up to, not including, `upper` (`nil`: the table's end).
        var ranges: [(lower: [UInt8], upper: [UInt8]?)] = []

        /// Whether it holds nothing: the table was not read.
        var isEmpty: Bool { !whole && rows.isEmpty && keys.isEmpty && ranges.isEmpty }

        mutating func read(key: UnsafeRawBufferPointer) {
            if let row = RowKey.row(key) { rows.insert(row) } else { keys.insert(Array(key)) }
        }

        /// Whether a commit that changed `changed` in this table touches this part.
        func isTouched(by changed: ChangedKeys.TableKeys) -> Bool {
            if whole || changed.whole { return true }
            // The smaller side probes the larger.
            if !rows.isEmpty && !changed.rows.isEmpty {
                if rows.count <= changed.rows.count {
                    for row in rows where changed.rows.contains(row) { return true }
                } else {
                    for row in changed.rows where rows.contains(row) { return true }
                }
            }
            if !keys.isEmpty {
                if keys.count <= changed.keys.count {
                    for key in keys where changed.keys.contains(key) { return true }
                } else {
                    for key in changed.keys where keys.contains(key) { return true }
                }
            }
            for range in ranges where changed.hasKey(from: range.lower, below: range.upper) { return true }
            return false
        }
    }

    private(set) var tables: [String: TableRegion] = [:]

    /// The tables the region reads any of.
    var tableNames: [String] { Array(tables.keys) }

    /// The region's part in table `name`; `nil` if it read nothing of it.
    func part(ofTable name: String) -> TableRegion? { tables[name] }

    mutating func read(key: UnsafeRawBufferPointer, inTable name: String) {
        tables[name, default: TableRegion()].read(key: key)
    }

    mutating func read(rows: [UInt32], inTable name: String) {
        tables[name, default: TableRegion()].rows.formUnion(rows)
    }

    /// Sets the part of table `name` (left out if empty).
    mutating func set(_ part: TableRegion, ofTable name: String) {
        tables[name] = part.isEmpty ? nil : part
    }

    mutating func read(from lower: [UInt8], below upper: [UInt8]?, inTable name: String) {
        tables[name, default: TableRegion()].ranges.append((lower, upper))
    }

    mutating func readAll(ofTable name: String) {
        tables[name, default: TableRegion()].whole = true
    }

    /// Whether a commit that changed `changed` touches the region.
    func isTouched(by changed: ChangedKeys) -> Bool {
        for (name, part) in tables {
            if let keys = changed.keys(ofTable: name), part.isTouched(by: keys) { return true }
        }
        return false
    }
}
