import CabinetStorage

extension PoolCore {
    /// Runs a read block in a context of its own, holding the lock shared
    /// (exclusively on a backend without thread-safe reads), and returns what it
    /// returns. The caller has counted the block in (``admit()``) and counts it out.
    ///
    /// An observation's run passes a `recorder`, which its context's tables fill
    /// with what the block reads, and `holdingLock`, called once the lock is
    /// held: no commit is being written then, so the hub's commit count it reads
    /// is in what the block sees.
    func runReadBlock<T>(_ block: (ObjectStore) throws -> T, recorder: RegionRecorder? = nil,
                         holdingLock: (() -> Void)? = nil) throws -> T {
        var context: ObjectStore?
        // Closed after the lock is let go: it frees objects, and reads nothing.
        defer { context?.close() }
        func run() throws -> T {
            let store = try makeContext(writes: false, recorder: recorder)
            context = store
            holdingLock?()
            recorder?.isRecording = true
            defer { recorder?.isRecording = false }
            // A read-only pool's block: one committed state of the writer in another process, throughout.
            let result = try store.coordinatesReads ? store.reading { try block(store) } : block(store)
            if store.hasUnsavedChanges {
                let what = recorder == nil ? "a StorePool read block" : "an observation's block"
                throw CabinetError.readOnly(path: store.path, reason: "\(what) changed objects, which are not saved; change them in pool.write { } instead")
            }
            return result
        }
        // A read-only pool's block: the context, too, is made on the writer's last commit.
        let committed = { self.template.root.coordinatesReads ? try self.template.backend.services.withCommittedState(run) : try run() }
        return try concurrent ? lock.reading(committed) : lock.writing(committed)
    }
}
