import CTokyoCabinet

/// Rebuilding and creating files so that the store never lacks one.
///
/// Tokyo Cabinet's own `tchdboptimize` writes `Name.tmp.<n>`, unlinks `Name`,
/// then renames: a process killed between the two leaves the store without the
/// table. Cabinet writes the new file under a temporary name, closes it, and
/// renames it over the old one, which replaces it atomically: killed at any
/// point, the directory holds the old file or the new one, whole.
extension TokyoCabinetTable {
    /// How full the buckets may get before ``reserveCapacity(_:)`` rebuilds the file.
    static let recordsPerBucketBeforeGrowing = 3

    /// Grows the bucket array before it is overfilled: a hash file keeps the bucket
    /// count it was created with, and with several records per bucket every write
    /// walks a chain. Rebuilding is cheap while the file is small (a store that
    /// grows by saves doubles its buckets, so the rebuilds cost O(n) in all).
    func reserveCapacity(_ records: Int) throws {
        let hdb = try open()
        let buckets = Int(clamping: hdb.pointee.bnum)   // from the header: a damaged one may claim any count
        let (full, overflow) = buckets.multipliedReportingOverflow(by: TokyoCabinetTable.recordsPerBucketBeforeGrowing)
        guard !overflow, records > full else { return }
        // One bucket per two records: short chains, and half the bucket array's bytes on disk.
        try rebuild(buckets: Int64(max(records / 2, buckets * 2)), operation: "grow buckets")
    }

    /// Rewrites the file without free space, with buckets for twice its records.
    func compact() throws {
        try compact { _ in }
    }

    /// ``compact()``, reporting the records copied into the new file.
    func compact(progress: (_ recordsCopied: Int) -> Void) throws {
        try rebuild(buckets: Int64(max(recordCount * 2 + 1, Int(options.bucketCount))), operation: "compact", progress: progress)
    }

    /// The temporary file a rebuild or creation of this table writes.
    var temporaryPath: String { directory + "/" + DirectoryFiles.temporaryPrefix + name }

    /// Copies every record into a new file with `buckets` buckets, then puts it
    /// in this file's place; `progress` hears of every ``StoreProgress/reportingInterval`` records copied.
    func rebuild(buckets: Int64, operation: String, progress: (_ recordsCopied: Int) -> Void = { _ in }) throws {
        if readOnly { throw CabinetError.readOnly(path: path, reason: "\(operation) needs to write") }
        let hdb = try open()
        let tuning = (buckets: buckets, alignment: Int8(bitPattern: hdb.pointee.apow),
                      pool: Int8(bitPattern: hdb.pointee.fpow), flags: hdb.pointee.opts)
        var copied = 0
        // After a flushed commit the copy is flushed before it replaces the file, and the rename after it.
        let sync = options.syncOnCommit || syncsRebuilds
        try TokyoCabinetTable.writeTemporary(at: temporaryPath, options: options, tuning: tuning, operation: operation, sync: sync) { copy in
            try forEach { key, value in
                // An empty value has no address; Tokyo Cabinet still wants a valid pointer (it reads 0 bytes).
                guard tchdbput(copy, key.baseAddress, Int32(key.count), value.baseAddress ?? UnsafeRawPointer(hdb), Int32(value.count)) else {
                    throw temporaryFailure(copy, operation)
                }
                copied &+= 1
                if copied % StoreProgress.reportingInterval == 0 { progress(copied) }
                return true
            }
        }
        // The old handle goes first: Tokyo Cabinet refuses two handles on one path in a process.
        handle = nil
        if let error = TokyoCabinetTable.closeHandle(hdb, path: path) {
            try? DirectoryFiles.remove(temporaryPath)
            handle = try? TokyoCabinetTable.openHandle(path: path, options: options)
            throw error
        }
        do {
            try TokyoCabinetTable.removeLog(of: path)
            try DirectoryFiles.replace(path, with: temporaryPath, directory: directory, sync: sync)
        } catch {
            try? DirectoryFiles.remove(temporaryPath)
            handle = try? TokyoCabinetTable.openHandle(path: path, options: options)
            throw error
        }
        // Unsynced: the next flushed commit flushes the new file.
        hasUnflushedChanges = !sync
        handle = try TokyoCabinetTable.openHandle(path: path, options: options)
    }

    /// Removes `<path>.wal` before a new file is renamed to `path`. The log
    /// holds old pages of the file it was written for, at that file's offsets:
    /// Tokyo Cabinet keeps it when it closes a handle a failed write left fatal
    /// (so after a failed commit, the one case that rebuilds the index), and an
    /// open of a file whose header says "open" (a writer killed after the
    /// rebuild, before its next transaction) would write those pages into the
    /// new file. The old file no longer needs it: its handle closed cleanly,
    /// which rolls back any open transaction and clears the header's flag. So
    /// it goes first: killed in between, the directory holds the old file
    /// without its spent log, or the new file, never the new file with it
    /// (the rename's directory flush flushes the removal too).
    static func removeLog(of path: String) throws {
        try DirectoryFiles.remove(path + ".wal")
    }

    /// Creates an empty file at `path` whole or not at all: written under a
    /// temporary name, then renamed into place.
    static func create(directory: String, name: String, options: TokyoCabinetBackend.Options) throws {
        let path = directory + "/" + name
        let temporary = directory + "/" + DirectoryFiles.temporaryPrefix + name
        let tuning = (buckets: options.bucketCount, alignment: options.alignmentPower, pool: options.freeBlockPoolPower, flags: UInt8(0))
        try writeTemporary(at: temporary, options: options, tuning: tuning, operation: "create", sync: options.syncOnCommit) { _ in }
        do {
            // A log left by an earlier file of this name is not this file's.
            try removeLog(of: path)
            try DirectoryFiles.replace(path, with: temporary, directory: directory, sync: options.syncOnCommit)
        } catch {
            try? DirectoryFiles.remove(temporary)
            throw error
        }
    }

    /// Writes a new Tokyo Cabinet file at `temporary` (replacing any left over),
    /// fills it, flushes it with `sync`, and closes it. On failure the temporary is removed.
    private static func writeTemporary(at temporary: String, options: TokyoCabinetBackend.Options,
                                       tuning: (buckets: Int64, alignment: Int8, pool: Int8, flags: UInt8), operation: String,
                                       sync: Bool, _ fill: (UnsafeMutablePointer<TCHDB>) throws -> Void) throws {
        try DirectoryFiles.remove(temporary)
        let mode = Int32(HDBOREADER | HDBOWRITER | HDBOCREAT | HDBOTRUNC | HDBOLCKNB)
        let copy = try openHandle(path: temporary, mode: mode, options: options, tuning: tuning)
        do {
            try fill(copy)
            if sync && !tchdbsync(copy) { throw temporaryFailure(copy, operation) }
        } catch {
            closeHandle(copy, path: temporary)
            try? DirectoryFiles.remove(temporary)
            throw error
        }
        if let error = closeHandle(copy, path: temporary) {
            try? DirectoryFiles.remove(temporary)
            throw error
        }
    }

    private static func temporaryFailure(_ hdb: UnsafeMutablePointer<TCHDB>, _ operation: String) -> CabinetError {
        let code = tchdbecode(hdb)
        let path = tchdbpath(hdb).map { String(cString: $0) } ?? "?"
        return .backendFailure(RecordLocation(file: path), operation: operation, code: code, message: String(cString: tchdberrmsg(code)))
    }

    private func temporaryFailure(_ hdb: UnsafeMutablePointer<TCHDB>, _ operation: String) -> CabinetError {
        TokyoCabinetTable.temporaryFailure(hdb, operation)
    }
}
