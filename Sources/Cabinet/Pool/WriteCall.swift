import CabinetStorage

/// One call of ``StorePool/write(_:)``, as the caller and the writer queue share
/// it: the block to run, what it returned or threw, and its finished context.
///
/// Why a call and not a task hopping onto the writer queue: a task that ran its
/// block there had to hop off again to wait for the commit, and the writer
/// queue paid for that hop (a job switch, and often a futex wake of a pool
/// thread) between one block and the next. Now the caller suspends once, and
/// the writer queue runs the block as plain work; the commit resumes the
/// group's callers from another thread in one hand-off (``CommitTicket``).
///
/// `@unchecked Sendable`, and why that is sound: `block` is set by the caller
/// before the call is handed to the queue and let go by the writer queue
/// before the caller can go on (``StorePool/write(_:)`` checks that nothing
/// keeps it: it is the caller's non-escaping closure). What the block did is
/// recorded and read under a lock: the continuation that resumes the caller
/// orders the two already, but inside Swift's runtime, where ThreadSanitizer
/// cannot see it.
final class WriteCall<T: Sendable>: @unchecked Sendable {
    var block: (@Sendable (ObjectStore) throws -> T)?
    /// How durable the block's saves must be when its caller is resumed.
    let durability: CommitDurability

    init(durability: CommitDurability) {
        self.durability = durability
    }
    private let done = Locked<(outcome: Result<T, any Error>, finished: FinishedContext?)?>(nil)

    /// The writer queue, once the block ran: what it returned or threw, and its context.
    func record(_ outcome: Result<T, any Error>, finished: FinishedContext?) {
        done.withLock { $0 = (outcome, finished) }
    }

    /// The caller, once resumed: what the writer queue recorded.
    var recorded: (outcome: Result<T, any Error>, finished: FinishedContext?)? {
        done.withLock { $0 }
    }
}
