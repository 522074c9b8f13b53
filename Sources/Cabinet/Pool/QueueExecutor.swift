import Dispatch

/// A task executor that runs jobs on a dispatch queue: how a pool's blocks,
/// which block their thread (file reads, locks), run off Swift's cooperative
/// thread pool (as many threads as cores, which a blocked thread would take
/// from every other task). A concurrent queue runs read blocks side by side;
/// a serial one runs write blocks one at a time, in the order they were called.
///
/// Read blocks use it through `withTaskExecutorPreference`: the pool's
/// `nonisolated async` function that runs a block then executes on the queue,
/// and the block, called synchronously from it, runs there whole. Write blocks
/// are handed to the queue as plain work (``run(_:)``, see `WriteCall`).
final class QueueExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: its only state is the queue, which is thread-safe.
    private let queue: DispatchQueue

    init(label: String, concurrent: Bool) {
        queue = DispatchQueue(label: label, qos: .userInitiated, attributes: concurrent ? [.concurrent] : [])
    }

    /// Runs `work` on the queue (a write block's whole call, see ``StorePool/write(_:)``).
    func run(_ work: @escaping @Sendable () -> Void) {
        queue.async(execute: work)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
