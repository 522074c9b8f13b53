import Foundation

/// Whole copies of stores into Tokyo Cabinet directories, each whole or not at
/// all: a new store (a backup) is written in a hidden sibling directory and
/// renamed into place; a replacement (a restore) is written into a folder inside
/// the store, renamed to decide it, then moved in (`TokyoCabinetBackend+Restore`).
/// The copy itself goes record by record through the protocols, so the source
/// may be any backend. `docs/CRASHPOINTS.md` proves both against kills and failures.
extension TokyoCabinetBackend {
    /// Writes a new store directory at `destination` holding a copy of `source`
    /// (every table, its catalog, and `formatMarker`), as fresh, compact files.
    /// `destination` must not exist or be empty.
    ///
    /// ```swift
    /// try TokyoCabinetBackend.createStore(at: "/var/backups/music", copying: MemoryBackend(), formatMarker: marker)
    /// ```
    /// The copy is written beside `destination` under a hidden name
    /// (`.NAME.cabinet-partial`), flushed, and renamed into place when it is
    /// complete, so an interrupted copy leaves no directory at `destination` that
    /// could pass for a store. `source` is only read.
    /// A partial copy an interrupted backup left there is removed first, and
    /// handed to `removedLeftover` (to be logged).
    package static func createStore(at destination: String, copying source: any StorageBackend, formatMarker: String,
                                    progress: StoreProgress.Handler? = nil, removedLeftover: (String) -> Void = { _ in }) throws {
        try createStore(at: destination, removedLeftover: removedLeftover) {
            try $0.copyContents(of: source, formatMarker: formatMarker, progress: progress)
        }
    }

    /// Writes a new store directory at `destination` whose content `fill` writes
    /// into the backend it is given, whole or not at all, as ``createStore(at:copying:formatMarker:progress:removedLeftover:)``.
    package static func createStore(at destination: String, removedLeftover: (String) -> Void = { _ in },
                                    filling fill: (TokyoCabinetBackend) throws -> Void) throws {
        try TokyoCabinetDirectory.publishDirectory(at: destination, what: "a backup", removedLeftover: removedLeftover) { staging in
            try writeStore(into: staging, filling: fill)
        }
    }

    /// Replaces this store with a copy of `source`: copied into `.cabinet-restore.partial`
    /// with a manifest of its tables, renamed to `.cabinet-restore` (the decision),
    /// then moved into place by `finishRestore()`, which the next writable open
    /// repeats if the process dies before it is done.
    public func replaceContents(with source: any StorageBackend, formatMarker: String) throws {
        try replaceContents(with: source, formatMarker: formatMarker, progress: nil)
    }

    /// ``replaceContents(with:formatMarker:)``, reporting the records copied into the folder.
    public func replaceContents(with source: any StorageBackend, formatMarker: String, progress: StoreProgress.Handler?) throws {
        try checkWritable("a restore needs to write")
        let staging = restoreStagingPath
        try? FileManager.default.removeItem(atPath: staging + ".partial")
        do {
            try TokyoCabinetBackend.writeStore(into: staging + ".partial") {
                try $0.copyContents(of: source, formatMarker: formatMarker, progress: progress)
            }
            let catalog = try source.services.readCatalog() != nil ? [TokyoCabinetBackend.catalogFileName] : []
            try TokyoCabinetBackend.writeManifest(names: try source.tableNames() + catalog, in: staging + ".partial")
        } catch {
            try? FileManager.default.removeItem(atPath: staging + ".partial")
            throw error
        }
        // Readers in other processes wait from the decision to the last file moved in.
        try withExclusiveCommit {
            do {
                // The decision: from here the restore happens, if need be at the next open.
                try DirectoryFiles.replace(staging, with: staging + ".partial", directory: path, sync: true)
            } catch {
                try? FileManager.default.removeItem(atPath: staging + ".partial")
                throw error
            }
            try finishRestore()
        }
    }

    /// Writes a complete store at `directory` (which must not exist) with `fill`,
    /// flushed to the disk before anything renames it into place.
    package static func writeStore(into directory: String, filling fill: (TokyoCabinetBackend) throws -> Void) throws {
        let target = try TokyoCabinetBackend(directory: directory)
        defer { target.close() }
        try fill(target)
        try target.syncAll()
    }

    /// Lists the copy's tables, so that a restore finished at a later open knows
    /// which of the store's tables to remove even after some were moved in.
    private static func writeManifest(names: [String], in directory: String) throws {
        let text = names.joined(separator: "\n") + "\n"
        let path = directory + "/" + TokyoCabinetBackend.restoreManifestName
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8)) else {
            throw DirectoryFiles.failure("write restore manifest", path)
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        defer { if fd >= 0 { closeDescriptor(fd) } }
        guard fd >= 0, fsync(fd) == 0 else { throw DirectoryFiles.failure("sync restore manifest", path) }
    }
}
