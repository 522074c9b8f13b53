import Foundation

/// What the files of a Tokyo Cabinet store directory are, told apart without
/// following a link and without opening anything but regular files (a FIFO
/// named like a table must not hang a scan, a link must not be read through).
///
/// Used to decide whether a directory is a store at all, what a reader must
/// refuse (an interrupted transaction it may not roll back), and what the
/// backend's ``TokyoCabinetBackend/storageProblems()`` reports.
package enum TokyoCabinetDirectory {
    /// One non-dot entry of a store directory.
    package enum Entry: Equatable {
        /// A Tokyo Cabinet file: a table.
        case table(String)
        /// `<table>.wal`, Tokyo Cabinet's transaction log of `table`; `pending` when it
        /// holds a transaction to roll back (the writer was killed inside it).
        case transactionLog(String, table: String, pending: Bool)
        /// `<file>.tmp.<n>`, the copy Tokyo Cabinet's optimize writes before renaming it over `file`.
        case rebuildTemporary(String, of: String)
        /// Anything else in the directory: what it is, in words.
        case foreign(String, what: String)

        /// Whether the entry is `table`'s transaction log holding a transaction to roll back.
        package func hasPendingTransaction(of table: String) -> Bool {
            if case .transactionLog(_, table, true) = self { return true }
            return false
        }

        /// Whether the entry is a Tokyo Cabinet file (a table, or a rebuild's copy of one).
        package var isTokyoCabinetFile: Bool {
            switch self {
            case .table, .rebuildTemporary: true
            case .transactionLog, .foreign: false
            }
        }
    }

    /// The first bytes of every Tokyo Cabinet database file.
    package static let magic = Array("ToKyO CaBiNeT\n".utf8)
    /// Tokyo Cabinet's header: 256 bytes, its flags byte at offset 33.
    package static let headerSize = 256
    package static let flagsOffset = 33
    /// The header flag a writer sets while it has the file open (`HDBFOPEN`): still
    /// set with no writer around, the last one was killed.
    package static let openFlag: UInt8 = 1 << 0
    /// The header flag Tokyo Cabinet sets when a write failed in the file
    /// (`HDBFFATAL`): Cabinet keeps it until it has rebuilt the file (see
    /// ``TokyoCabinetFailedWriteMark``).
    package static let fatalFlag: UInt8 = 1 << 1

    /// The non-dot entries of `directory`, sorted by name.
    package static func entries(of directory: String) throws -> [Entry] {
        try names(in: directory).map { classify($0, in: directory) }
    }

    /// Every name in `directory`, dot files included, sorted; a directory that
    /// cannot be read is a ``CabinetError/cannotAccessDirectory(path:reason:)``.
    package static func allNames(in directory: String) throws -> [String] {
        do {
            return try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        } catch {
            throw CabinetError.cannotAccessDirectory(path: directory, reason: "\(error.localizedDescription); check the path and its permissions")
        }
    }

    /// The non-dot names in `directory`, sorted.
    private static func names(in directory: String) throws -> [String] {
        try allNames(in: directory).filter { !$0.hasPrefix(".") }
    }

    package static func classify(_ name: String, in directory: String) -> Entry {
        let path = directory + "/" + name
        var status = stat()
        guard lstat(path, &status) == 0 else { return .foreign(name, what: "unreadable: \(String(cString: strerror(errno)))") }
        switch status.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFLNK: return .foreign(name, what: "a symbolic link (Cabinet does not follow links in a store)")
        case S_IFDIR: return .foreign(name, what: "a directory")
        default: return .foreign(name, what: "not a regular file")
        }
        if name.hasSuffix(".wal") && name.count > 4 {
            let table = String(name.dropLast(4))
            return .transactionLog(name, table: table, pending: transactionPending(table: directory + "/" + table, logSize: Int(status.st_size)))
        }
        if let file = TableName.rebuiltFile(ofTemporary: name), hasMagic(atPath: path) {
            return .rebuildTemporary(name, of: file)
        }
        if hasMagic(atPath: path) { return .table(name) }
        return .foreign(name, what: status.st_size == 0 ? "an empty file, not a Tokyo Cabinet file"
                                                         : "not a Tokyo Cabinet file (it does not start with Tokyo Cabinet's magic)")
    }

    /// Whether opening `table` would make Tokyo Cabinet roll back a transaction from its
    /// log: as `tchdbopenimpl` decides it, the file's header still says a writer has
    /// it open, and the log holds at least its own header (8 bytes) and the file's
    /// (256 bytes). Tokyo Cabinet does that even for a reader, writing to the file.
    /// Or the header says a write failed in the file: a writer killed in the rollback
    /// after it left the log for a writable open to roll back again (see
    /// ``TokyoCabinetFailedWriteMark``), and a reader must not read the file half rolled back.
    package static func transactionPending(table path: String, logSize: Int) -> Bool {
        guard logSize >= 8 + headerSize, let flags = headerFlags(of: path) else { return false }
        return flags & (openFlag | fatalFlag) != 0
    }

    /// The flags byte of the Tokyo Cabinet file at `path` (`HDBFOPEN`, `HDBFFATAL`),
    /// read without Tokyo Cabinet; `nil` if it is not a file with a whole header.
    package static func headerFlags(of path: String) -> UInt8? {
        guard let header = readHead(of: path, count: headerSize), header.count == headerSize,
              Array(header.prefix(magic.count)) == magic else { return nil }
        return header[flagsOffset]
    }

    /// The tables of `directory` whose interrupted transaction a writable open rolls back.
    package static func interruptedTransactions(in directory: String) throws -> [String] {
        // Every open checks this: look at the logs only, not into every table's file.
        try names(in: directory).filter { $0.hasSuffix(".wal") }.compactMap { name in
            if case .transactionLog(_, let table, true) = classify(name, in: directory) { return table }
            return nil
        }
    }

    /// Whether `path` is a regular file that starts with Tokyo Cabinet's magic.
    package static func hasMagic(atPath path: String) -> Bool {
        readHead(of: path, count: magic.count).map { $0 == magic } ?? false
    }

    /// Up to `count` first bytes of the regular file at `path`; `nil` for a link, a
    /// FIFO, a device or a directory, which are never opened for reading.
    package static func readHead(of path: String, count: Int) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { return nil }
        var bytes = [UInt8](repeating: 0, count: count)
        let read = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, 0) }
        guard read >= 0 else { return nil }
        return Array(bytes.prefix(read))
    }

    /// Refuses a `destination` that holds anything: `what` (a backup, an export)
    /// goes into a new or empty directory, never over files it would mix with.
    package static func refuseNonEmpty(_ destination: String, for what: String) throws {
        if let existing = try? FileManager.default.contentsOfDirectory(atPath: destination), !existing.isEmpty {
            throw CabinetError.cannotAccessDirectory(path: destination, reason: "it is not empty, and \(what) goes into a new or empty directory; choose another, or empty this one")
        }
    }

    /// Makes a new directory at `destination` (which must not exist or be empty)
    /// whole or not at all: `write` fills a hidden sibling (`.NAME.cabinet-partial`),
    /// which is renamed into place, and the rename flushed. An interrupted write
    /// leaves nothing at `destination` that could pass for its result; a rename
    /// not known to be on the disk is undone, so that trying again starts afresh.
    /// `what` names the result in errors ("a backup").
    package static func publishDirectory(at destination: String, what: String, removedLeftover: (_ staging: String) -> Void = { _ in },
                                         _ write: (_ staging: String) throws -> Void) throws {
        try refuseNonEmpty(destination, for: what)
        let url = URL(fileURLWithPath: destination)
        let parent = url.deletingLastPathComponent().path
        let staging = parent + "/." + url.lastPathComponent + ".cabinet-partial"
        if DirectoryFiles.exists(staging) {
            // A copy that was killed part way: never finished, so never anyone's store.
            do {
                try FileManager.default.removeItem(atPath: staging)
            } catch {
                throw DirectoryFiles.failure("remove the partial copy an interrupted \(what) left (remove it by hand, then try again)", staging)
            }
            removedLeftover(staging)
        }
        do {
            try write(staging)
            try DirectoryFiles.replace(destination, with: staging, directory: parent, sync: false)
        } catch {
            try? FileManager.default.removeItem(atPath: staging)
            throw error
        }
        do {
            try DirectoryFiles.syncDirectory(parent)
        } catch {
            try? FileManager.default.removeItem(atPath: destination)
            throw error
        }
    }

    /// The ``CabinetError/Code-swift.struct/foreignByteOrder`` error for the file at
    /// `path` if it is a sound hash file in the byte order this machine's Tokyo
    /// Cabinet does not write (`nil` otherwise). Asked after Tokyo Cabinet refused
    /// the file (`refused`), and where a file's own state (an unfinished
    /// transaction) would otherwise be reported first, with advice that does not
    /// apply to it. When this machine's order is unknown (no temporary directory
    /// for the probe), a file Tokyo Cabinet refused whose header is sound in
    /// exactly one order is in the other one; without a refusal, nothing is said.
    package static func foreignLayoutError(ofTable path: String, refused: Bool = false) -> CabinetError? {
        guard let header = TokyoCabinetHashHeader.read(path: path) else { return nil }
        if let native = TokyoCabinetByteOrder.native {
            guard header.byteOrder != native else { return nil }
        } else if !refused {
            return nil
        }
        return .foreignByteOrder(RecordLocation(file: path), store: URL(fileURLWithPath: path).deletingLastPathComponent().path,
                                 layout: header.byteOrder)
    }

    /// Refuses a table's file (or its transaction log) that is a link: Tokyo Cabinet
    /// opens both by path, and would read, fill or truncate whatever the link points at.
    package static func refuseLinks(forTable path: String) throws {
        for file in [path, path + ".wal"] {
            var status = stat()
            if lstat(file, &status) == 0 && (status.st_mode & S_IFMT) == S_IFLNK {
                throw CabinetError.notADatabase(RecordLocation(file: file),
                                                reason: "it is a symbolic link, which Cabinet does not follow in a store; replace it with the file itself")
            }
        }
    }
}
