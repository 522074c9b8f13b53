import Foundation

/// The library of the observation workloads (issue 38's speed targets), the
/// same for every engine.
///
/// Song `i` of `n = liveSongs` (row `i + 2` in Cabinet, `id = i + 1` in SQLite)
/// is titled "Live Song i" and has ``IndexedSpeedData``'s seconds: `0..<n/10`,
/// ten songs each, spread over the file. The updating commit retitles every
/// song whose seconds are a multiple of 10: 10,000 of 100,000, and every range
/// of 100 values (``IndexedSpeedData/querySeconds(_:songs:)``, ~1,000 songs)
/// holds 100 of them, so every observed result changes. The observed objects
/// are `observations` of the songs it retitles. `albums` albums are the other
/// class, which `observe-idle` commits while the songs are observed.
public enum LiveSpeedData {
    /// Albums in the library: `observe-idle` retitles them all in one commit.
    public static let albums = 1_000
    /// The commits `observe-idle` times with and without observations (the report gives the medians).
    public static let idleCommits = 5
    /// How long a run waits for its deliveries before it gives up (a bug, never a slow run).
    static let patience: DispatchTimeInterval = .seconds(300)

    public static func title(_ i: Int) -> String { "Live Song \(i)" }
    /// The title a song gets in plain commit `round` (1, 2), before the observations start.
    public static func warmTitle(_ i: Int, round: Int) -> String { "Warm Song \(i) take \(round)" }
    /// The title the observed commit gives.
    public static func updatedTitle(_ i: Int) -> String { "Updated Song \(i)" }
    public static func albumTitle(_ a: Int, round: Int) -> String { "Album \(a) take \(round)" }

    public static func seconds(_ i: Int, sizes: Sizes) -> UInt32 {
        IndexedSpeedData.seconds(i, of: sizes.liveSongs)
    }

    /// The songs the commits retitle: those whose seconds are a multiple of 10.
    public static func updatedSongs(_ sizes: Sizes) -> [Int] {
        (0..<sizes.liveSongs).filter { seconds($0, sizes: sizes) % 10 == 0 }
    }

    /// The songs `observe-objects` observes: `observations` of the updated songs, evenly spread.
    public static func observedSongs(_ sizes: Sizes) -> [Int] {
        let updated = updatedSongs(sizes)
        let count = min(sizes.observations, updated.count)
        return (0..<count).map { updated[$0 * updated.count / count] }
    }

    /// The seconds query `q` of `observe-queries` observes.
    public static func queryRange(_ q: Int, sizes: Sizes) -> ClosedRange<UInt32> {
        IndexedSpeedData.querySeconds(q, songs: sizes.liveSongs)
    }

    /// The observations of `observe-idle`: ten times those of the other workloads.
    public static func idleObservations(_ sizes: Sizes) -> Int { 10 * sizes.observations }

    /// The song `observe-idle`'s observation `k` observes.
    public static func idleSong(_ k: Int, sizes: Sizes) -> Int { k % sizes.liveSongs }

    /// What a song found by an observation adds to the checksum.
    public static func checksum(title: String, seconds: UInt32) -> UInt64 {
        stableHash(title) &+ UInt64(seconds)
    }
}

/// The values observations deliver, counted as they arrive on any thread: each
/// observation's first value (its initial one), then its first value that shows
/// the observed commit (the "new" one), with the time the last of those came.
final class Deliveries: @unchecked Sendable {
    private let lock = NSLock()
    private var initial: [Bool]
    private var updated: [Bool]
    private var initialCount = 0
    private var updatedCount = 0
    private var initialChecksum: UInt64 = 0
    private var updatedChecksum: UInt64 = 0
    /// When the last new value arrived (`DispatchTime` nanoseconds).
    private var lastUpdate: UInt64 = 0
    private var failure: (any Error)?
    private let allInitial = DispatchSemaphore(value: 0)
    private let allUpdated = DispatchSemaphore(value: 0)

    init(count: Int) {
        initial = Array(repeating: false, count: count)
        updated = Array(repeating: false, count: count)
    }

    /// Observation `index` delivered a value: `isNew` if it shows the observed
    /// commit; `checksum` is what the value adds to its phase's checksum.
    func arrived(_ index: Int, isNew: Bool, checksum: UInt64) {
        let now = DispatchTime.now().uptimeNanoseconds
        lock.withLock {
            if !initial[index] {
                initial[index] = true
                initialChecksum &+= checksum
                initialCount += 1
                if initialCount == initial.count { allInitial.signal() }
            } else if isNew && !updated[index] {
                updated[index] = true
                updatedChecksum &+= checksum
                updatedCount += 1
                lastUpdate = now
                if updatedCount == updated.count { allUpdated.signal() }
            }
        }
    }

