import CabinetStorage

// An upgrade of a class whose records keep StoredLists out of line rewrites
// them as a save does: through a ListCollector, so a list read out of line is
// written out of line again, with its nodes where they are (an unchanged list
// costs its owner's record only), and a list the new version writes in another
// slot, or no longer writes, is moved or deleted with the records. Records and
// list records are two tables, so each part of the upgrade is one WriteBatch:
// all or nothing, even if the process is killed.

extension ObjectStore {
    /// A writer for the out-of-line lists of `entry`'s records, or `nil` if
    /// they can have none: a plain store, or no lists table. A class that no
    /// longer writes lists gets one too while the table has records, so that
    /// the trees an older version kept are deleted with the rewrite, not orphaned.
    func upgradeListWriter(for entry: ClassEntry) throws -> ListWriter? {
        guard recordFormat != .plain, let table = try listsTable(creating: false) else { return nil }
        guard try entry.writesLists || table.recordCount > 0 else { return nil }
        return ListWriter(table: table, format: recordFormat, backend: backend, writtenRoots: listRootsWritten)
    }

    /// Rewrites the rows in `range` that `shouldRewrite` accepts (and
    /// `metadata`, if given) with their lists, in one batch: every record
    /// and list record of the batch is applied, or none.
    func rewriteRowsKeepingLists(_ entry: ClassEntry, in range: ClosedRange<UInt32>, lists: ListWriter,
                                 finishing metadata: ClassMetadata?, where shouldRewrite: (UInt8) -> Bool) throws -> Int {
        var rewritten = 0
        var batch = WriteBatch()
        let classTable = batch.table(named: entry.name)
        let listsTable = batch.table(named: ObjectStore.listsTableName)
        let collector = ListCollector()
        let encoder = RecordEncoder(location: entry.location(), collector: collector)
        var buffer = DataBuffer()
        buffer.encoder = encoder
        try changingTables {
            // Everything is read before anything is written: the batch holds it
            // until the end, so each row's lists are read as they are on disk.
            try forEachRowToRewrite(entry, in: range, into: &buffer, with: encoder, where: shouldRewrite) { rowID, record in
                withUnsafeBytes(of: rowID.littleEndian) { batch.set(record, forKey: $0, inTable: classTable) }
                try lists.write(collector.lists, classID: entry.metadata.classID, row: rowID, isNew: false,
                                owner: entry.location(row: rowID)) { key, value in
                    withRecordBytes(key, value) { key, value in batch.set(value, forKey: key, inTable: listsTable) }
                }
                rewritten += 1
            }
            if let metadata {
                metadata.bytes.withUnsafeBytes { bytes in
                    withUnsafeBytes(of: ClassMetadata.rowID.littleEndian) { batch.set(bytes, forKey: $0, inTable: classTable) }
                }
            }
            guard rewritten > 0 || metadata != nil else { return }
            do {
                try commitToBackend(batch)
            } catch let error as CabinetError where error.code == .saveNotFinished {
                // Decided: its journal finishes it.
                listNodesCommitted(lists)
                if let metadata { entry.metadata = metadata }
                throw error
            }
        }
        listNodesCommitted(lists)
        return rewritten
    }
}
