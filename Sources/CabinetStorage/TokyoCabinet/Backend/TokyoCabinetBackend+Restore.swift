import CTokyoCabinet
import Foundation

/// The second half of a restore (``TokyoCabinetBackend/replaceContents(with:formatMarker:)``):
/// moving a complete copy into the store directory. A restore first writes the
/// copy into `.cabinet-restore.partial`, then renames it to `.cabinet-restore`;
/// that rename decides the restore. From then on every step here can be
/// repeated, so if the process dies part way the next writer to open the store
/// finishes it, and a reader is told to wait.
extension TokyoCabinetBackend {
    /// The folder inside a store that holds a decided restore's files.
    package static let restoreStagingName = ".cabinet-restore"
    /// The list of the backup's tables, inside the restore folder.
    package static let restoreManifestName = ".cabinet-manifest"

    var restoreStagingPath: String { path + "/" + TokyoCabinetBackend.restoreStagingName }

    /// Whether a decided restore has not been finished yet.
    var restorePending: Bool { DirectoryFiles.exists(restoreStagingPath) }

    /// Moves the restore folder's files into place, removes the store's tables
    /// the backup does not have and any save journal, then removes the folder.
    func finishRestore() throws {
        let staging = restoreStagingPath
        guard restorePending else { return }
        try checkWritableForRecovery("a restore was interrupted")
        try checkRestoreFolder(staging)
        let manifestPath = staging + "/" + TokyoCabinetBackend.restoreManifestName
        if DirectoryFiles.exists(manifestPath) {
            let names = try restoreManifest(at: manifestPath)
            // Every table may change, here or at the open that finishes a killed restore: readers
            // in other processes hear so when this hold of the commit lock ends.
            willChangeEverything()
            let backupTables = names.subtracting([TokyoCabinetBackend.catalogFileName])
            for name in try tableNames() where !backupTables.contains(name) {
                tables.removeValue(forKey: name)?.close()
                try DirectoryFiles.remove(filePath(forTable: name) + ".wal")
                try DirectoryFiles.remove(filePath(forTable: name))
            }
            journalFile.close()
            try DirectoryFiles.remove(journalPath)
            try DirectoryFiles.remove(journalPath + ".tmp")
            for name in backupTables where DirectoryFiles.exists(staging + "/" + name) {
                tables.removeValue(forKey: name)?.close()
                // A log left by the old file must never be replayed onto the new one.
                try DirectoryFiles.remove(filePath(forTable: name) + ".wal")
                try DirectoryFiles.replace(filePath(forTable: name), with: staging + "/" + name, directory: path, sync: false)
            }
            let marker = staging + "/" + TokyoCabinetBackend.formatFileName
            if DirectoryFiles.exists(marker) {
                try DirectoryFiles.replace(path + "/" + TokyoCabinetBackend.formatFileName, with: marker, directory: path, sync: false)
            }
            // The backup's catalog, or none: the store's own would list tables the backup lacks.
            let catalog = staging + "/" + TokyoCabinetBackend.catalogFileName
            if !names.contains(TokyoCabinetBackend.catalogFileName) {
                try DirectoryFiles.remove(path + "/" + TokyoCabinetBackend.catalogFileName)
            } else if DirectoryFiles.exists(catalog) {
                try DirectoryFiles.replace(path + "/" + TokyoCabinetBackend.catalogFileName, with: catalog, directory: path, sync: false)
            }
            try DirectoryFiles.syncDirectory(path)
        }
        // Everything but the manifest first: a folder without one has nothing left to move.
        for name in try TokyoCabinetDirectory.allNames(in: staging) where name != TokyoCabinetBackend.restoreManifestName {
            try DirectoryFiles.remove(staging + "/" + name)
        }
        try DirectoryFiles.remove(manifestPath)
        guard rmdir(staging) == 0 || errno == ENOENT else { throw DirectoryFiles.failure("remove", staging) }
        try DirectoryFiles.syncDirectory(path)
    }

    /// What a restore folder must be before anything in it is trusted: a real
    /// directory (not a link to one elsewhere) holding only regular files. Cabinet
    /// writes nothing else there; anything else was put there by hand.
    private func checkRestoreFolder(_ staging: String) throws {
        func refuse(_ what: String) -> CabinetError {
            .notAStore(path: path, reason: "its interrupted restore's folder \(staging) \(what), which Cabinet does not write there; nothing was changed. Move the folder out of the store, then open it (the store is as it was before the restore, or restore again)")
        }
        var status = stat()
        guard lstat(staging, &status) == 0 else { throw DirectoryFiles.failure("inspect", staging) }
        guard (status.st_mode & S_IFMT) == S_IFDIR else { throw refuse("is not a directory (a link?)") }
        for name in try TokyoCabinetDirectory.allNames(in: staging) {
            guard lstat(staging + "/" + name, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
                throw refuse("holds '\(name)', which is not a regular file")
            }
        }
    }

    private func restoreManifest(at manifestPath: String) throws -> Set<String> {
        guard let data = FileManager.default.contents(atPath: manifestPath) else {
            throw DirectoryFiles.failure("read restore manifest", manifestPath)
        }
        let names = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
        // A backup always has a table: an empty list would remove every one of the store's.
        guard names.contains(where: { $0 != TokyoCabinetBackend.catalogFileName }) else {
            throw CabinetError.malformedRecord(RecordLocation(file: manifestPath), reason: "the restore's list of tables is empty; move the folder \(restoreStagingPath) out of the store, then open it")
        }
        // The tables, and the catalog's file name when the backup has one.
        for name in names where TableName.problem(with: name) != nil && name != TokyoCabinetBackend.catalogFileName {
            throw CabinetError.malformedRecord(RecordLocation(file: manifestPath), reason: "the restore's list of tables names '\(name)', which is not a table; move the folder \(restoreStagingPath) out of the store, then open it")
        }
        return Set(names)
    }

    /// Throws when a read-only backend finds work only a writer can finish.
    func checkWritableForRecovery(_ what: String) throws {
        if options.readOnly {
            throw CabinetError.readOnly(path: path, reason: "\(what) and must be finished before the store can be read; open it once without readOnly to finish it")
        }
    }

    /// Flushes every open table and the directory to the disk.
    func syncAll() throws {
        for table in tables.values { try table.sync() }
        try DirectoryFiles.syncDirectory(path)
    }
}

extension TokyoCabinetTable {
    /// Flushes the file's changes to the disk.
    func sync() throws {
        guard tchdbsync(try open()) else { throw failure("sync") }
        hasUnflushedChanges = false
    }
}
