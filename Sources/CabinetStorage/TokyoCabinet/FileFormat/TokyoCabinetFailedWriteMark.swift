import CTokyoCabinet
import Foundation

/// Keeping a hash file's mark that a write failed in it (Tokyo Cabinet's
/// `HDBFFATAL` header flag) from the failure until Cabinet has rebuilt the file,
/// through every rollback and a kill at any instant of the recovery.
///
/// Why the mark matters: after a failed write to the log, Tokyo Cabinet may still
/// change what it could not log (`tchdbsetbucket` ignores that failure), so even a
/// whole rollback can leave a bucket pointing at a record the rollback took away,
/// or at one beyond the file's end that the next write overwrites. The records
/// themselves roll back whole, so Cabinet rebuilds the file from them, and a
/// writable open does so for a file that carries the mark (``TokyoCabinetTable``).
///
/// Why Tokyo Cabinet alone loses it: it sets the flag in the mapped header at the
/// failure, but every rollback writes back the header its log holds, logged when
/// the transaction began, without the flag. And a close rolls back only after
/// clearing the header's "open" flag, so a writer killed inside that rollback left
/// a file half rolled back that the next open neither rolled back (the "open" flag
/// clear) nor rebuilt (the mark gone, or about to go with the next rollback).
///
/// So before Cabinet rolls back after a failed write, the log's copy of the header
/// gets the mark (and the "open" flag: rolled back, the file looks like one whose
/// writer was killed, whose free-block pool, possibly half written, is not
/// loaded); and before a writable open of a marked file whose log holds a
/// transaction, the header's "open" flag is set again, so that Tokyo Cabinet's
/// open rolls the log back, whole, once more (writing the same old pages again
/// changes nothing). Every rollback then leaves the mark in the header, and only
/// the rebuilt file, renamed over this one, is without it.
enum TokyoCabinetFailedWriteMark {
    /// Where the flags byte of the header the log holds is: after the log's size
    /// prefix and the header entry's own offset and length.
    static let flagsInLog = off_t(8 + TokyoCabinetLog.entryHeaderSize + TokyoCabinetDirectory.flagsOffset)

    /// Keeps the mark of `hdb`'s file after a failed write, before Cabinet rolls
    /// it back: in the log's header, which the rollback writes back, and in the
    /// mapped header, which a rollback Tokyo Cabinet already made (a B+ tree's
    /// failed commit aborts the hash file's transaction itself) left without it.
    static func keep(_ hdb: UnsafeMutablePointer<TCHDB>, sync: Bool) {
        markLog(hdb.pointee.walfd, sync: sync)
        guard hdb.pointee.fd >= 0, let map = hdb.pointee.map else { return }
        let flags = UnsafeMutableRawPointer(map).advanced(by: TokyoCabinetDirectory.flagsOffset)
        flags.storeBytes(of: flags.load(as: UInt8.self) | TokyoCabinetDirectory.fatalFlag, as: UInt8.self)
        // Tokyo Cabinet writes its copy of the flags into the header at every sync.
        hdb.pointee.flags |= TokyoCabinetDirectory.fatalFlag
    }

    /// Marks the header in the open log `fd` (a transaction's, in which a write
    /// failed) before it is rolled back; flushed when the store syncs. Nothing to
    /// do for a log that does not hold the header yet: the transaction changed nothing.
    /// - Returns: whether the log holds the mark now (or holds no header).
    @discardableResult
    static func markLog(_ fd: Int32, sync: Bool) -> Bool {
        guard fd >= 0 else { return false }
        var status = stat()
        guard fstat(fd, &status) == 0 else { return false }
        guard status.st_size >= TokyoCabinetLog.headerEntrySize else { return true }
        var flags: UInt8 = 0
        guard pread(fd, &flags, 1, flagsInLog) == 1 else { return false }
        var marked = flags | TokyoCabinetDirectory.fatalFlag | TokyoCabinetDirectory.openFlag
        guard marked != flags else { return true }
        guard pwrite(fd, &marked, 1, flagsInLog) == 1 else { return false }
        return !sync || fdatasync(fd) == 0
    }

    /// Before a writable open of the file at `path` (the writer's lock held, a cut
    /// log entry trimmed): if the header carries the mark and the log holds a
    /// transaction, marks the log's header too and sets the file's "open" flag, so
    /// that Tokyo Cabinet's open rolls it back and the header keeps the mark.
    static func prepareOpen(ofTable path: String, sync: Bool) throws {
        guard let flags = TokyoCabinetDirectory.headerFlags(of: path), flags & TokyoCabinetDirectory.fatalFlag != 0 else { return }
        var marked = false
        try TokyoCabinetLog.withLog(ofTable: path) { fd, bytes in
            // A log this reading does not understand is left to Tokyo Cabinet, as before.
            guard let whole = TokyoCabinetLog.wholeLength(of: bytes), whole >= TokyoCabinetLog.headerEntrySize else { return }
            guard markLog(fd, sync: sync) else { throw DirectoryFiles.failure("write", path + ".wal") }
            marked = true
        }
        guard marked, flags & TokyoCabinetDirectory.openFlag == 0 else { return }
        let fileFD = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
        guard fileFD >= 0 else { throw DirectoryFiles.failure("open", path) }
        defer { _ = close(fileFD) }
        var reopened = flags | TokyoCabinetDirectory.openFlag
        guard pwrite(fileFD, &reopened, 1, off_t(TokyoCabinetDirectory.flagsOffset)) == 1 else { throw DirectoryFiles.failure("write", path) }
        if sync && fdatasync(fileFD) != 0 { throw DirectoryFiles.failure("sync", path) }
    }
}
