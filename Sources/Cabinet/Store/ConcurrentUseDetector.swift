import Foundation
import Synchronization

/// Catches a store used from two threads at once, which would otherwise corrupt
/// the heap: the store's bookkeeping is unsynchronized by design (and its hot
/// properties skip Swift's exclusivity checks), because a store belongs to one
/// thread or actor at a time.
///
/// Each public operation enters on the way in and leaves on the way out. The
/// first thread in becomes the owner until it leaves; the owner may re-enter
/// (an `enumerate` body that fetches, a `read(from:)` that loads a fault); any
/// other thread arriving meanwhile stops the program with a message naming the
/// misuse. Handing a store from one thread to another between operations (as
/// an actor's executor does) is fine. The cost is a thread ID read and one
/// atomic compare-and-swap per operation, none per object in a fetch or save.
final class ConcurrentUseDetector: @unchecked Sendable {
    /// The thread inside an operation (its `pthread_self`), or 0.
    private let owner = Atomic<UInt>(0)
    /// How deep the owner is nested; only the owner touches it.
    @exclusivity(unchecked) private var depth = 0
    let path: String

    init(path: String) {
        self.path = path
    }

    @inline(__always)
    func enter(_ operation: StaticString) {
        let me = UInt(bitPattern: Int(bitPattern: pthread_self()))
        let (entered, inside) = owner.compareExchange(expected: 0, desired: me, ordering: .acquiring)
        if _fastPath(entered) {
            depth = 1
        } else if inside == me {
            depth &+= 1
        } else {
            twoThreads(operation)
        }
    }

    /// Enters unless this thread is inside an operation already, for work done on
    /// behalf of something that may have crossed threads (a kept buffer's
    /// references); `true` if it entered, and must ``leave()``. Reading a
    /// reference from `read(from:)`, inside a fetch, then costs a thread ID read
    /// and a plain load: only this thread ever stores its own ID in `owner`.
    @inline(__always)
    func enterIfOutside(_ operation: StaticString) -> Bool {
        let me = UInt(bitPattern: Int(bitPattern: pthread_self()))
        if _fastPath(owner.load(ordering: .relaxed) == me) { return false }
        enter(operation)
        return true
    }

    private func twoThreads(_ operation: StaticString) -> Never {
        fatalError("Cabinet: the store '\(path)' was used from two threads at once (\(operation) while another thread was inside the store). An ObjectStore and its objects belong to one thread or actor at a time; for several threads, open a StorePool and use a context per block (pool.read { store in … }, pool.write { store in … }).")
    }

    /// Enters an operation that must not run inside another one of the same
    /// store on this thread (close() from an enumerate body or a read(from:)
    /// would free what the outer operation is using).
    func enterAlone(_ operation: StaticString) {
        enter(operation)
        if depth > 1 {
            fatalError("Cabinet: \(operation) was called from inside another call on the store '\(path)' (an enumerate(_:_:) body, a read(from:) or a write(to:)), which is still using what it would free.")
        }
    }

    @inline(__always)
    func leave() {
        depth &-= 1
        if depth == 0 { owner.store(0, ordering: .releasing) }
    }
}

extension ObjectStore {
    /// Runs `body` as one operation of this store (see ``ConcurrentUseDetector``).
    @inline(__always)
    func exclusively<R>(_ operation: StaticString, _ body: () throws -> R) rethrows -> R {
        useDetector.enter(operation)
        defer { useDetector.leave() }
        return try body()
    }

    /// Stops the program for a change made while `save()` writes (from a
    /// `write(to:)`): the save would mark it saved without writing it.
    /// `fatalError`, not `precondition`: optimized builds keep the message.
    func changeDuringSave(_ call: String) -> Never {
        fatalError("Cabinet: \(call) during save() of the store '\(path)' (from a write(to:)?); the change would be marked saved without being written. Change objects before or after save().")
    }
}
