#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The lock that keeps a store directory to one writer, and lets readers in
/// other processes read alongside it.
///
/// The writer's lock is `flock` on the store directory itself, opened
/// read-only: no file in the directory can be removed or replaced to break the
/// exclusion (a lock file could be). `flock` locks belong to the open file
/// description, so a second writer in the same process is refused too, and the
/// kernel drops the lock when the process dies, so a crash never leaves a
/// store locked.
///
/// Readers do not take it. A writer makes `.cabinet-commit` when it opens the
/// store, and readers coordinate with its commits through that file's
/// ``CommitLock``. A store that has no such file (no writer of this version
/// has opened it) is read as it used to be: readers hold the directory lock
/// shared, which keeps writers out until they close. Inside one process a
/// store is open either once for writing or for reading (``OpenStores``).
///
/// A writer also leaves its process ID in `.cabinet-lock`, only so that the
/// next opener can say who has the store; the file plays no part in the locking.
final class StoreLock {
    static let fileName = ".cabinet-lock"

    /// The store directory, open while the lock is held.
    private var descriptor: Int32
    private let path: String
    private let shared: Bool
    /// Whether this lock wrote the `.cabinet-lock` note, and so removes it.
    private var recorded = false
    /// The commit lock: the writer's once ``prepareCommits()`` made it, a reader's
    /// when the store has one; `nil` for a reader that holds the directory shared.
    private(set) var commits: CommitLock?
    private let key: OpenStores.Key

    /// Takes the lock on `directory`: exclusive for a writer; for a reader, the
    /// store's commit lock if it has one, else the directory shared. Throws
    /// ``CabinetError/storeLocked(path:pid:)`` at once when the store is taken.
    init(directory: String, shared: Bool = false) throws {
        self.shared = shared
        path = directory
        // O_NOFOLLOW: the lock and every file opened beside it are in this directory, not where a link points.
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            let reason = "cannot open it: \(String(cString: strerror(errno))); check the path and its permissions"
            var status = stat()
            let isLink = lstat(directory, &status) == 0 && (status.st_mode & S_IFMT) == S_IFLNK
            throw CabinetError.cannotAccessDirectory(path: directory, reason: isLink ? "it is a symbolic link; pass the directory it points to" : reason)
        }
        key = OpenStores.key(of: fd)
        descriptor = fd
        do {
            if shared {
                commits = try StoreLock.readersLock(fd, path: directory)
            } else if flock(fd, LOCK_EX | LOCK_NB) != 0 {
                throw CabinetError.storeLocked(path: directory, pid: StoreLock.writer(of: fd, wanted: false))
            }
            guard OpenStores.claim(key, writing: !shared) else {
                // A reader meets this process's writer, or a writer this process's readers.
                throw CabinetError.storeLocked(path: directory, pid: shared ? getpid() : nil)
            }
        } catch {
            _ = flock(fd, LOCK_UN)
            commits?.close()
            close(fd)
            descriptor = -1
            throw error
        }
    }

    /// A reader's way in: the store's commit lock, or (for a store without one) the
    /// directory held shared. A writer makes the commit file right after taking its
    /// lock, so one found holding the directory without it gets a moment to make it.
    private static func readersLock(_ fd: Int32, path: String) throws -> CommitLock? {
        for attempt in 0..<50 {
            if let commits = CommitLock.reader(directory: fd, path: path) { return commits }
            if flock(fd, LOCK_SH | LOCK_NB) == 0 { return nil }
            if attempt < 49 { usleep(2_000) }
        }
        throw CabinetError.storeLocked(path: path, pid: writer(of: fd, wanted: true))
    }

    /// Makes (or opens) the writer's commit lock, once the directory is known to be a store.
    func prepareCommits() throws {
        guard !shared, descriptor >= 0, commits == nil else { return }
        commits = try CommitLock.writer(directory: descriptor, path: path)
    }

    /// Writes this process's ID to a fresh `.cabinet-lock`, for a writer, once the
    /// directory is known to be a store. Best effort: the note only improves the
    /// error message another opener shows. The old file is unlinked first and the
    /// new one created exclusively, so a link left in its place is removed, never
    /// written through.
    func recordOwner() {
        guard !shared, descriptor >= 0, !recorded else { return }
        recorded = true
        _ = unlinkat(descriptor, StoreLock.fileName, 0)
        let fd = openat(descriptor, StoreLock.fileName, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        let text = Array("\(getpid())\n".utf8)
        _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        close(fd)
    }

    /// The process ID of the writer holding the directory, if one does and it left its note.
    private static func writer(of directory: Int32, wanted shared: Bool) -> Int32? {
        if !shared {
            // A writer was refused: if a shared lock is free, only readers hold the store, and they leave no note.
            if flock(directory, LOCK_SH | LOCK_NB) == 0 {
                _ = flock(directory, LOCK_UN)
                return nil
            }
        }
        let fd = openat(directory, fileName, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { return nil }
        var bytes = [UInt8](repeating: 0, count: 32)
        let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        let digits = bytes[0..<count].prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        guard let pid = Int32(String(decoding: digits, as: UTF8.self)), pid > 0 else { return nil }
        // A note left by a writer that was killed names a process that is gone (or a stranger).
        if kill(pid, 0) != 0 && errno == ESRCH { return nil }
        return pid
    }

    /// Releases the lock. Calling it twice does nothing.
    func release() {
        guard descriptor >= 0 else { return }
        // No stale process ID for the next one to report.
        if recorded { _ = unlinkat(descriptor, StoreLock.fileName, 0) }
        commits?.close()
        commits = nil
        _ = flock(descriptor, LOCK_UN)
        close(descriptor)
        descriptor = -1
        OpenStores.release(key, writing: !shared)
    }

    deinit {
        release()
    }
}

/// The stores this process has open, by directory: one writer, or any number
/// of readers. A reader and the writer of one store in one process could wait
/// for each other for ever (a read in progress on a thread that then saves),
/// and Tokyo Cabinet refuses two handles on one file in a process anyway; the
/// pool (`StorePool`) is the way to read and write one store from one process.
enum OpenStores {
    struct Key: Equatable {
        let device: UInt64
        let inode: UInt64
    }

    /// One store open in this process: -1 for the writer, n > 0 for n readers.
    /// A list of plain objects rather than a dictionary, whose generic storage
    /// would cost every process its type's run-time instantiation at the first open.
    private final class Open {
        let key: Key
        var count: Int
        var next: Open?
        init(key: Key, count: Int, next: Open?) {
            self.key = key
            self.count = count
            self.next = next
        }
    }

    private static let opens = Locked<Open?>(nil)

    static func key(of directory: Int32) -> Key {
        var status = stat()
        _ = fstat(directory, &status)
        return Key(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
    }

    /// Records an open; `false` if this process has the store open the other way (or a writer twice).
    static func claim(_ key: Key, writing: Bool) -> Bool {
        opens.withLock { first in
            var open = first
            while let here = open, here.key != key { open = here.next }
            guard let here = open else {
                first = Open(key: key, count: writing ? -1 : 1, next: first)
                return true
            }
            if writing || here.count < 0 { return false }
            here.count += 1
            return true
        }
    }

    static func release(_ key: Key, writing: Bool) {
        opens.withLock { first in
            var previous: Open?
            var open = first
            while let here = open, here.key != key { previous = here; open = here.next }
            guard let here = open else { return }
            here.count = writing ? 0 : here.count - 1
            guard here.count <= 0 else { return }
            if let previous { previous.next = here.next } else { first = here.next }
        }
    }
}
