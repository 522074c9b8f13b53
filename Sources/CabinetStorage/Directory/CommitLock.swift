#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The lock that keeps readers in other processes off the tables while the
/// writer changes them: `flock` on `.cabinet-commit`, an empty file a writer
/// creates in the store directory when it opens the store and that nothing
/// ever removes (see `docs/FORMAT.md`, "Readers and the writer").
///
/// The writer holds it exclusive for the part of an operation that changes
/// table files (a save's transactions or journal, a rebuild, a replay, a
/// restore's swaps); a reader holds it shared for one read operation. So a
/// reader never sees part of a save, and never opens a file while the writer
/// is inside a transaction (Tokyo Cabinet would roll the live transaction back
/// at the open). Holding it is re-entrant: an inner call inside an outer one
/// makes no system call. The kernel drops it when the process dies.
final class CommitLock {
    static let fileName = ".cabinet-commit"

    private var descriptor: Int32
    private let exclusive: Bool
    /// The file's path, for messages.
    private let path: String
    /// How many calls of ``holding(whenTaken:_:)`` are running.
    private var depth = 0

    private init(descriptor: Int32, exclusive: Bool, path: String) {
        self.descriptor = descriptor
        self.exclusive = exclusive
        self.path = path
    }

    /// The writer's lock: opens `.cabinet-commit` in the store directory open as
    /// `directory` (at `path`), creating it if it is missing. A link in its place
    /// is replaced by a file, never followed; anything else that is not a regular
    /// file is refused.
    static func writer(directory: Int32, path: String) throws -> CommitLock {
        let file = path + "/" + fileName
        var fd = openat(directory, fileName, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        if fd < 0 && errno == ELOOP { _ = unlinkat(directory, fileName, 0) }
        if fd < 0 && (errno == ENOENT || errno == ELOOP) {
            fd = openat(directory, fileName, O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        }
        guard fd >= 0 else { throw DirectoryFiles.failure("open", file) }
        guard isRegularFile(fd) else {
            closeDescriptor(fd)
            throw CabinetError.cannotAccessDirectory(path: path, reason: "\(file) is not a regular file; move it out of the store directory")
        }
        return CommitLock(descriptor: fd, exclusive: true, path: file)
    }

    /// A reader's lock, if a writer has made the file; `nil` for a store no
    /// writer of this version has opened.
    static func reader(directory: Int32, path: String) -> CommitLock? {
        let fd = openat(directory, fileName, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        guard isRegularFile(fd) else {
            closeDescriptor(fd)
            return nil
        }
        return CommitLock(descriptor: fd, exclusive: false, path: path + "/" + fileName)
    }

    private static func isRegularFile(_ fd: Int32) -> Bool {
        var status = stat()
        return fstat(fd, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG
    }

    /// Runs `body` holding the lock (waiting for it if another process holds it
    /// the other way). `whenTaken` runs right after the lock is taken, in the
    /// outermost call only: a reader brings its handles up to date there.
    func holding<R>(whenTaken: () throws -> Void, _ body: () throws -> R) throws -> R {
        guard descriptor >= 0 else { return try body() }
        if depth > 0 {
            depth += 1
            defer { depth -= 1 }
            return try body()
        }
        while flock(descriptor, exclusive ? LOCK_EX : LOCK_SH) != 0 {
            if errno != EINTR { throw DirectoryFiles.failure(exclusive ? "lock for a commit" : "lock for reading", path) }
        }
        depth = 1
        defer {
            depth = 0
            _ = flock(descriptor, LOCK_UN)
        }
        try whenTaken()
        return try body()
    }

    /// Closes the file (which releases the lock). Calling it twice does nothing.
    func close() {
        guard descriptor >= 0 else { return }
        closeDescriptor(descriptor)
        descriptor = -1
    }

    deinit {
        close()
    }
}
