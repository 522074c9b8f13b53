import CabinetStorage
import Dispatch

/// Group commit: the write blocks that queue up while one runs are run back to
/// back on the writer queue, each in a context of its own whose saves go to the
/// group's staging (`StagedTable`), and the whole group is then written in one
/// save (`ObjectStore.commitStaged`): one transaction or journal instead of one per
/// block, which is most of a small block's cost (Tokyo Cabinet's transaction log).
///
/// - A block's caller is told only after the commit that holds its saves:
///   it waits on a `CommitTicket`, resolved by the commit, success or failure.
/// - A block that throws is rolled back alone: its unsaved changes never reach
///   the staging. (A `store.save()` inside it has staged what preceded it,
///   which is committed with the group, as a save inside a block always was.)
/// - A commit that fails fails every block in the group, and nothing of them
///   is written; the staging is dropped, so the next block reads the store as committed.
///   Except `saveNotFinished`: the group's journal is whole, so the group is
///   saved; `PoolCore` finishes the journal before the next write block reads.
/// - The out-of-line lists the blocks save are kept in memory, and the commit
///   writes each once (`PendingLists`): blocks appending to one big list do not
///   each rewrite its last leaf and the nodes above it.
/// - The last block of a group commits it: the one that ends when no other write
///   block waits to start, or when the group is full (`maxBlocks`, `maxBytes`).
///
/// `@unchecked Sendable`: used by the writer queue only, one block at a time
/// (the pool's lock keeps readers off the real tables while it commits).
final class WriteGroup: @unchecked Sendable {
    /// At most this many blocks wait for one commit: each waits for all before it.
    static let maxBlocks = 64
    /// Bytes staged after which the group commits before staging more: bounds its journal and memory.
    static let maxBytes = 8 << 20

    let staging = GroupStaging()
    /// Decoded list nodes the blocks read or wrote (see ``ListNodeCache``).
    let listNodes = ListNodeCache()
    /// The lists the blocks saved, written by the commit (see ``PendingLists``).
    let pendingLists = PendingLists()
    /// The blocks waiting for the commit, in arrival order.
    private var members: [CommitTicket] = []
    /// What each staged save changed, in order: published once committed.
    private var summaries: [SaveSummary] = []
    /// Set when a commit inside the running block (before an upgrade or a
    /// compaction, or at `maxBytes`) failed: its staged saves are gone, so the
    /// block fails whatever it does next.
    private(set) var blockFailure: (any Error)?
    private var blockRunning = false
    /// The strongest durability a save or a block of the group asked for: the
    /// group's commit is that durable, so no block returns before its level is met.
    private(set) var durability = CommitDurability.asOpened
    /// The running block's level, from its start: a commit of the group
    /// inside the block (before an upgrade or a compaction, or at `maxBytes`)
    /// holds saves the block returns on, so it is at least this durable.
    private var blockDurability = CommitDurability.asOpened
    /// Commits made (tests count them to see blocks grouped).
    private(set) var commits = 0

    var isFull: Bool { members.count >= Self.maxBlocks || isLarge }
    /// The group's records and kept lists reached ``maxBytes``: it commits before staging more.
    var isLarge: Bool { staging.stagedBytes + pendingLists.bytes >= Self.maxBytes }
    /// Set when the group was committed while the running block ran: that block
    /// no longer keeps lists for the commit (see ``PendingLists``).
    private(set) var committedInBlock = false
    var hasMembers: Bool { !members.isEmpty }

    func beginBlock(durability level: CommitDurability) {
        blockRunning = true
        blockDurability = level
        blockFailure = nil
        committedInBlock = false
    }

    /// After a block: its ticket, holding `waiter` (the block's caller, resumed
    /// with the commit's result), whether it waits for the group's commit (if
    /// anything is staged: its saves, or earlier blocks' it may have read), and
    /// the failure a commit inside the block left, if any. A ticket that waits
    /// for nothing is not resolved here: the caller records the block's outcome
    /// first, then resolves it.
    func endBlock(waiter: CheckedContinuation<Void, any Error>) -> (ticket: CommitTicket, waitsForCommit: Bool, failure: (any Error)?) {
        blockRunning = false
        let ticket = CommitTicket(waiter: waiter)
        let waits = staging.hasStagedRecords || !pendingLists.isEmpty
        if waits { members.append(ticket) }
        // From here the block's level counts only if it succeeded (its caller demands it then).
        blockDurability = .asOpened
        defer { blockFailure = nil }
        return (ticket, waits, blockFailure)
    }

