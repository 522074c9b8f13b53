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
                    try key.withUnsafeBytes { key in
                        if let value {
                            try value.withUnsafeBytes { try table.base.setValue($0, forKey: key) }
                        } else {
                            try table.base.removeValue(forKey: key)
                        }
                    }
                }
            }
        } catch {
            for table in begun { try? table.base.abortTransaction() }
            throw error
        }
        var committed = 0
        do {
            for table in begun {
                try table.base.commitTransaction()
                committed += 1
            }
        } catch {
            // The table whose commit failed has rolled back itself; the ones after it have not.
            for table in begun[(committed + 1)...] { try? table.base.abortTransaction() }
            throw error
        }
    }

    /// Several files: the journal first, then the files, then the journal goes,
    /// with the failure handling of a save's (`saveThroughJournal`).
    private func commitThroughJournal(_ tables: [StagedTable]) throws {
        var journal = SaveJournal()
        for table in tables {
            let index = journal.tableIndex(for: table.name)
            table.forEachStaged { key, value in
                key.withUnsafeBytes { key in
                    if let value {
                        value.withUnsafeBytes { journal.record(table: index, key: key, value: $0) }
                    } else {
                        journal.record(table: index, key: key, value: nil)
                    }
                }
            }
        }
        // The group is not in memory as pending changes: nothing to mark decided.
        try commitThroughJournal(journal, decided: {})
    }
}
