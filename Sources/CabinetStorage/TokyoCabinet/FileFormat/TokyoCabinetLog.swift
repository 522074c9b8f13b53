import CTokyoCabinet
import Foundation

/// A Tokyo Cabinet file's write-ahead log (`<file>.wal`), as `tchdb.c` writes it:
/// the file's size when the transaction began (8 bytes), then entries, each the
/// offset (8 bytes) and length (4 bytes) of a region and the region's bytes as
/// they were before the transaction changed them. The first entry is the
/// 256-byte header. Integers are in the byte order Tokyo Cabinet was built with
/// (Debian's is big-endian), which the first entry's length (always 256) tells.
///
/// Why Cabinet reads it: a writer killed inside the `write(2)` of an entry (a
/// large one crosses pages, and the kernel stops a killed process between them)
/// leaves the last entry cut short. Tokyo Cabinet's rollback (`tchdbwalrestore`)
/// then writes back the entries before it and truncates the file, but reports a
/// failure, so its open keeps the header it read *before* the rollback (the
/// file's size and record count of the unfinished transaction) and leaves the
/// log: the next write goes past the end of the truncated file and the file
/// breaks ("invalid record header"). The crash torture found it. An entry is
/// written before the region it protects, so a cut entry's region was never
/// changed: dropping the cut tail before the open makes the rollback whole.
enum TokyoCabinetLog {
    static let entryHeaderSize = 12
    /// The log's size prefix and its first entry, the file's header.
    static let headerEntrySize = 8 + entryHeaderSize + TokyoCabinetDirectory.headerSize

    /// Where the whole entries of the log `bytes` end (0 if not even the header's
    /// entry is whole), or nil if it is not a log this reading understands (its
    /// first entry is not the 256-byte header): such a log is left alone.
    static func wholeLength(of bytes: [UInt8]) -> Int? {
        guard bytes.count >= headerEntrySize else { return 0 }
        let bigEndian: Bool
        switch Array(bytes[16..<20]) {
        case [0, 0, 1, 0]: bigEndian = true
        case [0, 1, 0, 0]: bigEndian = false
        default: return nil
        }
        var position = 8
        while position + entryHeaderSize <= bytes.count {
            let field = bytes[(position + 8)..<(position + entryHeaderSize)]
            let length = (bigEndian ? Array(field) : field.reversed()).reduce(0) { $0 << 8 | Int($1) }
            guard position + entryHeaderSize + length <= bytes.count else { break }
            position += entryHeaderSize + length
        }
        return position
    }

    /// Cuts a log's last entry if a kill left it short, so that Tokyo Cabinet's
    /// rollback at the next open applies every whole entry and succeeds. Called
    /// with the writer's lock held, before a writable open of the file at `path`.
    static func trimCutEntry(ofTable path: String) throws {
        try withLog(ofTable: path) { fd, bytes in
            // A log without a whole header entry protects nothing (Tokyo Cabinet writes it
            // before the transaction changes the file): emptied, as a commit leaves it.
            guard let whole = wholeLength(of: bytes), whole < bytes.count else { return }
            guard ftruncate(fd, off_t(whole)) == 0 else { throw DirectoryFiles.failure("truncate", path + ".wal") }
        }
    }

    /// Calls `body` with the log of the table at `path` open for writing, and its
    /// bytes; not for a log that is empty, absent or not a regular file.
    static func withLog(ofTable path: String, _ body: (_ fd: Int32, _ bytes: [UInt8]) throws -> Void) throws {
        let log = path + ".wal"
        var status = stat()
        guard lstat(log, &status) == 0, status.st_size > 0, (status.st_mode & S_IFMT) == S_IFREG else { return }
        let fd = open(log, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw DirectoryFiles.failure("open", log) }
        defer { _ = close(fd) }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
        let read = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard read == bytes.count else { throw DirectoryFiles.failure("read", log) }
        try body(fd, bytes)
    }

    /// After `tchdbtranabort` the file's header is the one the log held, whose
    /// "open" flag Tokyo Cabinet clears before it logs it, though this writer still
    /// has the file open. Set again: a writer killed later in its close, while it
    /// saves the free-block pool, leaves a file the next open does not load that
    /// half-written pool from (with the flag clear it would, and hand out live
    /// records as free space). The log, spent, is emptied, so that readers do not
    /// take it for a killed writer's transaction.
    static func settleAfterRollback(_ hdb: UnsafeMutablePointer<TCHDB>) {
        guard hdb.pointee.fd >= 0, let map = hdb.pointee.map else { return }
        if hdb.pointee.walfd >= 0 { _ = ftruncate(hdb.pointee.walfd, 0) }
        let flags = UnsafeMutableRawPointer(map).advanced(by: TokyoCabinetDirectory.flagsOffset)
        flags.storeBytes(of: flags.load(as: UInt8.self) | TokyoCabinetDirectory.openFlag, as: UInt8.self)
        hdb.pointee.flags |= TokyoCabinetDirectory.openFlag
    }
}
