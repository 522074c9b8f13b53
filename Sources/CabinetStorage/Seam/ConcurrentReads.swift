/// A backend that can say whether its tables may be read from several threads
/// at once, which `StorePool` asks before it lets its read blocks (and its
/// writer's block) run side by side.
///
/// When ``allowsConcurrentReads`` is `true`, the backend promises that
/// ``StorageTable/withValue(forKey:_:)``, ``StorageTable/forEach(_:)``,
/// ``StorageTable/recordCount``, ``StorageTable/byteCount``, and
/// ``StorageBackend/openTable(named:)``, ``StorageBackend/hasTable(named:)`` and
/// ``StorageBackend/tableNames()`` for tables already open, may run on any
/// number of threads at once, as long as no thread writes meanwhile (the pool
/// writes only while no one reads). A backend that does not conform, or says
/// `false`, gets a pool that runs its blocks one at a time.
///
/// A backend written outside Cabinet opts in by conforming:
///
/// ```swift
/// extension MyBackend: ConcurrentReadingBackend {
///     // My tables' reads take no lock and change no shared state.
///     public var allowsConcurrentReads: Bool { true }
/// }
/// let pool = try StorePool(backend: MyBackend(), classes: [Note.self])   // reads run side by side
/// ```
///
/// Say `true` only when it holds: two threads reading a table that is not
/// thread-safe corrupt memory, and the pool can't check it.
public protocol ConcurrentReadingBackend: StorageBackend {
    /// Whether the tables may be read from several threads at once (see the protocol).
    var allowsConcurrentReads: Bool { get }
}
