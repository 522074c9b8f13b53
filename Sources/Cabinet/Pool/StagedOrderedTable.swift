import CabinetStorage

/// The staged view of an ordered table (an index file) in a pool's write
/// block: range scans merge the group's staged records into the table's own,
/// in key order, so a query inside a block sees the blocks before it.
final class StagedOrderedTable: StagedTable, OrderedStorageTable {
    private let ordered: any OrderedStorageTable

    init(ordered: any OrderedStorageTable, name: String, staging: GroupStaging) {
        self.ordered = ordered
        super.init(base: ordered, name: name, staging: staging)
    }

    var isDamaged: Bool { ordered.isDamaged }

    /// Only outside a group's staging (a rebuild runs on the pool's own store).
    func removeAll() throws {
        guard staging.isDirect else {
            throw CabinetError.readOnly(path: path, reason: "an ordered table cannot be emptied while a commit group stages records in it")
        }
        try ordered.removeAll()
    }

    /// In key order, as the table lists its records.
    override func forEach(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        try forEach(from: nil, to: nil, descending: false, body)
    }

    func forEach(from lower: UnsafeRawBufferPointer?, to upper: UnsafeRawBufferPointer?, descending: Bool,
                 _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        if staging.isDirect || !hasStagedRecords { return try ordered.forEach(from: lower, to: upper, descending: descending, body) }
        var staged = stagedRecords(from: lower, to: upper)
        if descending { staged.reverse() }
        var next = 0
        // Staged records that come before `key` in the scan's direction (all of them when `key` is nil).
        func emitStaged(before key: UnsafeRawBufferPointer?) throws -> Bool {
            while next < staged.count {
                let record = staged[next]
                let comesFirst = key.map { key in
                    record.key.withUnsafeBytes { descending ? orderedKeyPrecedes(key, $0) : orderedKeyPrecedes($0, key) }
                } ?? true
                guard comesFirst else { return true }
                next += 1
                if let value = record.value {
                    let more = try record.key.withUnsafeBytes { key in try value.withUnsafeBytes { try body(key, $0) } }
                    if !more { return false }
                }
            }
            return true
        }
        var goOn = true
        try ordered.forEach(from: lower, to: upper, descending: descending) { key, value in
            goOn = try emitStaged(before: key)
            guard goOn else { return false }
            // A key staged too: the staged record (or its removal) stands for it.
            if next < staged.count, staged[next].key.elementsEqual(key) {
                let record = staged[next]
                next += 1
                guard let newValue = record.value else { return true }
                goOn = try newValue.withUnsafeBytes { try body(key, $0) }
                return goOn
            }
            goOn = try body(key, value)
            return goOn
        }
        if goOn { _ = try emitStaged(before: nil) }
    }
}
