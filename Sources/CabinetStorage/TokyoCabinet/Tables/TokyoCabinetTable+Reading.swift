import CTokyoCabinet
import Foundation

/// A reader's handles. A reader opens its files without Tokyo Cabinet's locks
/// (`HDBONOLCK`), so that the writer's lock does not keep it out; it checks
/// the header as Tokyo Cabinet checks it only under its lock, never opens a file
/// holding a killed writer's transaction (Tokyo Cabinet would roll it back, even
/// for a reader), and is brought up to the writer's last commit before each
/// read operation (see ``TokyoCabinetBackend/withCommittedState(_:)``).
extension TokyoCabinetTable {
    /// What a reader's handle knew of its file when it opened it: the file (its
    /// inode) and the header's record count and file size as stored (bytes 48 to
    /// 63, which every commit rewrites). The handle caches both, and reads nothing
    /// past the size it knows.
    struct ReadingStamp: Equatable {
        var inode: UInt64
        var recordCount: UInt64
        var fileSize: UInt64
    }

    /// The stamp of the open handle, read from its map of the file's header.
    var readingStamp: ReadingStamp? {
        guard let hdb = handle, let map = hdb.pointee.map else { return nil }
        let header = UnsafeRawPointer(map)
        return ReadingStamp(inode: hdb.pointee.inode,
                            recordCount: header.loadUnaligned(fromByteOffset: 48, as: UInt64.self),
                            fileSize: header.loadUnaligned(fromByteOffset: 56, as: UInt64.self))
    }

    /// Brings a reader's handle to the file's committed state, with the commit
    /// lock held: the same file with the same counts keeps its handle (its map
    /// shows records changed in place); a file with other counts, or another file
    /// at the path (rebuilt, restored), is opened afresh. Returns the new stamp.
    /// Throws ``CabinetError/recoveryPending(path:reason:)`` when a killed writer
    /// left a transaction in the file; the handle is then closed, so every read
    /// throws until a writer has rolled it back.
    func refreshForReading(since seen: ReadingStamp?) throws -> ReadingStamp? {
        var status = stat()
        guard lstat(path, &status) == 0 else {
            let error = DirectoryFiles.failure("find", path)
            dropHandle()
            throw error
        }
        if let hdb = handle, let map = hdb.pointee.map, let seen, readingStamp == seen, UInt64(status.st_ino) == seen.inode {
            let flags = UnsafeRawPointer(map).load(fromByteOffset: TokyoCabinetDirectory.flagsOffset, as: UInt8.self)
            if flags & TokyoCabinetDirectory.openFlag != 0 && TokyoCabinetTable.logHoldsTransaction(path) {
                dropHandle()
                throw TokyoCabinetTable.interruptedTransaction(path)
            }
            return seen
        }
        dropHandle()
        handle = try TokyoCabinetTable.openHandle(path: path, options: options)
        return readingStamp
    }

    private func dropHandle() {
        guard let hdb = handle else { return }
        handle = nil
        TokyoCabinetTable.closeHandle(hdb, path: path)
    }

    /// Whether `path`'s log holds a transaction: its 8-byte header and the file's 256-byte one at least.
    private static func logHoldsTransaction(_ path: String) -> Bool {
        var status = stat()
        return lstat(path + ".wal", &status) == 0 && status.st_size >= 8 + TokyoCabinetDirectory.headerSize
    }

    /// Throws if a killed writer left a transaction in the file at `path`, which
    /// Tokyo Cabinet would roll back (writing) at any open, a reader's included.
    static func refuseInterruptedTransaction(_ path: String) throws {
        var status = stat()
        guard lstat(path + ".wal", &status) == 0 else { return }
        if TokyoCabinetDirectory.transactionPending(table: path, logSize: Int(status.st_size)) {
            // A Mac's file with its own unfinished transaction, which only the Mac can
            // finish: the error that says what the file is says what to do.
            if let foreign = TokyoCabinetDirectory.foreignLayoutError(ofTable: path) { throw foreign }
            throw interruptedTransaction(path)
        }
    }

