#if canImport(Glibc)
import Glibc
#endif

/// A plain mutex (a `pthread_mutex_t`): around a Redis backend's idle
/// connections, its subscriber's state, and a store's reserved row IDs.
/// A pthread mutex rather than `Synchronization.Mutex`: ThreadSanitizer sees
/// the order a pthread mutex gives, and not the one of a futex it cannot see
/// into, so `make tsan` checks what it guards instead of flagging it.
package final class PlainMutex: @unchecked Sendable {
    // Allocated once and never moved: a pthread mutex must keep its address.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    package init() {
        mutex.initialize(to: pthread_mutex_t())
        precondition(pthread_mutex_init(mutex, nil) == 0, "Cabinet: pthread_mutex_init failed")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    package func withLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

/// A value behind a ``PlainMutex``: the pool's bookkeeping (running blocks,
/// subscribers), the stores this process has open. Not `Synchronization.Mutex`,
/// for the reason ``PlainMutex`` gives: `make tsan` reported races that lock in
/// fact prevented.
package final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is only read and written inside `withLock`.
    private let mutex = PlainMutex()
    private var value: Value

    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the value, alone.
    package func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        try mutex.withLock { try body(&value) }
    }
}
