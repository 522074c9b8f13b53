import Dispatch

/// A task executor that runs jobs on a dispatch queue: how a pool's blocks,
/// which block their thread (file reads, locks), run off Swift's cooperative
/// thread pool (as many threads as cores, which a blocked thread would take
/// from every other task). A concurrent queue runs read blocks side by side;
/// a serial one runs write blocks one at a time, in the order they were called.
///
/// Used through `withTaskExecutorPreference`: the pool's `nonisolated async`
/// functions that run a block then execute on the queue, and the block, called
/// synchronously from them, runs there whole.
final class QueueExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: its only state is the queue, which is thread-safe.
    private let queue: DispatchQueue

    init(label: String, concurrent: Bool) {
        queue = DispatchQueue(label: label, qos: .userInitiated, attributes: concurrent ? [.concurrent] : [])
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
