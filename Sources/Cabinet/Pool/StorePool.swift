import CabinetStorage
import Logging

/// A store shared by a whole program (a service's request handlers, several
/// tasks): `Sendable`, with blocks that each get a store of their own.
///
/// ```swift
/// let pool = try StorePool(path: "/var/lib/notes", classes: [Note.self, Notebook.self])
/// let id: UInt32 = try await pool.write { store in
///     let note = Note(); note.title = "Hello"
///     store.insert(note)
///     return note.rowID
/// }
/// let titles: [String] = try await pool.read { store in
///     try store.fetchAll(Note.self).map(\.title)
/// }
/// try await pool.close()
/// ```
///
/// - A block's `store` is a context: an ``ObjectStore`` of its own over the
///   pool's files, made for the block and closed after it, with its own live
///   objects (one instance per row within the block, as in any store). Objects
///   never leave a block: a block returns `Sendable` values (row IDs, strings,
///   structs you make from the objects).
/// - ``read(_:)`` blocks run side by side, and beside the running write block;
///   each sees whole saves only, across every class, and the same saved state
///   from its start to its end. A read block cannot change the store.
/// - ``write(_:)`` blocks run one at a time, in the order they were called; the
///   store is saved when the block returns. A block that throws saves nothing
///   (what it inserted, changed or deleted is dropped with its context), and
///   since no context outlives its block, no block ever sees stale objects.
/// - ``changes`` tells every committed save, in order.
/// - Group commit: write blocks that queue up while one runs are run back to
///   back, each with a context of its own that sees the blocks before it, and
///   are then committed together in one save (one transaction, or one journal
///   when several files change), at most 64 blocks or 8 MiB at a time. Each
///   caller is told only once that commit is done; a block that throws is
///   dropped alone; a commit that fails fails every block in it, with nothing
///   of them saved. ``changes`` still has one change per block's save. The big
///   ``StoredList``s the blocks save are written once, by the commit: blocks
///   appending to one list do not each rewrite its last leaf and the nodes above it.
///
/// Blocks run on threads of the pool's own (dispatch queues), not on Swift's
/// cooperative pool, because they wait for files and locks.
///
/// How: every block gets a fresh context over the one open backend. Read blocks
/// hold a reader-writer lock (writers preferred) shared for their whole
/// duration; a save holds it exclusively only while it writes, so readers wait
/// only for saves, and a save only for the reads already running. A backend
/// whose reads are not thread-safe (one outside this package) gets every block
/// holding the lock exclusively, one at a time.
public final class StorePool: Sendable {
    /// The backend's location: the store directory, or the in-memory store's name.
    public let path: String
    let core: PoolCore
    private let readers = QueueExecutor(label: "Cabinet.StorePool.read", concurrent: true)
    private let writer = QueueExecutor(label: "Cabinet.StorePool.write", concurrent: false)

    /// Opens (or creates) the store directory at `path` on Tokyo Cabinet for
    /// threads that read at once, and registers `classes`.
    ///
    /// ```swift
    /// let pool = try StorePool(path: "/var/lib/notes", classes: [Note.self, Notebook.self])
    /// ```
    /// The pool holds the store's lock until ``close()``: another `ObjectStore`
    /// or pool on the same directory gets ``/CabinetStorage/CabinetError/storeLocked(path:pid:)``.
    /// Every class the blocks use must be in `classes` (a block cannot register one).
    /// Throws what ``ObjectStore/init(path:readOnly:createIfMissing:options:logger:)`` and
    /// ``ObjectStore/register(_:)-2cr9y`` throw.
    public convenience init(path: String, classes: [StoredObject.Type], options: ObjectStore.Options = ObjectStore.Options(),
                            logger: Logger = ObjectStore.defaultLogger) throws {
        try self.init(path: path, readOnly: false, classes: classes, options: options, logger: logger)
    }

