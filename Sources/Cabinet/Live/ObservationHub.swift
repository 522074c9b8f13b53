import CabinetStorage
import Dispatch

/// One observation registered with a pool's ``ObservationHub``: how to run it,
/// and what its last run read. Its fields are the hub's state: read and written
/// only under the hub's lock (hence `@unchecked Sendable`).
final class LiveObservation: @unchecked Sendable {
    /// Runs the observation's block once, in a context that records into the
    /// recorder, and delivers what it computed; `false` once the observation ended
    /// (its block threw, or the pool is closed).
    typealias Evaluation = @Sendable (_ recorder: RegionRecorder, _ seen: @escaping @Sendable () -> Void) -> Bool

    let id: Int
    /// The table whose records the recorder hashes (a results observation's class); `nil`: none.
    let hashedTable: String?
    let evaluate: Evaluation
    /// Called once when the observation ends without an error of its own (cancelled or the pool closed).
    let finish: @Sendable () -> Void

    /// What the last finished run read; `nil` before the first one.
    var region: ReadRegion?
    /// The hub's commit count when the running (or last) run took its read lock:
    /// commits up to it are in what that run read.
    var seen: UInt64 = 0
    var isRunning = false
    /// A commit touched what the last run read: run again.
    var isDirty = false
    var isEnded = false
    /// Commits published while a run was going, for the run to test against what
    /// it read, once it knows (at most ``ObservationHub/missedLimit``, then it simply runs again).
    var missed: [(version: UInt64, changes: ChangedKeys)] = []

    init(id: Int, hashedTable: String?, evaluate: @escaping Evaluation, finish: @escaping @Sendable () -> Void) {
        self.id = id
        self.hashedTable = hashedTable
        self.evaluate = evaluate
        self.finish = finish
    }
}

/// A pool's live observations: which tables each read last, and, on every
/// commit, which of them must run again (see ``ReadRegion``). Runs go to a
/// concurrent queue of their own; an observation runs one at a time, and a
/// commit during its run makes it run once more, not once per commit: a
/// consumer slower than the commits gets the latest value, never a backlog.
///
/// The writer only tests regions and marks observations dirty: it never waits
/// for a run, so no observation can stall it.
final class ObservationHub: Sendable {
    /// Commits kept for one running observation before it simply runs again.
    static let missedLimit = 16

    private struct State {
        var observations: [Int: LiveObservation] = [:]
        /// Table name → the observations whose last run read it.
        var readers: [String: Set<Int>] = [:]
        /// Observations running now: every commit goes to their `missed`.
        var running: Set<Int> = []
        var nextID = 0
        /// Commits published: a run records it as what it has seen.
        var version: UInt64 = 0
        var isClosed = false
        /// Runs started, for tests that count them.
        var runs = 0
    }

    private let state = Locked(State())
    /// Below the pool's blocks (`.userInitiated`), and below the tasks that wait
    /// for them: on Linux a QoS is a global queue of its own, whose few threads
    /// take blocks in order, and on theirs a commit's caller was resumed only
    /// once every run the commit started had run (a thousand queries: seconds).
    private let queue = DispatchQueue(label: "Cabinet.StorePool.observe", qos: .utility, attributes: .concurrent)

    /// Whether any observation is registered: without one, a commit costs this check alone.
    var isEmpty: Bool { state.withLock { $0.observations.isEmpty } }

    /// How many runs have started since the pool opened (for tests).
    var runs: Int { state.withLock { $0.runs } }

    /// Observations registered now (for tests).
    var count: Int { state.withLock { $0.observations.count } }

    /// A new observation's ID, for its consumer to cancel it by (``cancel(_:)``) before it is registered.
    func reserveID() -> Int {
        state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
    }

    /// Registers observation `id` and runs it for its first value; if the pool
    /// is closed, calls `finish` instead. A consumer that went away before this
    /// call (``cancel(_:)`` found nothing) ends it at its first run, whose value
    /// its stream no longer takes.
    func register(id: Int, hashedTable: String?, evaluate: @escaping LiveObservation.Evaluation, finish: @escaping @Sendable () -> Void) {
        let observation: LiveObservation? = state.withLock { state in
            guard !state.isClosed else { return nil }
            let observation = LiveObservation(id: id, hashedTable: hashedTable, evaluate: evaluate, finish: finish)
            state.observations[id] = observation
            observation.isDirty = true
            return observation
        }
        guard let observation else { return finish() }
        schedule(observation)
    }

