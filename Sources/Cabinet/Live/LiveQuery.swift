import CabinetStorage

/// The values of a live query (``StorePool/observe(_:)``): its value now, then
/// a new value after every commit that changes what the query read.
///
/// ```swift
/// let queen = pool.observe { store in
///     try store.fetch(Song.self, where: \.artist, equals: "Queen").map { SongRow(title: $0.title, seconds: $0.seconds) }
/// }
/// for try await rows in queen { print(rows.count) }
/// ```
/// - Each iteration (each `for try await`) is an observation of its own,
///   started when it starts and ended when it ends: by `break`, by the task's
///   cancellation, or by the pool's ``StorePool/close()``, which ends it
///   normally (the loop leaves, no error).
/// - Each value is computed on one committed state: whole saves, every class.
/// - Values come in commit order. One that waits to be read is replaced by
///   a newer one: a consumer slower than the commits gets the latest value,
///   not a backlog, and memory stays bounded however many commits it missed.
/// - If the block throws, the loop throws that error and the observation ends.
public struct LiveQuery<Value: Sendable>: AsyncSequence, Sendable {
    public typealias Element = Value

    let core: PoolCore
    /// Runs the query once in `store`, recording into the recorder.
    let evaluate: @Sendable (_ store: ObjectStore, _ recorder: RegionRecorder) throws -> Value
    /// The table whose records the recorder hashes (a results observation's class); `nil`: none.
    let hashedTable: String?
    /// Whether a run whose value equals the last run's delivers nothing (``removingDuplicates()``).
    var skipsRepeats: (@Sendable (Value, Value) -> Bool)?

    init(core: PoolCore, evaluate: @escaping @Sendable (ObjectStore, RegionRecorder) throws -> Value, hashedTable: String?) {
        self.core = core
        self.evaluate = evaluate
        self.hashedTable = hashedTable
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(base: ObservationStream.start(core: core, hashedTable: hashedTable, skipping: skipsRepeats, evaluate).makeAsyncIterator())
    }

    /// The same query, delivering a value only when it differs from the one
    /// before: a commit that changed what the block read, but not what it made of
    /// it (a property the rows leave out), delivers nothing.
    ///
    /// ```swift
    /// let titles = pool.observe { store in try store.fetch(Song.self, where: \.artist, equals: "Queen").map(\.title) }
    /// for try await list in titles.removingDuplicates() { print(list) }
    /// ```
    public func removingDuplicates() -> LiveQuery<Value> where Value: Equatable {
        var query = self
        query.skipsRepeats = { $0 == $1 }
        return query
    }

    /// Waits for the query's next value.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<Value, any Error>.Iterator

        /// The next value; `nil` once the observation ended (cancelled, or the pool closed).
        public mutating func next() async throws -> Value? {
            try await base.next()
        }
    }
}

/// Starts observations for ``LiveQuery`` and ``LiveResults``.
enum ObservationStream {
    /// Registers an observation with the pool's hub and returns the stream of
    /// its values: at most one waits to be read (the newest).
    static func start<Value: Sendable>(core: PoolCore, hashedTable: String?, skipping isRepeat: (@Sendable (Value, Value) -> Bool)?,
                                       _ evaluate: @escaping @Sendable (ObjectStore, RegionRecorder) throws -> Value) -> AsyncThrowingStream<Value, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Value.self, bufferingPolicy: .bufferingNewest(1))
        let last = isRepeat.map { _ in LastValue<Value>() }
        let hub = core.hub
        let id = hub.reserveID()
        continuation.onTermination = { _ in hub.cancel(id) }
        hub.register(id: id, hashedTable: hashedTable, evaluate: { recorder, seen in
            do {
                try core.admit()
            } catch {
                continuation.finish()   // the pool closed: the loop ends
                return false
            }
            defer { core.leave() }
            do {
                let value = try core.runReadBlock({ store in try evaluate(store, recorder) }, recorder: recorder, holdingLock: seen)
                if let isRepeat, let last {
                    defer { last.value = value }
                    if let previous = last.value, isRepeat(previous, value) { return true }
                }
                // Its consumer gone (before it was registered): the observation ends.
                if case .terminated = continuation.yield(value) { return false }
                return true
            } catch {
                continuation.finish(throwing: error)
                return false
            }
        }, finish: { continuation.finish() })
        return stream
    }
}

/// The last value an observation computed, for ``LiveQuery/removingDuplicates()``:
/// its runs are one at a time (the hub's lock orders them), hence `@unchecked Sendable`.
private final class LastValue<Value>: @unchecked Sendable {
    var value: Value?
}
