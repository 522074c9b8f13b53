import CabinetStorage
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
    /// changes are not in it. Works on every backend (an in-memory store backs
    /// up to a directory too). `destination` must not exist or be empty.
    ///
    /// The copy is written beside `destination` under a hidden name
    /// (`.NAME.cabinet-partial`) and renamed into place when it is complete, so a
    /// backup that was interrupted leaves no directory at `destination` that
    /// could pass for a backup; the next backup to `destination` removes what it
    /// left, and says so in the store's ``logger``.
    ///
    /// `progress`, if given, is called as the records are copied (see ``StoreProgress``):
    /// ```swift
    /// try store.backup(to: "/var/backups/music-2026-11-22") { print("\($0.completed) of \($0.total ?? 0)") }
    /// ```
    public func backup(to destination: String, progress: StoreProgress.Handler? = nil) throws {
        try copying("backup(to:)") {
            try TokyoCabinetBackend.createStore(at: destination, copying: backend, formatMarker: recordFormat.marker, progress: progress) {
                logger.notice("removed the partial copy an interrupted backup left at \($0)", metadata: ["cabinet.path": "\(path)"])
            }
        }
    }

    /// Makes `target` a copy of the store as of its last save, replacing
    /// whatever it held, while the app keeps using the store: a backup into
    /// any backend, such as a ``MemoryBackend``. No store may be open on
    /// `target`: its tables are closed, so such a store's next read or save
    /// throws ``/CabinetStorage/CabinetError/storeClosed(path:)``; open it again.
    ///
    /// ```swift
    /// let snapshot = MemoryBackend(name: "snapshot")
    /// try store.backup(into: snapshot)
    /// let copy = try ObjectStore(backend: snapshot)
    /// ```
    /// All or nothing, as `target`'s ``/CabinetStorage/StorageBackend/replaceContents(with:formatMarker:)`` promises.
    /// `progress`, if given, is called as the records are copied (see ``StoreProgress``).
    public func backup(into target: any StorageBackend, progress: StoreProgress.Handler? = nil) throws {
        try copying("backup(into:)") {
            try target.replaceContents(with: backend, formatMarker: recordFormat.marker, progress: progress)
        }
    }

    /// Runs a copy of the saved store: no save in progress, and a journal left
    /// by a save that did not finish replayed first, so the copy has it whole.
    private func copying(_ call: StaticString, _ body: () throws -> Void) throws {
        useDetector.enter(call)
        defer { useDetector.leave() }
        if isSaving { changeDuringSave("\(call)") }
        try checkOpen()
        if journalAwaitsReplay { try recoverInterruptedSave() }
        try readingCommittedState(body)
    }

    /// Replaces the store at `path` with the backup at `backup` (made by
    /// ``backup(to:progress:)`` or `cabinet backup`). The store must not be open anywhere:
    /// its lock is taken for the whole restore.
    ///
    /// ```swift
    /// try ObjectStore.restore(from: "/var/backups/music-2026-11-22", to: "/tmp/music")
    /// ```
    /// All or nothing: the backup is first copied into a hidden folder inside the
    /// store, and only once the copy is whole are its files moved into place. If
    /// the restore is interrupted after that point, the next open of the store
    /// finishes it; before it, the store is as it was. `progress`, if given, is
    /// called as the records are copied (see ``StoreProgress``).
    public static func restore(from backup: String, to path: String, progress: StoreProgress.Handler? = nil) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: backup, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CabinetError.cannotAccessDirectory(path: backup, reason: "there is no backup directory there; check the path")
        }
        var reading = TokyoCabinetBackend.Options()
        reading.readOnly = true
        let source = try TokyoCabinetBackend(directory: backup, options: reading)
        defer { source.close() }
        // The backup is read as one operation: a writer of it, elsewhere, does not commit meanwhile.
        try source.withCommittedState {
            let format = try restorableFormat(of: source)
            let target = try TokyoCabinetBackend(directory: path)
            defer { target.close() }
            try target.replaceContents(with: source, formatMarker: format.marker, progress: progress)
        }
    }

    /// Replaces everything `target` holds with the store in `source`, on any
    /// backends: a restore from a backup kept anywhere, into a store opened
    /// nowhere else.
    ///
    /// ```swift
    /// try ObjectStore.restore(from: snapshot, to: TokyoCabinetBackend(directory: "/tmp/music"))
    /// ```
    /// `source` must be a store (it has tables) with nothing left to recover.
    /// All or nothing, as `target`'s ``/CabinetStorage/StorageBackend/replaceContents(with:formatMarker:)`` promises.
    /// `progress`, if given, is called as the records are copied (see ``StoreProgress``).
    public static func restore(from source: any StorageBackend, to target: any StorageBackend,
                               progress: StoreProgress.Handler? = nil) throws {
        // The source is read as one operation: a writer of it, elsewhere, does not commit meanwhile.
        try source.services.withCommittedState {
            try target.replaceContents(with: source, formatMarker: restorableFormat(of: source).marker, progress: progress)
        }
    }

    /// The record format of a backup, once it is known to be one: it has
    /// tables, nothing waits to be recovered in it, and every entry of it is a
    /// table that can be read, with every table its catalog lists. A restore
    /// removes the store's tables that the backup does not hold, so a backup
    /// whose class file is a link, a FIFO, empty or not a table at all would
    /// otherwise delete the store's good file and put nothing in its place.
    private static func restorableFormat(of source: any StorageBackend) throws -> RecordFormat {
        guard try !source.tableNames().isEmpty else {
            throw CabinetError.notAStore(path: source.path, reason: "it holds no tables, so it is not a backup")
        }
        let pending = try source.services.pendingRecovery()
        if !pending.isEmpty {
            throw CabinetError.recoveryPending(path: source.path, reason: pending.map(\.description).joined(separator: "; ") + "; finish it before restoring from it")
        }
        let problems = try source.storageProblems() + StoreVerifier.catalogProblems(source)
        if !problems.isEmpty {
            throw CabinetError.notAStore(path: source.path, reason: "it is not a whole backup, so nothing was restored and the store is as it was: "
                                         + problems.map(\.description).joined(separator: "; ") + ". Restore from another backup, or repair this one first")
        }
        return try StoreVerifier.recordFormat(of: source)
    }

    /// Rebuilds every table of the store without its free space, for `cabinet
    /// compact`, on any backend (a table that keeps no free space has nothing
    /// to do). The store must be saved first.
    ///
    /// ```swift
    /// try store.save()
    /// try store.compact()
    /// ```
    /// Each table is rewritten whole or not at all (a Tokyo Cabinet file beside
    /// the old one, renamed over it), so at every instant the store holds each
    /// class's old table or its new one, whole.
    ///
    /// `progress`, if given, is called as the records are copied (see
    /// ``StoreProgress``); a table whose backend rewrites it in one step (a
    /// Tokyo Cabinet index file, a store on a server) counts whole, at its end.
    /// ```swift
    /// try store.compact { print("\($0.what): \($0.completed) of \($0.total ?? 0) records") }
    /// ```
    public func compact(progress: StoreProgress.Handler? = nil) throws {
        // It rewrites every table: an enumerate body or a read(from:) would be scanning one.
        useDetector.enterAlone("compact()")
        defer { useDetector.leave() }
        try checkOpen()
        guard !hasUnsavedChanges else { throw CabinetError.unsavedChanges(className: "the store") }
        if journalAwaitsReplay { try recoverInterruptedSave() }
        // In a pool's write block: while no block reads (a read block cannot compact).
        try writingTables {
            let names = try backend.tableNames()
            var counter = try ProgressCounter(progress, recordsOf: names, in: backend)
            for name in names {
                counter.begin(name)
                let table = try backend.openTable(named: name)
                let (before, records) = (counter.completed, counter.isReporting ? try table.recordCount : 0)
                try table.compact { counter.advance(to: before + $0) }
                counter.advance(to: before + records)
            }
            counter.finish()
        }
    }
}