    /// Ends observation `id` (its consumer went away); a run going on finishes, unseen.
    func cancel(_ id: Int) {
        let ended: LiveObservation? = state.withLock { state in
            guard let observation = state.observations.removeValue(forKey: id) else { return nil }
            observation.isEnded = true
            forget(observation, in: &state)
            return observation
        }
        ended?.finish()
    }

    /// Ends every observation: the pool is closing.
    func close() {
        let ended = state.withLock { state in
            state.isClosed = true
            defer { state.observations = [:]; state.readers = [:]; state.running = [] }
            for observation in state.observations.values { observation.isEnded = true }
            return Array(state.observations.values)
        }
        for observation in ended { observation.finish() }
    }

    /// A commit was published: every observation whose last run read what it
    /// changed is marked to run again, and runs unless it is running now.
    func committed(_ changes: ChangedKeys) {
        let due: [LiveObservation] = state.withLock { state in
            state.version += 1
            guard !state.observations.isEmpty else { return [] }
            var touched = Set<Int>()
            if changes.isWholeStore {
                touched = Set(state.observations.keys)
            } else {
                for name in changes.tableNames {
                    guard let readers = state.readers[name], let keys = changes.keys(ofTable: name) else { continue }
                    for id in readers where !touched.contains(id) {
                        if state.observations[id]?.region?.part(ofTable: name)?.isTouched(by: keys) == true { touched.insert(id) }
                    }
                }
            }
            for id in state.running {
                guard let observation = state.observations[id] else { continue }
                if observation.missed.count < Self.missedLimit {
                    observation.missed.append((state.version, changes))
                } else {
                    observation.isDirty = true
                }
            }
            var due: [LiveObservation] = []
            for id in touched {
                guard let observation = state.observations[id] else { continue }
                observation.isDirty = true
                if !observation.isRunning { due.append(observation) }
            }
            return due
        }
        for observation in due { schedule(observation) }
    }

    /// Starts a run of `observation` on the hub's queue, unless one is going.
    private func schedule(_ observation: LiveObservation) {
        let start = state.withLock { state -> Bool in
            guard !observation.isEnded, !observation.isRunning, observation.isDirty else { return false }
            observation.isRunning = true
            observation.isDirty = false
            state.running.insert(observation.id)
            state.runs += 1
            return true
        }
        guard start else { return }
        queue.async { self.run(observation) }
    }

    private func run(_ observation: LiveObservation) {
        let recorder = RegionRecorder(hashingValuesOf: observation.hashedTable)
        // Called by the run while it holds the pool's read lock: no commit is being written then.
        let seen: @Sendable () -> Void = { [state] in
            state.withLock { state in observation.seen = state.version }
        }
        let goesOn = observation.evaluate(recorder, seen)
        let again: Bool = state.withLock { state in
            observation.isRunning = false
            state.running.remove(observation.id)
            guard goesOn, !observation.isEnded else {
                if !observation.isEnded { state.observations.removeValue(forKey: observation.id) }
                observation.isEnded = true
                forget(observation, in: &state)
                return false
            }
            let region = recorder.region
            for name in observation.region?.tableNames ?? [] where region.part(ofTable: name) == nil {
                state.readers[name]?.remove(observation.id)
            }
            for name in region.tableNames { state.readers[name, default: []].insert(observation.id) }
            observation.region = region
            for (version, changes) in observation.missed where version > observation.seen && region.isTouched(by: changes) {
                observation.isDirty = true
            }
            observation.missed = []
            return observation.isDirty
        }
        if again { schedule(observation) }
    }

    private func forget(_ observation: LiveObservation, in state: inout State) {
        state.running.remove(observation.id)
        for name in observation.region?.tableNames ?? [] { state.readers[name]?.remove(observation.id) }
        observation.missed = []
    }
}