    private static func interruptedTransaction(_ path: String) -> CabinetError {
        let slash = path.lastIndex(of: "/") ?? path.startIndex
        let name = path[path.index(after: slash)...]
        return .recoveryPending(path: String(path[..<slash]), reason: "\(name).wal, a transaction of \(name) that did not finish")
    }

    /// The checks of the header Tokyo Cabinet makes only when it locks the file
    /// (`tchdbopenimpl`): the magic, the database type, the first record between
    /// the bucket array and the end, and a file as long as the header says.
    /// Closes `hdb` and throws ``CabinetError/notADatabase(_:reason:)`` if one fails.
    static func checkUnlockedOpen(_ hdb: UnsafeMutablePointer<TCHDB>, path: String) throws {
        guard !unlockedHeaderIsValid(hdb, type: Int(TCDBTHASH)) else { return }
        closeHandle(hdb, path: path)
        throw openError(path: path, code: Int32(TCEMETA))
    }

    /// Whether the header of `hdb`, opened without Tokyo Cabinet's lock, passes the
    /// checks Tokyo Cabinet skips then, for a database of `type` (a hash file, or
    /// the one under a B+ tree): without them a file cut short is mapped past its
    /// end, and the first read there is a bus error.
    static func unlockedHeaderIsValid(_ hdb: UnsafeMutablePointer<TCHDB>, type: Int) -> Bool {
        let header = hdb.pointee
        let bucketSize: UInt64 = header.opts & UInt8(HDBTLARGE) != 0 ? 8 : 4
        let (buckets, overflow) = header.bnum.multipliedReportingOverflow(by: bucketSize)
        var status = stat()
        let magic = TokyoCabinetDirectory.magic.dropLast()   // without its newline, as Tokyo Cabinet compares it
        let valid = !overflow && buckets < UInt64.max / 2 && header.map != nil
            && magic.elementsEqual(UnsafeRawBufferPointer(start: header.map, count: magic.count))
            && Int(header.type) == type
            && header.frec >= UInt64(TokyoCabinetDirectory.headerSize) + buckets + 64 && header.frec <= header.fsiz
            && fstat(header.fd, &status) == 0 && UInt64(status.st_size) >= header.fsiz
        return valid
    }
}

extension TokyoCabinetTable {
    /// One read per key: from the file's map, each is a lookup in memory, after
    /// one pass that brings all of their records into the CPU's cache side by side
    /// (``TokyoCabinetLookup/prefetch(_:keys:bigEndian:rounds:)``).
    func withValues(forKeys keys: [[UInt8]], _ body: (Int, UnsafeRawBufferPointer?) throws -> Void) throws {
        prefetch(TokyoCabinetLookup.ByteKeys(keys: keys))
        try withValuesOneByOne(forKeys: keys, body)
    }

    /// ``withValues(forKeys:_:)`` for row keys, each made on the stack.
    func withValues(forRows rows: [UInt32], _ body: (Int, UnsafeRawBufferPointer?) throws -> Void) throws {
        prefetch(TokyoCabinetLookup.RowKeys(rows: rows))
        for (index, row) in rows.enumerated() {
            let found: Void? = try withValue(forRow: row) { try body(index, $0) }
            if found == nil { try body(index, nil) }
        }
    }

    /// Brings the records of `keys` into the CPU's cache before they are read one
    /// by one (``TokyoCabinetLookup/prefetch(_:keys:bigEndian:rounds:)``); nothing when
    /// this file is not read through Tokyo Cabinet's map.
    func prefetch<Keys: TokyoCabinetLookup.Keys>(_ keys: Keys) {
        guard let hdb = handle, let bigEndian = lookupByteOrder else { return }
        TokyoCabinetLookup.prefetch(hdb, keys: keys, bigEndian: bigEndian)
    }
}