    /// An observation ended with an error: the waits give up.
    func failed(_ error: any Error) {
        lock.withLock { failure = failure ?? error }
        allInitial.signal()
        allUpdated.signal()
    }

    /// Waits until every observation delivered its initial value; returns their checksum.
    func waitForInitialValues() throws -> UInt64 {
        try wait(allInitial, "initial values")
        return lock.withLock { initialChecksum }
    }

    /// Waits until every observation delivered its new value; returns their
    /// checksum and when the last of them arrived.
    func waitForNewValues() throws -> (checksum: UInt64, last: UInt64) {
        try wait(allUpdated, "new values")
        return lock.withLock { (updatedChecksum, lastUpdate) }
    }

    private func wait(_ semaphore: DispatchSemaphore, _ what: String) throws {
        let timedOut = semaphore.wait(timeout: .now() + LiveSpeedData.patience) == .timedOut
        if let failure = lock.withLock({ failure }) { throw failure }
        if timedOut { throw SpeedTestError("the observations did not deliver their \(what) in time") }
    }
}

/// Runs `body` in a task of high priority (ahead of the observations' consumers)
/// and waits for it: the engines' runs are synchronous, the pools' APIs async.
func waitFor<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task(priority: .high) {
        do { box.set(.success(try await body())) } catch { box.set(.failure(error)) }
        done.signal()
    }
    done.wait()
    return try box.get()
}

private final class ResultBox<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Swift.Result<T, any Error>?

    func set(_ value: Swift.Result<T, any Error>) { lock.withLock { result = value } }

    func get() throws -> T {
        guard let result = lock.withLock({ result }) else { throw SpeedTestError("a task ended without a result") }
        return try result.get()
    }
}

/// When a commit was called and when it returned (`DispatchTime` nanoseconds).
struct CommitTime: Sendable {
    let start: UInt64
    let end: UInt64
    var seconds: Double { SpeedTestKit.seconds(since: start, until: end) }

    /// Times `body`, the commit.
    static func of(_ body: () throws -> Void) rethrows -> CommitTime {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return CommitTime(start: start, end: DispatchTime.now().uptimeNanoseconds)
    }

    /// Times `body`, an async commit.
    static func of(_ body: () async throws -> Void) async rethrows -> CommitTime {
        let start = DispatchTime.now().uptimeNanoseconds
        try await body()
        return CommitTime(start: start, end: DispatchTime.now().uptimeNanoseconds)
    }
}

extension QueryTiming {
    /// The timing of `count` deliveries, the last at `last`, of `commit`, whose
    /// plain run (no observations) took `plain`: what observing added to the
    /// commit's time, plus the wait from its return until the last delivery.
    /// (An engine may deliver inside the commit, before it returns; the two
    /// parts are clamped apart, so that a commit faster than its plain run,
    /// noise, takes nothing off the wait.)
    static func deliveries(_ count: Int, of commit: CommitTime, last: UInt64, plain: CommitTime) -> QueryTiming {
        let afterReturn = SpeedTestKit.seconds(since: commit.end, until: last)
        return QueryTiming(count: count, seconds: max(0, commit.seconds - plain.seconds) + afterReturn,
                           commitSeconds: commit.seconds, plainCommitSeconds: plain.seconds, afterReturnSeconds: afterReturn)
    }

    /// The timing of `observe-idle`: the median commit with observations against the median without.
    static func idle(observed: [CommitTime], plain: [CommitTime]) -> QueryTiming {
        let (commit, plainCommit) = (median(observed.map(\.seconds)), median(plain.map(\.seconds)))
        return QueryTiming(count: 1, seconds: max(0, commit - plainCommit), commitSeconds: commit, plainCommitSeconds: plainCommit)
    }
}

/// Seconds since `start` (`DispatchTime` nanoseconds).
func seconds(since start: UInt64, until end: UInt64 = DispatchTime.now().uptimeNanoseconds) -> Double {
    Double(end >= start ? end - start : 0) / 1e9
}

/// Consumes `values` in a task of its own, telling `deliveries` what each
/// value is (`judge`: whether it shows the observed commit, and its checksum).
func consume<Values: AsyncSequence & Sendable>(_ values: Values, as index: Int, into deliveries: Deliveries,
                                               judge: @escaping @Sendable (Values.Element) -> (isNew: Bool, checksum: UInt64)) -> Task<Void, Never> {
    Task {
        do {
            for try await value in values {
                let (isNew, checksum) = judge(value)
                deliveries.arrived(index, isNew: isNew, checksum: checksum)
            }
        } catch is CancellationError {
        } catch {
            deliveries.failed(error)
        }
    }
}
