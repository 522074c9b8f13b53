import CabinetStorage

/// The shared state of a ``StorePool``: the lock its blocks take, the template
/// their contexts are made from, which blocks are running, and who listens
/// for changes. `StorePool` is its public face.
final class PoolCore: Sendable {
    let template: ContextTemplate
    let lock = ReadWriteLock()
    /// Whether read blocks run side by side and beside the writer's block (the
    /// backend's reads are thread-safe), or every block holds the lock exclusively.
    let concurrent: Bool
    /// The write blocks' commit group; the writer queue's alone.
    let group = WriteGroup()
    /// The pool's live observations (``StorePool/observe(_:)``).
    let hub = ObservationHub()
    private let state = Locked(State())

    private struct State {
        var isClosed = false
        /// Blocks called and not finished: ``StorePool/close()`` waits for them.
        var running = 0
        /// Set once the root store's closing has begun (by whoever saw the last block leave).
        var shuttingDown = false
        var isShutDown = false
        var closeError: CabinetError?
        var closeWaiters: [CheckedContinuation<Void, Never>] = []
        var subscribers: [Int: AsyncStream<StorePool.Change>.Continuation] = [:]
        var nextSubscriber = 0
        var sequence: UInt64 = 0
        /// Write blocks called whose block has not started: while there are, the
        /// block that ends leaves the commit to them (group commit, see `WriteGroup`).
        var writersArriving = 0

        /// Whether the caller is the one to close the store now: the pool is closed,
        /// no block runs, and no one has begun closing it.
        mutating func takeShutdown() -> Bool {
            guard isClosed, running == 0, !shuttingDown else { return false }
            shuttingDown = true
            return true
        }
    }

    init(template: ContextTemplate, concurrent: Bool) {
        self.template = template
        self.concurrent = concurrent
    }

    var path: String { template.backend.path }

    // MARK: Contexts

    /// A fresh store for one block, with objects of its own; a write block's
    /// saves go to the commit group's staging.
    func makeContext(writes: Bool, recorder: RegionRecorder? = nil) throws -> ObjectStore {
        if writes {
            try finishPendingJournal()
            try settleOthersSaves()
        }
        let link = ContextLink(pool: self, group: writes ? group : nil, holdsLock: !concurrent, recorder: recorder)
        return try ObjectStore(context: template, link: link)
    }

    /// Finishes a save left in the journal (a commit that failed after it was
    /// decided, or an upgrade in a block whose journal was not removed) before a
    /// write block reads anything: a block that read half-applied tables and staged
    /// over them would undo part of that save when its group commits. Holds the
    /// lock exclusively, as a commit does, so no reader sees the tables mid-replay.
    private func finishPendingJournal() throws {
        guard journalAwaitsReplay else { return }
        func replay() throws { try template.root.recoverInterruptedSave() }
        // Without concurrent reads the block (this call included) already holds it.
        if concurrent { try writingExclusively(replay) } else { try replay() }
    }

    /// Whether a commit is decided and not applied in full: the backend knows.
    var journalAwaitsReplay: Bool { template.root.backend.hasUnfinishedCommit }

    // MARK: Write blocks, group commit (on the writer queue)

    /// A write block was called: `enqueue` hands it to the writer queue, where
    /// it will run after the ones before it. Counted and queued in one step, so
    /// that ``writersArriving`` counts only blocks whose place in line is taken
    /// (a test that waits for it calls blocks in a known order).
    func writerArriving(enqueue: () -> Void) {
        state.withLock { state in
            state.writersArriving += 1
            enqueue()
        }
    }

    /// Write blocks called that have not started (for tests that make a group).
    var writersArriving: Int { state.withLock { $0.writersArriving } }

    /// A write block starts: it joins the group.
    func writerStarting(durability: CommitDurability) {
        state.withLock { $0.writersArriving -= 1 }
        group.beginBlock(durability: durability)
    }

    /// A write block ended: its ticket (holding `waiter`), whether that waits
    /// for the group's commit, and the failure a commit inside the block left.
    /// Nothing is committed yet: the caller records the block's outcome, then
    /// calls ``commitIfLast()``.
    func writerEnded(waiter: CheckedContinuation<Void, any Error>) -> (ticket: CommitTicket, waitsForCommit: Bool, failure: (any Error)?) {
        group.endBlock(waiter: waiter)
    }

    /// Commits the group if no other write block is about to join it, or it is full.
    func commitIfLast() {
        if group.hasMembers && (group.isFull || state.withLock({ $0.writersArriving }) == 0) {
            // The members learn a failure from their tickets.
            try? commitGroup(holdingLock: !concurrent)
        }
    }

    /// Commits the group's staging now, under the pool's lock exclusively
    /// (taken here unless the caller holds it).
    func commitGroup(holdingLock: Bool) throws {
        if holdingLock { return try group.commit(self) }
        try writingExclusively { try group.commit(self) }
    }

    /// Flushes every commit made so far (an empty batch committed at
    /// ``/CabinetStorage/CommitDurability/flushed``, which flushes what earlier
    /// commits left unflushed), under the pool's lock exclusively as a group's
    /// commit is (taken here unless the caller holds it). For a flushed block
    /// that waits for no commit: its saves, if any, went out in a commit of its
    /// group inside it, or it wrote the tables directly (an upgrade, a compaction).
    func flushCommitted(holdingLock: Bool) throws {
        let flush = {
            var batch = WriteBatch()
            batch.durability = .flushed
            let root = self.template.root
            try root.changingTables { try root.commitToBackend(batch) }
        }
        if holdingLock { return try flush() }
        try writingExclusively(flush)
    }

