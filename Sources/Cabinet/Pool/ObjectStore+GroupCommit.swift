import CabinetStorage

extension ObjectStore {
    /// Writes every record the blocks of a commit group staged (see `WriteGroup`)
    /// as one save: one ``WriteBatch`` the backend commits, exactly as a
    /// ``save()`` is, so a kill at any point leaves the store with all of the
    /// group or none of it; at `durability`, the strongest its blocks asked for.
    ///
    /// Called on the pool's root store, by the writer queue, holding the pool's
    /// lock exclusively. Returns once all is written. Throws with nothing written,
    /// except ``CabinetError/Code-swift.struct/saveNotFinished``: the group is
    /// decided (its journal finishes it at the next save or open).
    func commitStaged(_ staging: GroupStaging, durability: CommitDurability = .asOpened) throws {
        let tables = staging.tables.values.filter(\.hasStagedRecords).sorted { $0.name < $1.name }
        guard !tables.isEmpty else { return }
        // A journal an earlier commit could not remove (or finish): it goes first, as in save().
        if journalAwaitsReplay { try recoverInterruptedSave() }
        var batch = WriteBatch()
        batch.durability = durability
        for table in tables {
            let position = batch.table(named: table.name)
            table.forEachStaged { key, value in batch.set(value, forKey: key, inTable: position) }
        }
        try changingTables { try commitToBackend(batch) }
    }
}