    /// Opens the store directory at `path` read-only, or for writing, and registers `classes`.
    ///
    /// ```swift
    /// // In another process than the store's writer: live values of its commits.
    /// let pool = try StorePool(path: "/var/lib/notes", readOnly: true, classes: [Note.self])
    /// for try await count in pool.observe({ store in try store.count(of: Note.self) }) { print(count) }
    /// ```
    /// A read-only pool shares the store with a writer in another process (an
    /// ``ObjectStore`` or pool): each block sees whole saves of it, and live
    /// observations (``observe(_:)``) run again within moments of each of its
    /// commits, which it announces (docs/FORMAT.md, "Commit announcements").
    /// Its blocks run one at a time, each holding the store's commit lock shared
    /// (the writer waits for the block running when it commits: keep blocks short).
    /// Write blocks throw ``/CabinetStorage/CabinetError/readOnly(path:reason:)``.
    public convenience init(path: String, readOnly: Bool, classes: [StoredObject.Type], options: ObjectStore.Options = ObjectStore.Options(),
                            logger: Logger = ObjectStore.defaultLogger) throws {
        var tuning = TokyoCabinetBackend.Options()
        tuning.readOnly = readOnly
        tuning.createIfMissing = !readOnly
        tuning.concurrentReads = !readOnly
        try self.init(backend: TokyoCabinetBackend(directory: path, options: tuning), classes: classes, options: options, logger: logger)
    }

    /// A pool on any backend, such as ``MemoryBackend``; the pool owns it from
    /// now on and closes it in ``close()``.
    ///
    /// ```swift
    /// let pool = try StorePool(backend: MemoryBackend(), classes: [Note.self])
    /// ```
    /// Read blocks run side by side when the backend's reads are thread-safe:
    /// ``MemoryBackend``, and ``TokyoCabinetBackend`` made with
    /// ``/CabinetStorage/TokyoCabinetBackend/Options/concurrentReads``. On any other backend
    /// every block runs alone.
    /// `logger` receives what the pool's stores cannot throw (see ``ObjectStore/logger``).
    public init(backend: any StorageBackend, classes: [StoredObject.Type], options: ObjectStore.Options = ObjectStore.Options(),
                logger: Logger = ObjectStore.defaultLogger) throws {
        let root = try ObjectStore(backend: backend, options: options, logger: logger)
        do {
            for type in classes { try root.register(type) }
            if !backend.services.isReadOnly {
                // Created (and catalogued) now: a context never creates a table or writes the catalog.
                _ = try root.namedBuffersTable(creating: true)
                if root.hasUnsavedChanges { try root.save() }
            }
            // Every table open now, so that none is opened while blocks run on several threads.
            for name in try backend.tableNames() { _ = try backend.openTable(named: name) }
        } catch {
            root.close()
            throw error
        }
        path = backend.path
        // A read-only pool's blocks each hold the store's commit lock shared, and bring the
        // backend's handles up to the other process's last commit: one at a time.
        let concurrent = !backend.services.isReadOnly && ((backend as? any ConcurrentReadingBackend)?.allowsConcurrentReads ?? false)
        core = PoolCore(template: ContextTemplate(root: root), concurrent: concurrent)
        core.publishOthersSaves()
    }

    /// Runs `block` with a context of its own that sees the store as of the last
    /// save, and returns what it returns.
    ///
    /// ```swift
    /// let titles: [String] = try await pool.read { store in
    ///     try store.fetchAll(Note.self).map(\.title)
    /// }
    /// ```
    /// Read blocks run side by side (on a writable backend that allows it:
    /// ``/CabinetStorage/ConcurrentReadingBackend``, as the memory and Redis
    /// backends and the Tokyo Cabinet one a pool opens by path do; else one at
    /// a time), and beside the running write block; a read block waits only
    /// while a save writes, and sees no save that commits after it started. A
    /// block that inserts, changes or deletes objects throws
    /// ``/CabinetStorage/CabinetError/readOnly(path:reason:)`` and nothing of it
    /// is saved (so do `save()`, `upgradeAll` and `compact()` in it).
    /// Throws ``/CabinetStorage/CabinetError/storeClosed(path:)`` once ``close()`` was called,
    /// and whatever `block` throws.
    public func read<T: Sendable>(_ block: @Sendable (ObjectStore) throws -> T) async throws -> T {
        try core.admit()
        return try await withTaskExecutorPreference(readers) { try await run(block, writes: false) }
    }

