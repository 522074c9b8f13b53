import Foundation

/// Copies of whole stores: backups and restores, each whole or not at all.
enum StoreCopy {
    /// Copies every table of `source` and its format into a new store directory at
    /// `destination`, through a hidden sibling directory renamed into place at the end.
    static func copy(from source: any StorageBackend, format: RecordFormat, toNewStoreAt destination: String) throws {
        if let existing = try? FileManager.default.contentsOfDirectory(atPath: destination), !existing.isEmpty {
            throw CabinetError.cannotAccessDirectory(path: destination, reason: "a backup needs a new or empty directory")
        }
        let url = URL(fileURLWithPath: destination)
        let parent = url.deletingLastPathComponent().path
        let staging = parent + "/." + url.lastPathComponent + ".cabinet-partial"
        try? FileManager.default.removeItem(atPath: staging)
        do {
            try write(from: source, format: format, into: staging)
            try DirectoryFiles.replace(destination, with: staging, directory: parent, sync: false)
        } catch {
            try? FileManager.default.removeItem(atPath: staging)
            throw error
        }
        do {
            try DirectoryFiles.syncDirectory(parent)
        } catch {
            // Not known to be on the disk: no backup, so that trying again starts afresh.
            try? FileManager.default.removeItem(atPath: destination)
            throw error
        }
    }

    /// Writes a complete store at `directory` (which must not exist) from `source`.
    private static func write(from source: any StorageBackend, format: RecordFormat, into directory: String) throws {
        let target = try TokyoCabinetBackend(directory: directory)
        defer { target.close() }
        try target.writeFormatMarker(format.marker)
        try copyTables(from: source, to: target)
        // The catalog last, as the store writes it: after the tables it lists.
        if let catalog = try source.readCatalog() { try target.writeCatalog(catalog) }
        // The copy must be on the disk before its name says it is whole.
        try target.syncAll()
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

    /// See ``ObjectStore/restore(from:to:)``.
    static func restore(from backup: String, to path: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: backup, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CabinetError.cannotAccessDirectory(path: backup, reason: "there is no backup directory there")
        }
        var options = TokyoCabinetBackend.Options()
        options.readOnly = true
        let source = try TokyoCabinetBackend(directory: backup, options: options)
        defer { source.close() }
        guard try !source.tableNames().isEmpty else {
            throw CabinetError.notAStore(path: backup, reason: "it holds no Tokyo Cabinet files, so it is not a backup")
        }
        let pending = try source.pendingRecovery()
        if !pending.isEmpty {
            throw CabinetError.recoveryPending(path: backup, reason: pending.joined(separator: "; ") + "; finish it before restoring from it")
        }
        let format = try StoreVerifier.recordFormat(of: source)
        let target = try TokyoCabinetBackend(directory: path)
        defer { target.close() }
        let staging = path + "/" + TokyoCabinetBackend.restoreStagingName
        try? FileManager.default.removeItem(atPath: staging + ".partial")
        do {
            try write(from: source, format: format, into: staging + ".partial")
            let catalog = try source.readCatalog() != nil ? [TokyoCabinetBackend.catalogFileName] : []
            try writeManifest(names: try source.tableNames() + catalog, in: staging + ".partial")
            // The decision: from here the restore happens, if need be at the next open.
            try DirectoryFiles.replace(staging, with: staging + ".partial", directory: path, sync: true)
        } catch {
            try? FileManager.default.removeItem(atPath: staging + ".partial")
            throw error
        }
        try target.finishRestore()
    }

    /// Lists the backup's tables, so that a restore finished at a later open knows
    /// which of the store's tables to remove even after some were moved in.
    private static func writeManifest(names: [String], in directory: String) throws {
        let text = names.joined(separator: "\n") + "\n"
        let path = directory + "/" + TokyoCabinetBackend.restoreManifestName
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8)) else {
            throw DirectoryFiles.failure("write restore manifest", path)
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        defer { if fd >= 0 { close(fd) } }
        guard fd >= 0, fsync(fd) == 0 else { throw DirectoryFiles.failure("sync restore manifest", path) }
    }
}
