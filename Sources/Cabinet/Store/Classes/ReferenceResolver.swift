/// The store's registered classes, by type and by class ID: what turns a row ID
/// read from a ``DataBuffer`` into an object of the store.
///
/// Every buffer the store hands out holds it strongly, in its ``RecordContext``.
/// An app may keep such a buffer beyond `read(from:)`, past the store's close and
/// even its deinit, so the resolver holds the class entries themselves, never a
/// pointer to the store (an unretained one would dangle; a weak one costs a
/// fetch that reads references more: BENCHMARKS.md has the count). The store closes
/// it when it closes: the entries are let go, and a kept buffer's next reference
/// read throws ``CabinetError/storeClosed(path:)`` instead of touching them.
///
/// `@unchecked Sendable`, because buffers are `Sendable` and may carry it to
/// another thread, while its tables (and the entries' live objects it hands out)
/// are as unsynchronized as the rest of the store's bookkeeping. The fence is the
/// store's own ``ConcurrentUseDetector``: a buffer enters it for each reference
/// read (``enter()``), so a buffer read on one thread while another thread is
/// inside the store stops the program with the detector's message, exactly as
/// two threads calling the store would. The store's own lookups run inside its
/// operations, which have entered already.
final class ReferenceResolver: @unchecked Sendable {
    private let useDetector: ConcurrentUseDetector
    // Looked up per insert and per reference list: confined to the store's thread (see above).
    @exclusivity(unchecked) private var entriesByType: [ObjectIdentifier: ClassEntry] = [:]
    /// Indexed by class ID, only as long as the largest ID registered: a pool makes
    /// a store (and so a resolver) per block, and an array of all 256 IDs cost more
    /// to make and free than a small write block's save.
    private var entriesByClassID: [ClassEntry?] = []
    /// The entry `entry(for:)` found last: loops insert and fetch one class at a time.
    @exclusivity(unchecked) private var lastEntry: ClassEntry?
    @exclusivity(unchecked) private var isClosed = false

    init(useDetector: ConcurrentUseDetector) {
        self.useDetector = useDetector
    }

    @inline(__always)
    func entry(for type: StoredObject.Type) -> ClassEntry? {
        if let last = lastEntry, last.type == type { return last }
        let found = entriesByType[ObjectIdentifier(type)]
        lastEntry = found
        return found
    }

    func entry(classID: UInt8) -> ClassEntry? {
        let index = Int(classID)
        return index < entriesByClassID.count ? entriesByClassID[index] : nil
    }

    /// Makes room for `count` classes whose largest class ID is `largestClassID`:
    /// a pool's context adds its classes at once, and growing both tables one
    /// class at a time cost as much as the rest of making the context.
    func reserve(classes count: Int, largestClassID: UInt8) {
        entriesByType.reserveCapacity(count)
        entriesByClassID.reserveCapacity(Int(largestClassID) + 1)
    }

    /// Adds a class the store has just registered.
    func add(_ entry: ClassEntry) {
        entriesByType[ObjectIdentifier(entry.type)] = entry
        let index = Int(entry.metadata.classID)
        if index >= entriesByClassID.count {
            entriesByClassID.append(contentsOf: repeatElement(nil, count: index + 1 - entriesByClassID.count))
        }
        entriesByClassID[index] = entry
    }

    /// Forgets a class whose registration failed.
    func remove(_ entry: ClassEntry) {
        entriesByType[ObjectIdentifier(entry.type)] = nil
        let index = Int(entry.metadata.classID)
        if index < entriesByClassID.count, entriesByClassID[index] === entry { entriesByClassID[index] = nil }
        lastEntry = nil
    }

    /// Lets go of the entries: buffers that outlive the store hold only this, empty.
    func close() {
        isClosed = true
        entriesByType.removeAll()
        entriesByClassID = []
        lastEntry = nil
    }

    // MARK: Reading references from a buffer

    /// Enters the store as one operation of it (trapping if another thread is
    /// inside), for a buffer about to turn row IDs into objects, unless this
    /// thread is inside already (a `read(from:)` during a fetch). Throws
    /// ``CabinetError/storeClosed(path:)`` once the store is closed. If it
    /// returns `true`, call ``leave()`` when done.
    @inline(__always)
    func enter() throws -> Bool {
        let entered = useDetector.enterIfOutside("reading a reference from a DataBuffer")
        if _slowPath(isClosed) {
            if entered { useDetector.leave() }
            throw CabinetError.storeClosed(path: useDetector.path)
        }
        return entered
    }

    @inline(__always)
    func leave(_ entered: Bool) {
        if _slowPath(entered) { useDetector.leave() }
    }

    /// The entry of a class references are read to; throws if it is not registered.
    @inline(__always)
    func registeredEntry(for type: StoredObject.Type) throws -> ClassEntry {
        guard let entry = entry(for: type) else {
            throw CabinetError.classNotRegistered(className: String(describing: type))
        }
        return entry
    }
}
