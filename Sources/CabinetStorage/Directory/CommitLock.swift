#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

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
///
/// `flock` has no writer preference: readers whose shared holds overlap would
/// keep a writer out for as long as they keep coming. So both sides first take
/// the turn lock, `flock` on `.cabinet-commit-turn`, exclusive, and keep it only
/// until they hold the commit lock: a reader for a moment, the writer for as long
/// as it waits. Readers that arrive while the writer waits queue behind it, and
/// the writer waits only for the reads already running, however many readers there are.
final class CommitLock {
    static let fileName = ".cabinet-commit"
    /// The turn lock's file (see the type's description).
    static let turnFileName = ".cabinet-commit-turn"

    private var descriptor: Int32
    /// The turn lock's file; -1 when a writer of an earlier version made the
    /// store's commit lock and none since made the turn file (a reader then takes the commit lock alone).
    private var turn: Int32
    private let exclusive: Bool
    /// The file's path, for messages.
    private let path: String
    /// How many calls of ``holding(whenTaken:_:)`` are running.
    private var depth = 0
    /// The writer's lock among its own threads: `flock` excludes other processes
    /// only (a second `flock` on the same open file succeeds at once), and a pool
    /// takes the commit lock on its writer's thread while its closing, on another
    /// thread, may take it as the writer lets go. Recursive, as the calls nest.
    private let inProcess = NSRecursiveLock()
    /// The writer's announcements of its commits to readers in other processes
    /// (``CommitAnnouncements``), made as each outermost hold ends.
    private(set) var announcer: CommitAnnouncer?

    private init(descriptor: Int32, turn: Int32, exclusive: Bool, path: String) {
        self.descriptor = descriptor
        self.turn = turn
        self.exclusive = exclusive
        self.path = path
    }

    /// The writer's lock: opens `.cabinet-commit` and `.cabinet-commit-turn` in
    /// the store directory open as `directory` (at `path`), creating them if
    /// they are missing. A link in their place is replaced by a file, never
    /// followed; anything else that is not a regular file is refused.
    static func writer(directory: Int32, path: String) throws -> CommitLock {
        let fd = try openOrCreate(fileName, in: directory, path: path)
        let turn: Int32
        do {
            turn = try openOrCreate(turnFileName, in: directory, path: path)
        } catch {
            closeDescriptor(fd)
            throw error
        }
        let lock = CommitLock(descriptor: fd, turn: turn, exclusive: true, path: path + "/" + fileName)
        lock.announcer = CommitAnnouncer(directory: directory)
        return lock
    }

    private static func openOrCreate(_ name: String, in directory: Int32, path: String) throws -> Int32 {
        let file = path + "/" + name
        var fd = openat(directory, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        if fd < 0 && errno == ELOOP { _ = unlinkat(directory, name, 0) }
        if fd < 0 && (errno == ENOENT || errno == ELOOP) {
            fd = openat(directory, name, O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        }
        guard fd >= 0 else { throw DirectoryFiles.failure("open", file) }
        guard isRegularFile(fd) else {
            closeDescriptor(fd)
            throw CabinetError.cannotAccessDirectory(path: path, reason: "\(file) is not a regular file; move it out of the store directory")
        }
        return fd
    }

    /// A reader's lock, if a writer has made the file; `nil` for a store no
    /// writer of this version has opened. The turn file is taken if it is there.
    static func reader(directory: Int32, path: String) -> CommitLock? {
        guard let fd = openExisting(fileName, in: directory) else { return nil }
        return CommitLock(descriptor: fd, turn: openExisting(turnFileName, in: directory) ?? -1, exclusive: false,
                          path: path + "/" + fileName)
    }

    private static func openExisting(_ name: String, in directory: Int32) -> Int32? {
        let fd = openat(directory, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        guard isRegularFile(fd) else {
            closeDescriptor(fd)
            return nil
        }
        return fd
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
        if exclusive { inProcess.lock() }
        defer { if exclusive { inProcess.unlock() } }
        if depth > 0 {
            depth += 1
            defer { depth -= 1 }
            return try body()
        }
        try takeTurn()
        while flock(descriptor, exclusive ? LOCK_EX : LOCK_SH) != 0 {
            if errno != EINTR {
                let failure = DirectoryFiles.failure(exclusive ? "lock for a commit" : "lock for reading", path)
                endTurn()
                throw failure
            }
        }
        endTurn()
        depth = 1
        defer {
            depth = 0
            // Before readers come in: one that hears of it then waits for this unlock.
            announcer?.announce()
            _ = flock(descriptor, LOCK_UN)
        }
        try whenTaken()
        return try body()
    }

    /// Takes the turn lock, exclusive, until the commit lock is held (see the type's description).
    private func takeTurn() throws {
        guard turn >= 0 else { return }
        while flock(turn, LOCK_EX) != 0 {
            if errno != EINTR { throw DirectoryFiles.failure("lock for a turn at", path + "-turn") }
        }
    }

    private func endTurn() {
        if turn >= 0 { _ = flock(turn, LOCK_UN) }
    }

    /// Closes the files (which releases the locks). Calling it twice does nothing.
    func close() {
        inProcess.lock()
        defer { inProcess.unlock() }
        if turn >= 0 { closeDescriptor(turn) }
        turn = -1
        announcer?.close()
        announcer = nil
        guard descriptor >= 0 else { return }
        closeDescriptor(descriptor)
        descriptor = -1
    }

    deinit {
        close()
    }
}
