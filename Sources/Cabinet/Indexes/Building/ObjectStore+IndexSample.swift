/// Whether an index file holds the values its class declares now. Key paths
/// cannot be compared across builds of an app, and an index's default name
/// (`<place>:<kind>:<value type>`) stays when the index at that place is
/// replaced by another of the same kind and type (`.value(\.artist)` by
/// `.value(\.title)`): the catalog then matches, though every entry is of the
/// old property. So an open compares, for a sample of saved objects, the
/// entries the declared indexes make from each record with the ones the file
/// recorded for its row (its row record, written by the same save as the
/// record): a replaced index disagrees on the rows whose two values differ.
extension ObjectStore {
    /// How many saved objects an open compares: a few reads, whatever the class's size.
    static let indexSampleSize = 16

    /// Why the index file of `entry`'s class does not hold what `indexes`
    /// declares, judged by the first ``indexSampleSize`` objects the class file
    /// gives (in its own order); `nil` if every sampled row agrees. A record
    /// that does not decode tells nothing and is passed over (`cabinet verify`
    /// names it).
    func indexDisagreement(_ indexes: ClassIndexes, of entry: ClassEntry) throws -> String? {
        var sample: [(row: UInt32, made: RowEntries)] = []
        try entry.table.forEach { key, value in
            guard key.count == 4 else { return true }
            let row = UInt32(littleEndian: key.loadUnaligned(as: UInt32.self))
            guard row >= ClassMetadata.firstObjectRowID else { return true }
            do {
                sample.append((row, try indexEntries(ofRecord: value, row: row, entry: entry, indexes: indexes)))
            } catch is CabinetError {
                return true
            }
            return sample.count < ObjectStore.indexSampleSize
        }
        for (row, made) in sample {
            let recorded: RowEntries
            do {
                recorded = try indexes.recorded(row: row, in: indexes.table) ?? RowEntries(entries: [])
            } catch let error as CabinetError where [.malformedRecord, .checksumMismatch, .truncatedRecord].contains(error.code) {
                return "the entries it recorded for row \(row) are damaged (\(error))"
            }
            for declared in indexes.declared {
                let number = declared.number
                if made.entries.filter({ $0.index == number }) != recorded.entries.filter({ $0.index == number }) {
                    return "its index \(declared.label) holds other values than the class declares there now (row \(row)); an index replaced at the same place is built again"
                }
            }
        }
        return nil
    }
}