    /// A save staged in the group, or a block of it, asks for `level`.
    func demand(_ level: CommitDurability) {
        durability = max(durability, level)
    }

    /// A save staged what `summary` says.
    func staged(_ summary: SaveSummary) {
        summaries.append(summary)
    }

    /// Writes the staging to the store as one save, publishes its changes and
    /// resolves every waiting block. Call holding the pool's lock exclusively.
    func commit(_ core: PoolCore) throws {
        let (waiting, changes) = (members, summaries)
        let level = blockRunning ? max(durability, blockDurability) : durability
        members = []
        summaries = []
        durability = .asOpened
        let root = core.template.root
        var failure: (any Error)?
        commits += 1
        if blockRunning { committedInBlock = true }
        do {
            let lists = try stagePendingLists(root)
            try root.commitStaged(staging, durability: level)
            lists?.commit()
        } catch {
            failure = error
        }
        staging.discardStaged()
        root.rebuildDamagedIndexes()
        // Committed, or decided (its journal finishes it): subscribers hear of it, in order, before the callers.
        if failure == nil || (failure as? CabinetError)?.leavesSaveCommitted == true {
            for change in changes { core.publish(change) }
        }
        // Nodes the group's blocks wrote are not in the table after all (unless its journal finishes it).
        if failure != nil {
            listNodes.removeAll()
            pendingLists.removeAll()
        }
        let result: Result<Void, any Error> = failure.map { .failure($0) } ?? .success(())
        CommitTicket.resolve(waiting, with: result)
        if let failure {
            if blockRunning { blockFailure = failure }
            throw failure
        }
    }
}

extension WriteGroup {
    /// Stages the lists the blocks kept (``PendingLists``) in the group's view of
    /// the lists table, so that the commit writes them with everything else;
    /// returns their writer, to be told once the commit is done.
    fileprivate func stagePendingLists(_ root: ObjectStore) throws -> ListWriter? {
        guard !pendingLists.isEmpty else { return nil }
        // The lists are written against the committed trees: a journal left to finish goes first, as in save().
        if root.journalAwaitsReplay { try root.recoverInterruptedSave() }
        // A block kept lists only through a writer over this table: gone since, it is missing.
        guard let base = try root.listsTable(creating: false) else {
            throw CabinetError.missingClassFile(RecordLocation(file: root.backend.location(ofTable: ObjectStore.listsTableName)), classID: nil)
        }
        let table = staging.table(over: base, named: ObjectStore.listsTableName)
        let writer = ListWriter(table: table, format: root.recordFormat, backend: root.backend, cache: listNodes,
                                writtenRoots: root.listRootsWritten)
        try pendingLists.flush(writer) { key, value in
            try withRecordBytes(key, value) { key, value in try table.apply(value, forKey: key) }
        }
        return writer
    }
}

/// A write block's wait for the commit of its group: made when the block ends,
/// holding its caller's continuation, and resolved once, by the commit (or at
/// once when the block staged nothing). The callers of a committed group are
/// resumed from a global queue in one hand-off, so callers of two groups may
/// return in either order; the ``StorePool/changes`` stream, published before
/// either, keeps the commits' order.
final class CommitTicket: Sendable {
    private let waiter = Locked<CheckedContinuation<Void, any Error>?>(nil)

    init(waiter: CheckedContinuation<Void, any Error>) {
        self.waiter.withLock { $0 = waiter }
    }

    /// Resumes the caller now, on this thread.
    func resolve(_ result: Result<Void, any Error>) {
        take()?.resume(with: result)
    }

    /// The caller's continuation, the first time it is asked for.
    private func take() -> CheckedContinuation<Void, any Error>? {
        waiter.withLock { waiter in
            defer { waiter = nil }
            return waiter
        }
    }

    /// Resolves a committed group's tickets. Their callers are resumed from
    /// another thread, in one hand-off: each wake-up is a futex call that would
    /// otherwise cost the writer queue, which runs the next blocks, its time.
    static func resolve(_ tickets: [CommitTicket], with result: Result<Void, any Error>) {
        let waiters = tickets.compactMap { $0.take() }
        guard !waiters.isEmpty else { return }
        DispatchQueue.global(qos: .userInitiated).async {
            for waiter in waiters { waiter.resume(with: result) }
        }
    }
}
