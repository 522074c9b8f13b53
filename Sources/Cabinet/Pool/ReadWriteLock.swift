#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A reader-writer lock (a `pthread_rwlock_t`) that prefers writers: once a
/// writer waits, new readers wait behind it, so a steady stream of read blocks
/// cannot starve a save. It is not recursive: a thread must not take it again
/// while it holds it (a pool's blocks cannot: they are not `async`).
final class ReadWriteLock: @unchecked Sendable {
    // Allocated once and never moved: a pthread lock must keep its address.
    private let lock = UnsafeMutablePointer<pthread_rwlock_t>.allocate(capacity: 1)

    init() {
        var attributes = pthread_rwlockattr_t()
        pthread_rwlockattr_init(&attributes)
        #if canImport(Glibc)
        pthread_rwlockattr_setkind_np(&attributes, Int32(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP))
        #endif
        lock.initialize(to: pthread_rwlock_t())
        let status = pthread_rwlock_init(lock, &attributes)
        pthread_rwlockattr_destroy(&attributes)
        precondition(status == 0, "Cabinet: pthread_rwlock_init failed (\(status))")
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    /// Runs `body` holding the lock shared: alongside other readers, never alongside a writer.
    func reading<R>(_ body: () throws -> R) rethrows -> R {
        let status = pthread_rwlock_rdlock(lock)
        precondition(status == 0, "Cabinet: pthread_rwlock_rdlock failed (\(status))")
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }

    /// Runs `body` holding the lock exclusively: once every reader has left.
    func writing<R>(_ body: () throws -> R) rethrows -> R {
        let status = pthread_rwlock_wrlock(lock)
        precondition(status == 0, "Cabinet: pthread_rwlock_wrlock failed (\(status))")
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }
}
