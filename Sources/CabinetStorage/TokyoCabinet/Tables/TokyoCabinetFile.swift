import CTokyoCabinet

/// What the backend does with each of its open files, hash or B+ tree alike:
/// close it, flush it, and (a reader's) bring it up to the writer's last commit.
protocol TokyoCabinetFile: StorageTable {
    func close()
    func sync() throws
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
