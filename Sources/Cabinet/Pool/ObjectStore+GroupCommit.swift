extension ObjectStore {
    /// Writes every record the blocks of a commit group staged (see `WriteGroup`)
    /// as one save: one transaction if one table changed, else through the
    /// journal, exactly as ``save()`` writes several files, so a kill at any
    /// point leaves the store with all of the group or none of it.
    ///
    /// Called on the pool's root store, by the writer queue, holding the pool's
    /// lock exclusively. Returns once all is written. Throws with nothing written,
    /// except ``CabinetError/Code-swift.struct/saveNotFinished``: the group is
    /// decided (its journal finishes it at the next save or open).
    func commitStaged(_ staging: GroupStaging) throws {
        let tables = staging.tables.values.filter(\.hasStagedRecords).sorted { $0.name < $1.name }
        guard !tables.isEmpty else { return }
        // A journal an earlier commit could not remove (or finish): it goes first, as in save().
        if journalAwaitsReplay { try recoverInterruptedSave() }
        try changingTables {
            if backend.services.needsJournal && tables.count > 1 {
                try commitThroughJournal(tables)
            } else {
                try commitDirectly(tables)
            }
        }
    }

    /// One transaction per table; the tables of a backend without a journal
    /// (in memory), or a single Tokyo Cabinet file.
    private func commitDirectly(_ tables: [StagedTable]) throws {
        var begun: [StagedTable] = []
        do {
            for table in tables {
                try table.base.beginTransaction()
                begun.append(table)
                try table.forEachStaged { key, value in
                    try withRecordBytes(key, value) { key, value in try table.base.apply(value, forKey: key) }
                }
            }
        } catch {
            for table in begun { try? table.base.abortTransaction() }
            throw error
        }
        try commitTransactions(of: begun.map(\.base))
    }

    /// Several files: the journal first, then the files, then the journal goes,
    /// with the failure handling of a save's (`saveThroughJournal`).
    private func commitThroughJournal(_ tables: [StagedTable]) throws {
        var journal = SaveJournal()
        let indexes = tables.map { journal.tableIndex(for: $0.name) }
        Self.forEachStagedRecord(of: tables) { position, key, value in
            journal.record(table: indexes[position], key: key, value: value)
        }
        // The group is not in memory as pending changes: nothing to mark decided.
        // Its tables take the staged records as its replay would write them, in
        // the same order, without decoding the journal just encoded.
        try commitThroughJournal(journal, decided: {}, applying: {
            try self.applyInTransactions { put in
                try Self.forEachStagedRecord(of: tables) { position, key, value in try put(tables[position].name, key, value) }
            }
        })
    }

    /// Every staged record of `tables` with its table's position, table by
    /// table: the journal is written, and the tables take it, in this one order.
    private static func forEachStagedRecord(of tables: [StagedTable],
                                            _ body: (Int, UnsafeRawBufferPointer, UnsafeRawBufferPointer?) throws -> Void) rethrows {
        for (position, table) in tables.enumerated() {
            try table.forEachStaged { key, value in
                try withRecordBytes(key, value) { key, value in try body(position, key, value) }
            }
        }
    }
}
