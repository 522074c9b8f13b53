#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The lock that keeps a store directory to one writer, or to any number of readers.
///
/// The lock is `flock` on the store directory itself, opened read-only: a
/// reader needs no write permission, and no file in the directory can be
/// removed or replaced to break the exclusion (a lock file could be). `flock`
/// locks belong to the open file description, so a second backend on the
/// same directory in the same process is refused too, and the kernel drops the
/// lock when the process dies, so a crash never leaves a store locked.
///
/// A writer also leaves its process ID in `.cabinet-lock`, only so that the
/// next opener can say who has the store; the file plays no part in the locking.
final class StoreLock {
    static let fileName = ".cabinet-lock"

    /// The store directory, open while the lock is held.
    private var descriptor: Int32
    private let shared: Bool
    /// Whether this lock wrote the `.cabinet-lock` note, and so removes it.
    private var recorded = false

    /// Takes the lock on `directory` (exclusive for a writer, shared for a
    /// reader: readers exclude writers, not each other), or throws
    /// ``CabinetError/storeLocked(path:pid:)`` at once.
    init(directory: String, shared: Bool = false) throws {
        self.shared = shared
        // O_NOFOLLOW: the lock and every file opened beside it are in this directory, not where a link points.
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            let reason = "cannot open it: \(String(cString: strerror(errno)))"
            var status = stat()
            let isLink = lstat(directory, &status) == 0 && (status.st_mode & S_IFMT) == S_IFLNK
            throw CabinetError.cannotAccessDirectory(path: directory, reason: isLink ? "it is a symbolic link; pass the directory it points to" : reason)
        }
        guard flock(fd, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) == 0 else {
            let owner = StoreLock.writer(of: fd, wanted: shared)
            close(fd)
            throw CabinetError.storeLocked(path: directory, pid: owner)
        }
        descriptor = fd
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
        _ = flock(descriptor, LOCK_UN)
        close(descriptor)
        descriptor = -1
    }

    deinit {
        release()
    }
}
