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
/// the most expensive system calls of a small pool group (about 13 % of a
/// service's requests appending to a big list). In place it is three writes:
///
/// 1. the header (state 1, the journal's length) and the journal, in one
///    `pwrite` (with `syncOnCommit`, then `fdatasync`). The journal ends with
///    its own CRC-32, so a write a kill cut short (a write of several pages can
///    stop between two) is seen as not whole: no save was decided, no file
///    touched, and the journal is not there;
/// 2. the files take the changes;
/// 3. the header is written again with state 0 (with `syncOnCommit`, then
///    `fdatasync`): no journal.
///
/// A `.cabinet-journal` an older Cabinet renamed into place (the journal alone,
/// starting `CABINETJ`) is read as before and removed by unlinking it.
/// The file is never followed through a link and never written through a second
/// hard link: such a file is replaced by a new one first, as temporaries are.
package final class TokyoCabinetJournalFile {
    /// The header's first 8 bytes.
    package static let magic = Array("CABINETW".utf8)
    /// Magic, state (1 byte), 3 bytes 0, the journal's length (`UInt32`, little-endian).
    package static let headerSize = 16
    /// A file that held a journal longer than this is cut back when the journal goes.
    package static let keptSize = 1 << 20

    let path: String
    let directory: String
    let sync: Bool
    private var fd: Int32 = -1
    /// The length of the journal last written through `fd`, 0 once removed.
    private var writtenLength = 0

    init(path: String, directory: String, sync: Bool) {
        self.path = path
        self.directory = directory
        self.sync = sync
    }

    deinit { close() }

    func close() {
        if fd >= 0 { closeDescriptor(fd) }
        fd = -1
    }

    // MARK: Writing

    /// Writes `journal` whole behind a header saying the file holds it.
    func write(_ journal: [UInt8]) throws {
        try openForWriting()
        var bytes = [UInt8]()
        bytes.reserveCapacity(Self.headerSize + journal.count)
        bytes.append(contentsOf: Self.header(holding: journal.count))
        bytes.append(contentsOf: journal)
        writtenLength = journal.count
        try writeAll(bytes, at: 0, "write journal")
        if sync && fdatasync(fd) != 0 { throw DirectoryFiles.failure("sync journal", path) }
    }

    /// Marks the file as holding no journal; durable when it returns.
    func remove() throws {
        if fd < 0 {
            // Not written by this open: a journal a killed writer left, or none.
            switch try Self.contents(of: path) {
            case .none: return
            case .legacy, .unreadable:
                try DirectoryFiles.remove(path)
                if sync { try DirectoryFiles.syncDirectory(directory) }
                return
            case .empty, .journal, .torn:
                try openForWriting()
            }
        }
        // The whole header, not the state byte alone: a file whose first write failed is
        // empty, and a state byte written into it would leave bytes that read as damage.
        try writeAll(Self.header(holding: nil), at: 0, "remove journal")
        if sync && fdatasync(fd) != 0 { throw DirectoryFiles.failure("sync journal", path) }
        // The state byte decides; giving back the room of a big journal is housekeeping.
        if writtenLength > Self.keptSize { _ = ftruncate(fd, off_t(Self.headerSize)) }
        writtenLength = 0
    }

    /// The header of a file holding a journal of `length` bytes, or (`nil`) none.
    package static func header(holding length: Int?) -> [UInt8] {
        var header = magic + [length == nil ? 0 : 1, 0, 0, 0]
        withUnsafeBytes(of: UInt32(length ?? 0).littleEndian) { header.append(contentsOf: $0) }
        return header
    }

    /// Opens the file once for this writer, creating it if missing. A file that
    /// is not a regular file of one link is replaced first (see the type).
    private func openForWriting() throws {
        guard fd < 0 else { return }
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
            if sync { try DirectoryFiles.syncDirectory(directory) }
            return
        }
        fd = descriptor
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
        /// Neither: the bytes, for the replay to call damaged.
        case unreadable([UInt8])
    }

    /// What the file at `path` holds, reading only its header unless it holds a journal.
    static func contents(of path: String) throws -> Contents {
        guard let file = try DirectoryFiles.ReadHandle(path) else { return .none }
        let header = try file.read(upTo: headerSize)
        if header.isEmpty { return .empty }
        if header.starts(with: SaveJournal.magic) { return .legacy(header + (try file.read(upTo: .max))) }
        guard header.count == headerSize, header.starts(with: magic), header[9...11].allSatisfy({ $0 == 0 }) else {
            return .unreadable(header + (try file.read(upTo: .max)))
        }
        switch header[8] {
        case 0: return .empty
        case 1: break
        default: return .unreadable(header + (try file.read(upTo: .max)))
        }
        let length = header[12...].reversed().reduce(0) { $0 << 8 | Int($1) }
        let journal = try file.read(upTo: length)
        return journal.count == length && SaveJournal.isWhole(journal) ? .journal(journal) : .torn
    }
}
