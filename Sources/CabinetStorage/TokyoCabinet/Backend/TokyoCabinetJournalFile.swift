#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The store's `.cabinet-journal`: one file the writer keeps and writes in
/// place, holding either no journal or one whole journal (`docs/FORMAT.md`,
/// "Saving, and the journal").
///
/// Why in place: a journal written to a new file and renamed into place cost
/// a file's creation, a rename and an unlink at every save of several files,
/// the most expensive system calls of a small pool group, which a service
/// appending to a big list makes at every request. In place it is two writes:
///
/// 1. the header (state 1, the journal's length and its CRC-32) and the journal,
///    in one `pwrite` (with `syncOnCommit`, or in a flushed commit, then
///    `fdatasync`). A write of
///    several pages can be stopped by a kill between two, leaving this
///    journal's first pages before the rest of an older one: the journal is
///    whole only if it ends with the CRC-32 the header names and its bytes
///    match it. One that is not decided nothing (no file is touched before
///    the write returned) and is not there;
/// 2. the files take the changes;
/// 3. the header is written again with state 0 (flushed as the journal was):
///    no journal. Flushed before a flushed commit returns, or a power loss could
///    keep the journal and lose the state 0, and its replay would undo a later
///    commit that changed the same keys without a journal.
///
/// Never written through a link: a file in its place that is a FIFO, or has a
/// second hard link, is removed and made anew; the path and the descriptor are
/// compared before every write, so a file replaced or linked since is too. A
/// link or a directory in its place is an error naming it. A writer's clean
/// close removes the file when it holds no journal, so a store between
/// writers looks as older versions left it. A `.cabinet-journal` an older
/// Cabinet renamed into place (the journal alone, starting `CABINETJ`) is read
/// as before and removed by unlinking it.
package final class TokyoCabinetJournalFile {
    /// The header's first 8 bytes.
    package static let magic = Array("CABINETW".utf8)
    /// Magic, state (1 byte), 3 bytes 0, the journal's length and its CRC-32 (`UInt32`s, little-endian).
    package static let headerSize = 20
    /// A file that held a journal longer than this is cut back when the journal goes.
    package static let keptSize = 1 << 20

    let path: String
    let directory: String
    let sync: Bool
    /// Set for the span of a flushed commit (``CommitDurability/flushed``) on a
    /// store opened without `syncOnCommit`: the file is flushed as with it.
    var flushing = false
    /// Whether writes are flushed: the store syncs on commit, or this commit asks to.
    private var syncs: Bool { sync || flushing }
    /// Whether the file (its bytes or its name) may have changes only in the
    /// page cache: an unflushed write or removal of this open, or, for a
    /// writer's open without `syncOnCommit`, whatever the last writer left. A
    /// flushed commit that does not write the journal flushes it first
    /// (``flushIfNeeded()``): a state 1 that a power loss kept without its
    /// state 0 would be replayed over that commit.
    private(set) var hasUnflushedWrite: Bool
    private var fd: Int32 = -1
    /// The length of the journal in the file, 0 when it holds none.
    private var heldLength = 0
    /// What this open knows the file holds. A write that failed before it
    /// returned left no journal to take back, whatever the path holds now.
    private enum Holding { case unknown, none, journal }
    private var holding = Holding.unknown

    /// `writable`: the open may write the store; a reader's never flushes.
    init(path: String, directory: String, sync: Bool, writable: Bool = true) {
        self.path = path
        self.directory = directory
        self.sync = sync
        hasUnflushedWrite = writable && !sync
    }

    /// Flushes the file if ``hasUnflushedWrite``; returns whether the
    /// directory needs a flush after it (the file's name may be unflushed too).
    func flushIfNeeded() throws -> Bool {
        guard hasUnflushedWrite else { return false }
        if fd >= 0 && isStillThePath() {
            if fdatasync(fd) != 0 { throw DirectoryFiles.failure("sync journal", path) }
        } else {
            // Not opened by this writer (a journal an earlier one left), or gone.
            try DirectoryFiles.syncFile(path)
        }
        hasUnflushedWrite = false
        return true
    }

    deinit { close() }

    /// Closes the file; with `removing`, a file holding no journal is removed first.
    func close(removing: Bool = false) {
        guard fd >= 0 else { return }
        if removing && holding != .journal && isStillThePath() { _ = unlink(path) }
        closeDescriptor(fd)
        fd = -1
    }

    // MARK: Writing

    /// Writes `journal` whole behind a header saying the file holds it.
    /// If it throws before the write returned, the file holds no journal.
    func write(_ journal: [UInt8]) throws {
        holding = .none
        try openForWriting()
        var bytes = [UInt8]()
        bytes.reserveCapacity(Self.headerSize + journal.count)
        bytes.append(contentsOf: Self.header(holding: journal))
        bytes.append(contentsOf: journal)
        heldLength = journal.count
        hasUnflushedWrite = true   // from the first byte: a write cut short is unflushed too
        try writeAll(bytes, at: 0, "write journal")
        holding = .journal
        try flushWrite()
    }

    /// After a write or removal: flushes it if this commit syncs (a flush
    /// covers earlier unflushed writes too); else it stays unflushed.
    private func flushWrite() throws {
        guard syncs else { return }
        if fdatasync(fd) != 0 { throw DirectoryFiles.failure("sync journal", path) }
        hasUnflushedWrite = false
    }

    /// Marks the file as holding no journal; durable when it returns.
    func remove() throws {
        switch holding {
        case .none: return   // nothing, or a write that failed and decided nothing
        case .journal: break
        case .unknown:
            // Not written by this open: a journal a killed writer left, or none.
            switch try Self.contents(of: path) {
            case .none, .empty, .torn: return
            case .legacy, .unreadable:
                try DirectoryFiles.remove(path)
                if syncs { try DirectoryFiles.syncDirectory(directory) } else { hasUnflushedWrite = true }
                return
            case .journal(let journal):
                try openForWriting()
                heldLength = journal.count
            }
        }
        hasUnflushedWrite = true
        try writeAll(Self.header(holding: nil), at: 0, "remove journal")
        try flushWrite()
        holding = .none
        // The header decides; giving back the room of a big journal is housekeeping.
        if heldLength > Self.keptSize { _ = ftruncate(fd, off_t(Self.headerSize)) }
        heldLength = 0
    }

    /// The header of a file holding `journal` (its length and its trailing
    /// CRC-32), or (`nil`) none.
    package static func header(holding journal: [UInt8]?) -> [UInt8] {
        var header = magic + [journal == nil ? 0 : 1, 0, 0, 0]
        let crc = journal.map { $0.count >= 4 ? Array($0.suffix(4)) : [0, 0, 0, 0] } ?? [0, 0, 0, 0]
        withUnsafeBytes(of: UInt32(journal?.count ?? 0).littleEndian) { header.append(contentsOf: $0) }
        return header + crc
    }

    /// Opens the file for this writer, creating it if missing. A file that is
    /// not a regular file of one link is replaced first (see the type); so is
    /// one that is no longer the file at the path.
    private func openForWriting() throws {
        if fd >= 0 {
            if isStillThePath() { return }
            closeDescriptor(fd)
            fd = -1
        }
        var descriptor = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
        if descriptor < 0 && errno != ENOENT { throw DirectoryFiles.failure("open", path) }
        if descriptor >= 0 {
            var status = stat()
            guard fstat(descriptor, &status) == 0 else {
                let error = DirectoryFiles.failure("stat", path)
                closeDescriptor(descriptor)
                throw error
            }
            if (status.st_mode & S_IFMT) != S_IFREG || status.st_nlink != 1 {
                closeDescriptor(descriptor)
                descriptor = -1
                try DirectoryFiles.remove(path)
            }
        }
        if descriptor < 0 {
            descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else { throw DirectoryFiles.failure("create", path) }
            fd = descriptor
            // The file's name must outlive a power loss as its bytes do.
            if syncs { try DirectoryFiles.syncDirectory(directory) } else { hasUnflushedWrite = true }
            return
        }
        fd = descriptor
    }

    /// Whether the open file is still the one at the path, and its only link:
    /// not replaced, renamed away or linked elsewhere since it was opened.
    private func isStillThePath() -> Bool {
        var open = stat(), named = stat()
        guard fstat(fd, &open) == 0, lstat(path, &named) == 0 else { return false }
        return open.st_dev == named.st_dev && open.st_ino == named.st_ino && open.st_nlink == 1
    }

    private func writeAll(_ bytes: [UInt8], at offset: Int, _ operation: String) throws {
        var done = 0
        while done < bytes.count {
            let result = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress! + done, $0.count - done, off_t(offset + done)) }
            if result < 0 {
                if errno == EINTR { continue }
                throw DirectoryFiles.failure(operation, path)
            }
            done += result
        }
    }

    // MARK: Reading

    enum Contents {
        /// No file.
        case none
        /// The file holds no journal (or is empty: made, then killed before its first write).
        case empty
        /// A whole journal.
        case journal([UInt8])
        /// A journal whose write did not finish: no save was decided.
        case torn
        /// A journal an older Cabinet renamed into place, whole file.
        case legacy([UInt8])
        /// Neither: the bytes, and why they are not a journal (for the error that names it).
        case unreadable([UInt8], reason: String)
    }

    /// What the file at `path` holds, reading only its header unless it holds a journal.
    static func contents(of path: String) throws -> Contents {
        guard let file = try DirectoryFiles.ReadHandle(path) else { return .none }
        return try contents(reading: file)
    }

    /// What `file` holds, read from its beginning: its header, then the journal if it holds one.
    static func contents(reading file: DirectoryFiles.ReadHandle) throws -> Contents {
        file.rewind()
        let header = try file.read(upTo: headerSize)
        // Empty, or zeros: made, then a power loss before its first write reached the disk.
        if header.allSatisfy({ $0 == 0 }) { return .empty }
        if header.starts(with: WriteBatch.magic) { return .legacy(header + (try file.read(upTo: .max))) }
        // Shorter than a header, and as far as it goes ours: a first write cut short.
        if header.count < headerSize && (magic + [1, 0, 0, 0]).starts(with: header.prefix(12)) { return .torn }
        if header.count < headerSize {
            return .unreadable(header + (try file.read(upTo: .max)),
                               reason: "it is \(header.count) bytes long, shorter than a header (\(headerSize) bytes), and not the start of one")
        }
        guard header.starts(with: magic) else {
            return .unreadable(header + (try file.read(upTo: .max)),
                               reason: "it starts with neither this version's header (CABINETW) nor an older journal (CABINETJ)")
        }
        guard header[9...11].allSatisfy({ $0 == 0 }) else {
            return .unreadable(header + (try file.read(upTo: .max)), reason: "its header's bytes 9 to 11, always 0, are not")
        }
        switch header[8] {
        case 0: return .empty
        case 1: break
        default:
            return .unreadable(header + (try file.read(upTo: .max)),
                               reason: "its header's state is \(header[8]), which no Cabinet writes (0: no journal, 1: a journal)")
        }
        let length = header[12..<16].reversed().reduce(0) { $0 << 8 | Int($1) }
        let journal = try file.read(upTo: length)
        // Whole: this journal's length, the CRC-32 the header names at its end, and bytes that match it.
        guard journal.count == length, journal.count >= 4, Array(journal.suffix(4)) == Array(header[16..<20]),
              WriteBatch.isWhole(journal) else { return .torn }
        return .journal(journal)
    }
}