    /// Runs `block` with a context of its own, then saves it, and returns what
    /// `block` returns. Write blocks run one at a time, in the order called.
    ///
    /// ```swift
    /// let id: UInt32 = try await pool.write { store in
    ///     let note = Note(); note.title = "Hello"
    ///     store.insert(note)
    ///     return note.rowID
    /// }
    /// ```
    /// If `block` throws, or the save does, nothing of the block is saved:
    /// its objects go with its context, and the next block sees the store as it
    /// was. (`store.save()` inside the block keeps what was done so far, as one
    /// more save committed with the block; a throw after it drops only what
    /// followed.) It returns once the block's saves are committed, as durably as
    /// a save of an ``ObjectStore``: blocks that queued up behind each other are
    /// committed together (see the type's description), and if that commit fails,
    /// every block in it throws its error and none of them is saved, except for
    /// ``/CabinetStorage/CabinetError/Code/saveNotFinished``: the commit was decided (its journal
    /// is whole) and is finished before the next block runs, so every block in
    /// the group *is* saved; don't redo it. Throws
    /// ``/CabinetStorage/CabinetError/storeClosed(path:)`` once ``close()`` was called.
    public func write<T: Sendable>(_ block: @Sendable (ObjectStore) throws -> T) async throws -> T {
        try await write(durability: .asOpened, block)
    }

