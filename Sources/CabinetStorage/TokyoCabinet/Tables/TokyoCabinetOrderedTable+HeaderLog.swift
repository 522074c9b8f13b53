import CTokyoCabinet
import Foundation

/// Keeping a B+ tree file's header recoverable while Tokyo Cabinet rewrites it
/// outside a transaction.
///
/// `tcbdbdumpmeta` writes the tree's meta data (comparator, page sizes, root,
/// first and last leaf, counts) into the hash file's header through the shared
/// map: it zeroes the 64 bytes, then stores each field. Inside a transaction the
/// log holds the header, and a kill there is rolled back. But `tcbdbtranbegin`
/// calls it before it begins the hash file's transaction, and `tcbdbsync`,
/// `tcbdboptimize` and `tcbdbclose` call it with no transaction at all: a process
/// killed between the zeroing and the last field left a header with zeros in it
/// and no log to take it back. Tokyo Cabinet then refuses the file ("invalid meta
/// data"), or, with only a count zeroed, reuses page IDs and breaks the tree. The
/// crash torture found it about once in 5,000 kills (Tokyo Cabinet 1.4.48).
///
/// So before each of those calls the hash file underneath logs its header as a
/// transaction's start does (`tchdbtranbegin`: the file's size and its 256-byte
/// header), and that transaction is voided at once (`tchdbtranvoid`, for a
/// transaction that wrote nothing), which leaves the log in place. A kill while
/// the header is torn is then rolled back at the next open, to the header of the
/// last commit: the same meta data the call was rewriting. The logged header
/// keeps the "open" flag set (Tokyo Cabinet's clears it): rolled back, the file
/// looks like one whose writer was killed between transactions, whose free-block
/// pool (the free space a close saves, which a kill may have left half written)
/// is not loaded. After the call the log is emptied (a transaction's begin
/// writes its own; a close removes it), so between saves it is empty, as readers
/// expect; a close holds the commit lock, so no reader sees it in between.
extension TokyoCabinetOrderedTable {
    /// Logs the header of `bdb`'s file, unless a transaction is open (its log
    /// holds the header already) or the handle cannot begin one (a failed write
    /// made it fatal: the caller's own call fails the same way).
    /// - Returns: whether the header is logged.
    @discardableResult
    static func logHeader(of bdb: UnsafeMutablePointer<TCBDB>) -> Bool {
        guard let hdb = bdb.pointee.hdb, !hdb.pointee.tran, !hdb.pointee.fatal else { return false }
        guard tchdbtranbegin(hdb) else { return false }
        // Fails only on a fatal handle, which a begin that just succeeded is not;
        // a transaction left open would make the tree's own begin wait for ever.
        if !tchdbtranvoid(hdb) { hdb.pointee.tran = false }
        // The logged header's flags byte: "open" set, so a rollback does not load the pool.
        let flagsInLog = off_t(8 + TokyoCabinetLog.entryHeaderSize + TokyoCabinetDirectory.flagsOffset)
        var flags: UInt8 = 0
        guard hdb.pointee.walfd >= 0, pread(hdb.pointee.walfd, &flags, 1, flagsInLog) == 1 else { return true }
        flags |= TokyoCabinetDirectory.openFlag
        _ = pwrite(hdb.pointee.walfd, &flags, 1, flagsInLog)
        return true
    }

    /// Empties the log ``logHeader(of:)`` wrote once the header is whole again.
    /// A log that stays (the truncation failed) only makes readers wait for the
    /// next save, and rolling it back would change nothing.
    static func dropHeaderLog(of bdb: UnsafeMutablePointer<TCBDB>) {
        // Not after a close (or an optimize that closed and did not reopen): its
        // descriptors are gone, and their numbers may be another file's by now.
        guard let hdb = bdb.pointee.hdb, hdb.pointee.fd >= 0, !hdb.pointee.tran, hdb.pointee.walfd >= 0 else { return }
        _ = ftruncate(hdb.pointee.walfd, 0)
    }

    /// Runs `body` (a call that rewrites the header outside a transaction) with
    /// the header logged, then empties the log.
    func withHeaderLogged<R>(_ bdb: UnsafeMutablePointer<TCBDB>, _ body: () throws -> R) throws -> R {
        let logged = TokyoCabinetOrderedTable.logHeader(of: bdb)
        defer { if logged { TokyoCabinetOrderedTable.dropHeaderLog(of: bdb) } }
        if logged { try whileHeaderLogged?() }
        return try body()
    }

    /// Removes a log beside a file whose header says no writer has it open: Tokyo
    /// Cabinet rolls a log back only when that flag is set, so it never uses this
    /// one. Left there, it would be rolled back, stale, over the file if the writer
    /// about to open it were killed before its first transaction, and readers would
    /// take it for an interrupted transaction. Called before a writable open.
    ///
    /// A log of the header alone is what a writer killed in its close leaves
    /// (between clearing the flag and removing the log). A longer one held a
    /// transaction's changes that a close was rolling back when it was killed,
    /// after clearing the flag: the file may keep part of them.
    /// - Returns: whether the file may hold such changes (its owner rebuilds it).
    static func removeSpentLog(of path: String) throws -> Bool {
        var status = stat()
        guard lstat(path + ".wal", &status) == 0, status.st_size > 0,
              let flags = TokyoCabinetDirectory.headerFlags(of: path),
              flags & TokyoCabinetDirectory.openFlag == 0 else { return false }
        try TokyoCabinetTable.removeLog(of: path)
        return Int(status.st_size) > TokyoCabinetLog.headerEntrySize
    }
}