    /// Runs `body`, which writes the tables, holding the pool's lock exclusively,
    /// and the store's commit lock (``ObjectStore/changingTables(_:)``) taken first.
    ///
    /// Why in that order: the commit lock is what readers in other processes
    /// hold shared (`cabinet backup`, a read-only store, anyone who can open
    /// `.cabinet-commit`), for as long as they like. Waited for while holding
    /// the pool's lock, which prefers writers, it stalled every read block
    /// queued behind the write; waited for first, it delays only the writer,
    /// and the pool's read blocks run meanwhile. Taken inside, it is re-entrant.
    func writingExclusively<R>(_ body: () throws -> R) throws -> R {
        try template.root.changingTables { try lock.writing(body) }
    }

    // MARK: Running blocks, closing

    /// Counts a block in, unless the pool is closed.
    func admit() throws {
        try state.withLock { state in
            if state.isClosed { throw CabinetError.storeClosed(path: template.backend.path) }
            state.running += 1
        }
    }

    /// Counts a block out; the last one out of a closing pool closes the store.
    func leave() {
        let last = state.withLock { state in
            state.running -= 1
            return state.takeShutdown()
        }
        if last { shutDown() }
    }

    /// Refuses new blocks, waits for the running ones, then closes the store.
    func close() async throws {
        let now = state.withLock { state in
            state.isClosed = true
            return state.takeShutdown()
        }
        // Live observations end now; a run going on finishes with the blocks.
        hub.close()
        if now { shutDown() }
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if !state.isShutDown { state.closeWaiters.append(waiter) }
                return state.isShutDown
            }
            if done { waiter.resume() }
        }
        if let error = state.withLock({ $0.closeError }) { throw error }
    }

    /// Finishes a save left in its journal, closes the root store (and with it
    /// the backend), ends every change stream and wakes the closers.
    private func shutDown() {
        var failure: CabinetError?
        if journalAwaitsReplay {
            do { try template.root.recoverInterruptedSave() } catch { failure = error as? CabinetError }
        }
        template.root.close()
        let (waiters, subscribers) = state.withLock { state in
            state.isShutDown = true
            state.closeError = failure
            defer { state.closeWaiters = []; state.subscribers = [:] }
            return (state.closeWaiters, Array(state.subscribers.values))
        }
        for subscriber in subscribers { subscriber.finish() }
        for waiter in waiters { waiter.resume() }
    }

    // MARK: Changes

    /// A new stream of the changes committed from now on; finished at once if the pool is closed.
    func subscribe() -> AsyncStream<StorePool.Change> {
        let (stream, continuation) = AsyncStream.makeStream(of: StorePool.Change.self)
        let id = state.withLock { state in
            state.nextSubscriber += 1
            return state.nextSubscriber
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        let open = state.withLock { state in
            if !state.isShutDown { state.subscribers[id] = continuation }
            return !state.isShutDown
        }
        if !open { continuation.finish() }
        return stream
    }

    /// Numbers a committed save and hands it to every subscriber. Called by the
    /// write block's thread, one save at a time, so the numbers follow the commits,
    /// and by the backend's thread for other processes' saves: yielded under the
    /// lock, so subscribers get the numbers in order either way.
    func publish(_ summary: SaveSummary, fromAnotherProcess: Bool = false) {
        if !summary.isEmpty {
            state.withLock { state in
                state.sequence += 1
                var change = StorePool.Change(sequence: state.sequence, classes: summary.classes, namedBuffers: summary.namedBuffers)
                change.isFromAnotherProcess = fromAnotherProcess
                for subscriber in state.subscribers.values { subscriber.yield(change) }
            }
        }
        // Observations only test it: a run of theirs goes to their own queue.
        if !hub.isEmpty, let changes = summary.changedKeys { hub.committed(changes) }
    }

    /// Publishes the saves of other processes, on a backend several processes
    /// write (``OtherWritersBackend``), as the backend hears of them.
    func publishOthersSaves() {
        let classes = Set(template.classes.map(\.name))
        // A closure's weak reference gives the core a side table, which LeakSanitizer
        // reports when the core is still alive at exit (it can't follow the core's tagged
        // pointer to it): the closure is made only where the backend keeps it.
        if let watched = template.backend as? any CommitWatchingBackend, template.backend.services.isReadOnly {
            // A read-only pool over a store a writer in another process changes.
            watched.watchCommits { [weak self] save in self?.publish(SaveSummary(othersSave: save, classes: classes), fromAnotherProcess: true) }
        }
        guard let shared = template.backend as? any OtherWritersBackend else { return }
        shared.observeOthersSaves { [weak self] save in
            // A save of no row and no named buffer (a reservation of row IDs in a
            // metadata row) is not numbered as a change; observations still test it.
            self?.publish(SaveSummary(othersSave: save, classes: classes), fromAnotherProcess: true)
        }
    }

    /// Before a group's first write block reads anything: other processes'
    /// saves so far are taken in (the block reads afresh, so none of what they
    /// changed is stale in it), so that its save conflicts only with saves after them.
    func settleOthersSaves() throws {
        guard !group.hasMembers, let shared = template.backend as? any OtherWritersBackend, shared.othersHaveSaved else { return }
        let saves = try shared.takeOthersSaves()
        // The store replaced: its metadata rows may have gone back below the pool's reserved rows.
        if saves.contains(where: \.wholeStore) { template.root.rowReservations?.discardAll() }
        shared.keepConflicting([:])
    }
}
