import Foundation

extension ObjectStore {
    /// Writes a consistent copy of the store, as of its last save, to a new
    /// directory `destination`, while the app keeps using the store.
    ///
    /// ```swift
    /// try store.save()
    /// try store.backup(to: "/var/backups/music-2026-11-22")
    /// ```
    /// Every table is copied record by record into fresh Tokyo Cabinet files (so
    /// the copy is also compacted); unsaved changes are not in it. Works for
    /// in-memory stores too. `destination` must not exist or be empty.
    public func backup(to destination: String) throws {
        try checkOpen()
        if journalAwaitsReplay { try recoverInterruptedSave() }
        try ObjectStore.copyTables(from: backend, toNewStoreAt: destination)
    }

    /// Replaces the store at `path` with the backup at `backup` (made by
    /// ``backup(to:)`` or `cabinet backup`). The store must not be open anywhere:
    /// its lock is taken for the whole restore.
    ///
    /// ```swift
    /// try ObjectStore.restore(from: "/var/backups/music-2026-11-22", to: "/tmp/music")
    /// ```
    /// The store's files are replaced one after another; if the restore fails
    /// part way (a full disk), the store is incomplete: run it again.
    public static func restore(from backup: String, to path: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: backup, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CabinetError.cannotAccessDirectory(path: backup, reason: "there is no backup directory there")
        }
        var reading = TokyoCabinetBackend.Options()
        reading.readOnly = true             // nothing is written into the backup
        let source = try TokyoCabinetBackend(directory: backup, options: reading)
        guard try !source.tableNames().isEmpty else {
            source.close()
            throw CabinetError.cannotAccessDirectory(path: backup, reason: "it holds no Tokyo Cabinet files, so it is not a backup")
        }
        defer { source.close() }
        let target = try TokyoCabinetBackend(directory: path)
        defer { target.close() }
        // Tables the backup does not have go; the others are replaced record for record.
        for name in try target.tableNames() {
            target.closeTable(named: name)
            try? FileManager.default.removeItem(atPath: target.filePath(forTable: name))
            try? FileManager.default.removeItem(atPath: target.filePath(forTable: name) + ".wal")
        }
        try target.removeJournal()
        try copyTables(from: source, to: target)
    }

    /// Rebuilds every file of the store without its free space (Tokyo Cabinet's
    /// optimize), for `cabinet compact`. The store must be saved first.
    public func compact() throws {
        try checkOpen()
        guard !hasUnsavedChanges else { throw CabinetError.unsavedChanges(className: "the store") }
        for name in try backend.tableNames() {
            try backend.openTable(named: name).compact()
        }
    }

    static func copyTables(from source: any StorageBackend, toNewStoreAt destination: String) throws {
        if let existing = try? FileManager.default.contentsOfDirectory(atPath: destination), !existing.isEmpty {
            throw CabinetError.cannotAccessDirectory(path: destination, reason: "a backup needs a new or empty directory")
        }
        let target = try TokyoCabinetBackend(directory: destination)
        defer { target.close() }
        try copyTables(from: source, to: target)
    }

    static func copyTables(from source: any StorageBackend, to target: any StorageBackend) throws {
        for name in try source.tableNames() {
            let from = try source.openTable(named: name)
            let to = try target.openTable(named: name)
            try to.reserveCapacity(from.recordCount)
            try to.transaction {
                try from.forEach { key, value in
                    try to.setValue(value, forKey: key)
                    return true
                }
            }
        }
    }
}
