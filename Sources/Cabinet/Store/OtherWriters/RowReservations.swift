import CabinetStorage
import Synchronization

/// Rows this process may hand out to inserts, per class, on a backend several
/// processes write at once (``OtherWritersBackend``: Redis). Each range was
/// reserved by raising the class's metadata row (its last row ID) on the
/// server by compare-and-set (``ObjectStore/reservedRowID(for:)``), so it is
/// this process's alone: processes inserting into one class at the same
/// moment never take the same row, and, the metadata row being raised already,
/// their saves do not write it, so neither save conflicts with the other.
///
/// One per open of the backend: a ``StorePool``'s contexts share their root
/// store's, so a pool's write blocks take their rows from one range. Guarded by
/// a mutex, as a read block could insert (its save is then refused) on a
/// thread beside the writer's.
final class RowReservations: @unchecked Sendable {
    // @unchecked: every variable is read and written under `mutex`; the backend
    // is one several processes write at once, so its calls are thread-safe.
    private let mutex = PlainMutex()
    /// Where ranges are reserved.
    let backend: any OtherWritersBackend
    /// Each class's range (looked up once per class entry, kept there).
    private var ranges: [String: ClassRowRange] = [:]
    /// How many rows each class's next reservation asks for.
    private var sizes: [String: UInt32] = [:]
    /// Classes whose last reservation failed: not tried again until the next
    /// save, so that inserts while the server is unreachable do not each wait
    /// for a connection (and log) before taking the next row the store knows.
    private var suspended: Set<String> = []

    /// The first reservation of a class in an open asks for this many rows, and
    /// each next one for twice as many as the last, up to ``largestSize``: an
    /// open that inserts a few objects leaves a gap of a few rows when it ends,
    /// one that inserts a million makes about 250 reservations.
    static let firstSize: UInt32 = 16
    static let largestSize: UInt32 = 4096

    init(backend: any OtherWritersBackend) {
        self.backend = backend
    }

    /// The range of class `name`, the same object for every caller.
    func range(for name: String) -> ClassRowRange {
        mutex.withLock {
            if let range = ranges[name] { return range }
            let range = ClassRowRange()
            ranges[name] = range
            return range
        }
    }

    /// How many rows to reserve next for `name` (and the one after, twice that).
    func nextSize(_ name: String) -> UInt32 {
        mutex.withLock {
            let size = sizes[name] ?? RowReservations.firstSize
            sizes[name] = min(size * 2, RowReservations.largestSize)
            return size
        }
    }

    /// Whether `name` may try a reservation (none failed since the last save).
    func mayReserve(_ name: String) -> Bool {
        mutex.withLock { !suspended.contains(name) }
    }

    /// After a failed reservation: none for `name` until ``resume()``.
    func suspend(_ name: String) {
        mutex.withLock { _ = suspended.insert(name) }
    }

    /// At a save: reservations may be tried again.
    func resume() {
        mutex.withLock { if !suspended.isEmpty { suspended = [] } }
    }

    /// Forgets every range: the store was replaced (a restore), and its
    /// metadata rows went back, so rows of these ranges may be handed out again
    /// by others' reservations after it.
    func discardAll() {
        mutex.withLock { for range in ranges.values { range.discard() } }
    }
}

/// The rows of one class's range not handed out yet, taken by every insert:
/// one atomic word (the next row in the high half, the last in the low; 0 when
/// spent, as no row is 0), so taking a row costs a compare-and-swap, not a lock.
final class ClassRowRange: Sendable {
    private let packed = Atomic<UInt64>(0)

    /// The next row, or `nil` when the range is spent.
    @inline(__always)
    func take() -> UInt32? {
        var current = packed.load(ordering: .relaxed)
        while true {
            let next = UInt32(truncatingIfNeeded: current >> 32), end = UInt32(truncatingIfNeeded: current)
            guard next != 0, next <= end else { return nil }
            let rest: UInt64 = next == end ? 0 : UInt64(next + 1) << 32 | UInt64(end)
            let (exchanged, original) = packed.compareExchange(expected: current, desired: rest, ordering: .relaxed)
            if exchanged { return next }
            current = original
        }
    }

    /// A range just reserved (what was left of the last is a gap).
    func set(_ range: ClosedRange<UInt32>) {
        precondition(range.lowerBound > 0, "Cabinet: row 0 is never handed out")
        packed.store(UInt64(range.lowerBound) << 32 | UInt64(range.upperBound), ordering: .relaxed)
    }

    func discard() {
        packed.store(0, ordering: .relaxed)
    }
}
