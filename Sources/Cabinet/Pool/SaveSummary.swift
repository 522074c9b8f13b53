import CabinetStorage

/// What one save changed, before the pool numbers it as a ``StorePool/Change``.
struct SaveSummary {
    var classes: [StorePool.ClassChange]
    var namedBuffers: [String]
    /// What was committed, key by key, for live observations (``ChangedKeys``):
    /// this process's batch, or another process's save.
    var batch: WriteBatch?
    var othersSave: OthersSave?

    /// Whether no row of a class and no named buffer changed: no ``StorePool/Change`` to number
    /// (a save may still have changed a list's nodes, which observations hear of).
    var isEmpty: Bool { classes.isEmpty && namedBuffers.isEmpty }

    /// Whether nothing at all was committed: not even an observation hears of it.
    var isNothing: Bool { isEmpty && (batch?.isEmpty ?? true) && othersSave == nil }

    /// What was committed, key by key; `nil` if not known.
    var changedKeys: ChangedKeys? {
        if let batch { return ChangedKeys(batch) }
        return othersSave.map(ChangedKeys.init)
    }
}

extension SaveSummary {
    /// What another process's save changed in `classes` (stored names) and the named buffers.
    init(othersSave save: OthersSave, classes: Set<String>) {
        let tables = save.wholeStore ? Dictionary(uniqueKeysWithValues: classes.map { ($0, Set<[UInt8]>?.none) }) : save.tables
        self.classes = tables.keys.filter(classes.contains).sorted().map { name in
            let keys = tables[name] ?? nil
            let rows = (keys ?? []).compactMap { key in RowKey.row(key).flatMap { $0 == ClassMetadata.rowID ? nil : $0 } }.sorted()
            var change = StorePool.ClassChange(className: name, inserted: [], updated: rows, deleted: [])
            change.wholeClass = keys == nil
            return change
        }.filter { $0.wholeClass || !$0.updated.isEmpty }
        let buffers = save.wholeStore ? nil : save.tables[ObjectStore.namedBuffersTableName]
        namedBuffers = buffers.map { keys in (keys ?? []).map { String(decoding: $0, as: UTF8.self) }.sorted() } ?? []
        othersSave = save
    }
}

extension ObjectStore {
    /// The rows a committed `batch` inserted, updated and deleted, by class,
    /// and the named buffers it set or removed: the batch, read as a change.
    func saveSummary(of batch: WriteBatch) -> SaveSummary {
        var classes: [StorePool.ClassChange] = []
        var namedBuffers: [String] = []
        batch.forEachTable { name, changes in
            if name == ObjectStore.namedBuffersTableName {
                namedBuffers = changes.keys.map { String(decoding: $0, as: UTF8.self) }.sorted()
                return
            }
            guard entriesByName[name] != nil else { return }
            var inserted: [UInt32] = [], updated: [UInt32] = [], deleted: [UInt32] = []
            changes.forEachChange { key, value, isNew in
                guard let row = RowKey.row(key), row != ClassMetadata.rowID else { return true }
                if value == nil { deleted.append(row) } else if isNew { inserted.append(row) } else { updated.append(row) }
                return true
            }
            let change = StorePool.ClassChange(className: name, inserted: inserted, updated: updated, deleted: deleted)
            if !change.isEmpty { classes.append(change) }
        }
        return SaveSummary(classes: classes.sorted { $0.className < $1.className }, namedBuffers: namedBuffers, batch: batch)
    }
}
