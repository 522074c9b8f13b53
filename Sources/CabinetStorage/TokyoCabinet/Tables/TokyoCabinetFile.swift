import CTokyoCabinet

/// What the backend does with each of its open files, hash or B+ tree alike:
/// close it, flush it, and (a reader's) bring it up to the writer's last commit.
protocol TokyoCabinetFile: StorageTable {
    func close()
    /// Flushes the file (and, for a B+ tree, its page cache) to stable storage.
    func sync() throws
    /// Whether the file may hold changes that are only in the page cache since
    /// its last flush (a commit that was not synced, a rollback): a flushed
    /// commit flushes it first, so that no commit before it is lost with a power
    /// loss that the flushed one survives.
    var hasUnflushedChanges: Bool { get }
    /// A reader's stamp of what its handle knows of the file (`nil`: nothing to compare).
    var readingStamp: TokyoCabinetTable.ReadingStamp? { get }
    /// Brings a reader's handle to the file's committed state; returns the new stamp.
    func refreshForReading(since seen: TokyoCabinetTable.ReadingStamp?) throws -> TokyoCabinetTable.ReadingStamp?
}

extension TokyoCabinetTable: TokyoCabinetFile {}

extension TokyoCabinetDirectory {
    /// Where a Tokyo Cabinet file's header says which database it is (`TCDBTHASH`, `TCDBTBTREE`).
    static let typeOffset = 32

    /// Whether the Tokyo Cabinet file at `path` is a B+ tree database (its header says so).
    static func isOrderedFile(_ path: String) -> Bool {
        guard let header = readHead(of: path, count: headerSize), header.count == headerSize,
              Array(header.prefix(magic.count)) == magic else { return false }
        return Int(header[typeOffset]) == Int(TCDBTBTREE)
    }
}

extension TokyoCabinetTable {
    /// Makes the transactions of `hdb` synced, or not, from now on. Tokyo
    /// Cabinet reads `HDBOTSYNC` from the handle's open mode (`omode`, in the
    /// public `TCHDB` struct) at each step of a transaction, not only at the
    /// open: `tchdbtranbegin` fsyncs the file, each write-ahead log entry is
    /// fsynced before the page it saves is overwritten, and `tchdbtrancommit`
    /// msyncs and fsyncs the file. Set for one transaction's span, it makes
    /// that one as durable as every one of a handle opened with it (a B+ tree's
    /// transactions are its hash file's: `bdb.pointee.hdb`).
    static func syncTransactions(of hdb: UnsafeMutablePointer<TCHDB>, _ sync: Bool) {
        if sync {
            hdb.pointee.omode |= UInt32(HDBOTSYNC)
        } else {
            hdb.pointee.omode &= ~UInt32(HDBOTSYNC)
        }
    }
}
