#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The lock that keeps a store directory to one writer at a time.
///
/// A `.cabinet-lock` file in the directory is held with `flock` for as long as
/// the store is open, and holds the owner's process ID so a second opener can
/// say who has it. `flock` locks belong to the open file, so a second
/// `ObjectStore` on the same directory in the same process is refused too.
/// The kernel drops the lock when the process dies, so a crash never leaves a
/// store locked.
final class StoreLock {
    static let fileName = ".cabinet-lock"

    private var descriptor: Int32
    private let shared: Bool

    /// Takes the lock on `directory`, or throws ``CabinetError/storeLocked(path:pid:)`` at once.
    /// Takes the lock: exclusive for a writer, shared for a reader (readers
    /// exclude writers, not each other).
    init(directory: String, shared: Bool = false) throws {
        self.shared = shared
        let path = directory + "/" + StoreLock.fileName
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw CabinetError.cannotAccessDirectory(path: directory, reason: "cannot create \(StoreLock.fileName): \(String(cString: strerror(errno)))")
        }
        guard flock(fd, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) == 0 else {
            let owner = StoreLock.readOwner(fd)
            close(fd)
            throw CabinetError.storeLocked(path: directory, pid: owner)
        }
        descriptor = fd
        if shared { return }     // only the writer records its process ID
        let text = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    }

    private static func readOwner(_ fd: Int32) -> Int32? {
        var bytes = [UInt8](repeating: 0, count: 32)
        let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        let digits = bytes[0..<count].prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        return Int32(String(decoding: digits, as: UTF8.self))
    }

    /// Releases the lock. Calling it twice does nothing.
    func release() {
        guard descriptor >= 0 else { return }
        if !shared { _ = ftruncate(descriptor, 0) }   // no stale process ID for the next one to report
        _ = flock(descriptor, LOCK_UN)
        close(descriptor)
        descriptor = -1
    }

    deinit {
        release()
    }
}
