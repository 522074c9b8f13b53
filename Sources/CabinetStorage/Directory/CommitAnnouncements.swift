#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `.cabinet-commits`: where the writer announces each commit to readers in
/// other processes, which watch the file (``CommitWatcher``) instead of
/// polling the store (docs/FORMAT.md, "Commit announcements").
///
/// The file holds the last commit's number and the tables it changed; the
/// writer rewrites it, in one `pwrite`, at the end of each hold of the commit
/// lock that changed tables, before it lets readers in. It is a hint, never
/// data: nothing is flushed, a failed write is ignored (a reader that then
/// sees a number jump counts everything as changed), and a reader that finds
/// bytes it cannot decode does the same.
///
/// Layout (little-endian): `CBNTCMTS`, the commit number (UInt64), a flags
/// byte (1: every table may have changed), the count of table names (UInt32),
/// then each name's length (UInt16) and UTF-8 bytes.
enum CommitAnnouncements {
    static let fileName = ".cabinet-commits"
    static let magic = Array("CBNTCMTS".utf8)
    /// Names beyond this many bytes are announced as "everything".
    static let maximumNameBytes = 16 * 1024

    /// One announcement: the commit's number and what it changed (`nil`: everything).
    struct Announcement: Equatable {
        var number: UInt64
        var tables: Set<String>?

        var encoded: [UInt8] {
            var bytes = CommitAnnouncements.magic
            withUnsafeBytes(of: number.littleEndian) { bytes.append(contentsOf: $0) }
            let names = tables.map { $0.sorted() } ?? []
            let whole = tables == nil || names.reduce(0, { $0 + $1.utf8.count + 2 }) > CommitAnnouncements.maximumNameBytes
            bytes.append(whole ? 1 : 0)
            withUnsafeBytes(of: UInt32(whole ? 0 : names.count).littleEndian) { bytes.append(contentsOf: $0) }
            if !whole {
                for name in names {
                    withUnsafeBytes(of: UInt16(name.utf8.count).littleEndian) { bytes.append(contentsOf: $0) }
                    bytes.append(contentsOf: name.utf8)
                }
            }
            return bytes
        }

        init(number: UInt64, tables: Set<String>?) {
            self.number = number
            self.tables = tables
        }

        /// Decodes the file's bytes; `nil` if they are not an announcement (bytes past its end are ignored).
        init?(decoding bytes: [UInt8]) {
            guard bytes.count >= 21, Array(bytes[0..<8]) == CommitAnnouncements.magic else { return nil }
            func integer<T: FixedWidthInteger>(at offset: Int, as: T.Type) -> T {
                bytes[offset..<offset + MemoryLayout<T>.size].reversed().reduce(T(0)) { $0 << 8 | T($1) }
            }
            number = integer(at: 8, as: UInt64.self)
            guard bytes[16] <= 1 else { return nil }
            if bytes[16] == 1 {
                tables = nil
                return
            }
            let count = Int(integer(at: 17, as: UInt32.self))
            var names = Set<String>()
            var at = 21
            for _ in 0..<count {
                guard bytes.count - at >= 2 else { return nil }
                let length = Int(integer(at: at, as: UInt16.self))
                at += 2
                guard bytes.count - at >= length else { return nil }
                names.insert(String(decoding: bytes[at..<at + length], as: UTF8.self))
                at += length
            }
            tables = names
        }
    }

    /// Reads the announcement in the file open as `fd`; `nil` if there is none that decodes.
    static func read(_ fd: Int32) -> Announcement? {
        var bytes = [UInt8](repeating: 0, count: 21 + maximumNameBytes + 64)
        let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Announcement(decoding: Array(bytes[0..<count]))
    }
}

/// Store services whose commits readers in other processes hear of
/// (``CommitAnnouncements``): told what a commit is about to change, and
/// announce it when the commit lock is let go. A backend that wraps another
/// (a test's pausing backend) commits through the services it forwards to.
package protocol AnnouncesCommits: AnyObject {
    func willCommit(tables names: [String])
    func willChangeEverything()
}

/// The writer's side of ``CommitAnnouncements``: what the commits inside the
/// current hold of the commit lock changed, announced when the hold ends.
/// Used under the commit lock's in-process lock, by one thread at a time.
final class CommitAnnouncer {
    /// The store directory's descriptor (owned by the store lock, open as long as this).
    private let directory: Int32
    /// The file, once opened: at the first announcement, so that an open that
    /// commits nothing (a store from a Mac, looked at) writes nothing.
    private var fd: Int32 = -1
    private var number: UInt64 = 0
    /// Tables changed in the current hold; `nil` inside `changedAll`.
    private var changed: Set<String>? = []
    private var hasChanges = false

    init(directory: Int32) {
        self.directory = directory
    }

    /// Opens (or makes) the file; `false` if it cannot (readers then see
    /// changes at their next read, not when they happen).
    private func open() -> Bool {
        if fd >= 0 { return true }
        var opened = openat(directory, CommitAnnouncements.fileName, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
        if opened < 0 && errno == ENOENT {
            opened = openat(directory, CommitAnnouncements.fileName, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        }
        guard opened >= 0 else { return false }
        fd = opened
        // Numbers go on from the last writer's, so a watching reader sees them rise.
        number = CommitAnnouncements.read(fd)?.number ?? 0
        return true
    }

    func changed(tables names: some Sequence<String>) {
        hasChanges = true
        changed?.formUnion(names)
    }

    func changedAll() {
        hasChanges = true
        changed = nil
    }

    /// At the end of a hold of the commit lock: announces what it changed, if anything.
    func announce() {
        guard hasChanges else { return }
        defer {
            hasChanges = false
            changed = []
        }
        guard open() else { return }
        number &+= 1
        let bytes = CommitAnnouncements.Announcement(number: number, tables: changed).encoded
        _ = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    }

    func close() {
        if fd >= 0 { closeDescriptor(fd) }
        fd = -1
    }

    deinit { close() }
}