    /// ``write(_:)``, returning only once the block's saves are as durable as
    /// `durability` says (see ``ObjectStore/save(durability:)``):
    /// ``/CabinetStorage/CommitDurability/flushed`` makes them survive a power
    /// loss, though the store was opened without `syncOnCommit`.
    ///
    /// ```swift
    /// try await pool.write(durability: .flushed) { store in
    ///     let payment = Payment(); payment.amount = 42
    ///     store.insert(payment)
    /// }   // on the disk here
    /// ```
    /// The blocks committed together take the strongest level any of them asked
    /// for: a flushed block flushes its whole group, and the blocks before it;
    /// the blocks around it keep their speed. A `store.save(durability: .flushed)`
    /// inside any block does the same for its group.
    public func write<T: Sendable>(durability: CommitDurability, _ block: @Sendable (ObjectStore) throws -> T) async throws -> T {
        try core.admit()
        defer { core.leave() }
        let call = WriteCall<T>(durability: durability)
        // The caller waits once: from handing the block to the writer queue until
        // the commit holding its saves is done (see `WriteCall`).
        var commitFailure: (any Error)?
        do {
            try await withoutActuallyEscaping(block) { block in
                call.block = block
                try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
                    core.writerArriving { writer.run { self.runWrite(call, telling: waiter) } }
                }
            }
        } catch {
            commitFailure = error
        }
        guard let (outcome, finished) = call.recorded else { preconditionFailure("Cabinet: a write block's caller was resumed before the block ran") }
        // The block's context is closed here, on the caller's thread, not by the writer queue.
        finished?.close()
        // The block's own error first: it is why the caller's changes were not saved.
        let value = try outcome.get()
        if let commitFailure { throw commitFailure }
        return value
    }

    /// Write blocks called that have not started yet: the writer's queue, as a
    /// service may report it (and what a test waits on to make a commit group).
    public var queuedWrites: Int {
        core.writersArriving
    }

    /// Every save committed from now on, in commit order, once each: a new
    /// stream per access, so each subscriber gets every change.
    ///
    /// ```swift
    /// for await change in pool.changes {
    ///     if let notes = change.changes(of: Note.self) { print(notes.inserted) }
    /// }
    /// ```
    /// The stream ends when the pool closes. It keeps changes until they are
    /// read: a subscriber that stops reading should end its loop (dropping the stream).
    public var changes: AsyncStream<Change> {
        core.subscribe()
    }

    /// Refuses new blocks, waits for the blocks already called to finish, then
    /// closes the store (finishing first a save its journal still holds) and
    /// ends the ``changes`` streams. Calling it again waits the same way.
    ///
    /// ```swift
    /// try await pool.close()
    /// try await pool.read { _ in 0 }     // throws storeClosed
    /// ```
    /// Throws if a save left in the journal could not be finished; the next open finishes it.
    public func close() async throws {
        try await core.close()
    }

    // MARK: Running blocks (on the pool's queues)

    /// Runs a read block in a context of its own, on the readers' queue, holding
    /// the lock shared (exclusively on a backend without thread-safe reads).
    #if hasAttribute(concurrent)
    @concurrent
    #endif
    private nonisolated func run<T: Sendable>(_ block: @Sendable (ObjectStore) throws -> T, writes: Bool) async throws -> T {
        defer { core.leave() }
        return try core.runReadBlock(block)
    }

    /// Runs a write block in a context of its own, on the writer queue, and
    /// saves it into the commit group (see `WriteGroup`); commits the group if
    /// no other write block waits to join it. Records in `call` what the block
    /// returned or threw and its context, for the caller to close (see
    /// ``FinishedContext``); `waiter` is resumed once the group is committed.
    private nonisolated func runWrite<T: Sendable>(_ call: WriteCall<T>, telling waiter: CheckedContinuation<Void, any Error>) {
        func run() {
            core.writerStarting(durability: call.durability)
            var outcome: Result<T, any Error>
            var finished: FinishedContext?
            do {
                // The caller's closure is let go here, before the caller can be resumed.
                defer { call.block = nil }
                guard let block = call.block else { preconditionFailure("Cabinet: a write block ran twice") }
                // A backend that cannot flush refuses a flushed block here, before it stages
                // anything, rather than failing the group commit of every block around it.
                if let checking = core.template.backend as? any DurabilityChecking { try checking.checkDurability(call.durability) }
                let store = try core.makeContext(writes: true)
                // An upgrade or compact in the block wrote the tables itself; a
                // journal it could not finish the backend keeps, for the pool's next block.
                defer { finished = FinishedContext(store) }
                let value = try block(store)
                try store.save(durability: call.durability)
                outcome = .success(value)
            } catch {
                outcome = .failure(error)
            }
            let (ticket, waitsForCommit, failure) = core.writerEnded(waiter: waiter)
            // A commit inside the block failed: its earlier saves are gone with the group.
            if let failure, case .success = outcome { outcome = .failure(failure) }
            // The block waits for the group's commit (its saves, or earlier blocks' it may have read): as durable as it asked.
            if waitsForCommit, case .success = outcome { core.group.demand(call.durability) }
            // No commit to wait for, but the block's saves may be in one made inside it, unflushed since
            // (a compaction after it): flushed before its caller hears of it, with every commit before.
            if !waitsForCommit, call.durability == .flushed, case .success = outcome {
                do {
                    try core.flushCommitted(holdingLock: !core.concurrent)
                } catch {
                    outcome = .failure(CabinetError.durabilityUnconfirmed(path: core.template.backend.path, reason: "the block's saves are committed, but flushing them failed: \(error)"))
                }
            }
            call.record(outcome, finished: finished)
            // All of the call is recorded: from here its caller may be resumed.
            if waitsForCommit { core.commitIfLast() } else { ticket.resolve(.success(())) }
        }
        // A backend without thread-safe reads: the whole block (and the commit) holds the lock.
        core.concurrent ? run() : core.lock.writing(run)
    }
}
