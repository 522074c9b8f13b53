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
    /// the copy is also compacted), with the store's format marker; unsaved
    /// changes are not in it. Works for in-memory stores too. `destination` must
    /// not exist or be empty.
    ///
    /// The copy is written beside `destination` under a hidden name
    /// (`.NAME.cabinet-partial`) and renamed into place when it is complete, so a
    /// backup that was interrupted leaves no directory at `destination` that
    /// could pass for a backup.
    public func backup(to destination: String) throws {
        useDetector.enter("backup(to:)")
        defer { useDetector.leave() }
        if isSaving { changeDuringSave("backup(to:)") }
        try checkOpen()
        if journalAwaitsReplay { try recoverInterruptedSave() }
        try StoreCopy.copy(from: backend, format: recordFormat, toNewStoreAt: destination)
    }

    /// Replaces the store at `path` with the backup at `backup` (made by
    /// ``backup(to:)`` or `cabinet backup`). The store must not be open anywhere:
    /// its lock is taken for the whole restore.
    ///
    /// ```swift
    /// try ObjectStore.restore(from: "/var/backups/music-2026-11-22", to: "/tmp/music")
    /// ```
    /// All or nothing: the backup is first copied into a hidden folder inside the
    /// store, and only once the copy is whole are its files moved into place. If
    /// the restore is interrupted after that point, the next open of the store
    /// finishes it; before it, the store is as it was.
    public static func restore(from backup: String, to path: String) throws {
        try StoreCopy.restore(from: backup, to: path)
    }

    /// Rebuilds every file of the store without its free space, for `cabinet
    /// compact`. The store must be saved first.
    ///
    /// ```swift
    /// try store.save()
    /// try store.compact()
    /// ```
    /// Each file is rewritten beside the old one and renamed over it, so at every
    /// instant the store holds each class's old file or its new one, whole.
    public func compact() throws {
        // It rewrites every file: an enumerate body or a read(from:) would be scanning one.
        useDetector.enterAlone("compact()")
        defer { useDetector.leave() }
        try checkOpen()
        guard !hasUnsavedChanges else { throw CabinetError.unsavedChanges(className: "the store") }
        if journalAwaitsReplay { try recoverInterruptedSave() }
        for name in try backend.tableNames() {
            try backend.openTable(named: name).compact()
        }
    }
}
