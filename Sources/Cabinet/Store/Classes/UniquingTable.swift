/// The live instances of one class, by row ID, without keeping them alive.
///
/// Entries are unretained: an object removes itself when it is freed
/// (`StoredObject.deinit`), so the table never holds a dangling pointer and never
/// keeps an object the app has dropped.
///
/// Row IDs are dense (2, 3, 4, …), so they index a two-level table: a directory
/// with one pointer per 64 rows, and a leaf of 64 slots for each group of rows
/// that has a live object. A leaf is allocated with its group's first live
/// object and given back with its last (a few emptied leaves are kept for
/// reuse). Why not a flat array by row: ten objects of a million-row class made
/// a fresh process allocate and zero 16 MB for it, thousands of page faults in
/// its first queries. Here the zeroed memory is one pointer per 64 rows.
///
/// A row ID far beyond the class's last row (only a damaged reference can name
/// one) goes to a dictionary instead, so no record can make the table allocate
/// more than the class's size.
///
/// A class over raw memory: it is touched once or twice per object in every
/// fetch loop, and raw pointer access needs no exclusivity bookkeeping. Every
/// access is bounds-checked against `leafCount`, and slot numbers are masked to
/// a leaf's size.
final class UniquingTable {
    private typealias Slot = Unmanaged<StoredObject>?

    /// 64 rows a leaf: 8 bytes of count and 512 of slots, a block glibc's
    /// per-thread cache hands out and takes back without locking.
    private static let leafShift: UInt32 = 6
    private static let leafRows = 1 << leafShift
    private static let slotMask = UInt32(leafRows - 1)
    private static let slotsOffset = MemoryLayout<Int>.stride
    private static let leafBytes = slotsOffset + leafRows * MemoryLayout<Slot>.stride

    /// Leaf `i` holds rows `i * 64 ..< (i + 1) * 64`; `nil` while none of them is live.
    @exclusivity(unchecked) private var directory: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    @exclusivity(unchecked) private var leafCount = 0
    @exclusivity(unchecked) private var sparse: [UInt32: Unmanaged<StoredObject>] = [:]
    @exclusivity(unchecked) private(set) var count = 0
    /// Emptied leaves kept for the next groups (all slots `nil`, count 0), up to
    /// `maxSpares`: a scan that frees each object before making the next one
    /// empties a leaf every 64 rows, and a query's few objects empty a leaf each.
    @exclusivity(unchecked) private var spares: UnsafeMutablePointer<UnsafeMutableRawPointer>
    @exclusivity(unchecked) private var spareCount = 0
    private static let maxSpares = 16

    init() {
        directory = UnsafeMutablePointer.allocate(capacity: 0)
        spares = UnsafeMutablePointer.allocate(capacity: Self.maxSpares)
    }

    deinit {
        freeLeaves()
        directory.deallocate()
        spares.deallocate()
    }

    /// The leaf that holds `rowID`, and its slot there.
    @inline(__always)
    private static func leafIndex(_ rowID: UInt32) -> Int { Int(rowID &>> leafShift) }
    @inline(__always)
    private static func slotIndex(_ rowID: UInt32) -> Int { Int(rowID & slotMask) }

    @inline(__always)
    private static func slots(of leaf: UnsafeMutableRawPointer) -> UnsafeMutablePointer<Slot> {
        (leaf + slotsOffset).assumingMemoryBound(to: Slot.self)
    }

    @inline(__always)
    private static func liveCount(of leaf: UnsafeMutableRawPointer) -> UnsafeMutablePointer<Int> {
        leaf.assumingMemoryBound(to: Int.self)
    }

    /// The live object at `rowID`, if any.
    @inline(__always)
    func object(at rowID: UInt32) -> StoredObject? {
        let leafIndex = Self.leafIndex(rowID)
        if leafIndex < leafCount {
            guard let leaf = directory[leafIndex] else { return nil }
            return Self.slots(of: leaf)[Self.slotIndex(rowID)]?.takeUnretainedValue()
        }
        return sparse.isEmpty ? nil : sparse[rowID]?.takeUnretainedValue()
    }

    /// Records `object` as the live instance of `rowID`. Rows up to `denseLimit` go in the table proper.
    ///
    /// A row whose entry is another object stops the program: that object points
    /// at its class entry unretained and would outlive its store's bookkeeping
    /// (two live instances for one row lose edits and free memory twice). Every
    /// caller checks the row first; this is the fence, and costs no extra load.
    @inline(__always)
    func insert(_ object: StoredObject, at rowID: UInt32, denseLimit: UInt32) {
        let leafIndex = Self.leafIndex(rowID)
        let reference = Unmanaged.passUnretained(object)
        if leafIndex >= leafCount {
            guard rowID <= denseLimit else {
                if let previous = sparse.updateValue(reference, forKey: rowID) {
                    if previous.toOpaque() != reference.toOpaque() { secondInstance(object, rowID) }
                } else {
                    count += 1
                }
                return
            }
            grow(toInclude: leafIndex)
        }
        place(reference, at: rowID, leafIndex: leafIndex)
    }

    @inline(__always)
    private func place(_ reference: Unmanaged<StoredObject>, at rowID: UInt32, leafIndex: Int) {
        let leaf = directory[leafIndex] ?? newLeaf(at: leafIndex)
        let slot = Self.slots(of: leaf) + Self.slotIndex(rowID)
        if let previous = slot.pointee {
            if previous.toOpaque() != reference.toOpaque() { secondInstance(reference.takeUnretainedValue(), rowID) }
        } else {
            count += 1
            Self.liveCount(of: leaf).pointee += 1
        }
        slot.pointee = reference
    }

    private func newLeaf(at leafIndex: Int) -> UnsafeMutableRawPointer {
        if spareCount > 0 {
            spareCount -= 1
            let leaf = spares[spareCount]
            directory[leafIndex] = leaf
            return leaf
        }
        let leaf = UnsafeMutableRawPointer.allocate(byteCount: Self.leafBytes, alignment: MemoryLayout<Int>.alignment)
        leaf.bindMemory(to: Int.self, capacity: 1).initialize(to: 0)
        (leaf + Self.slotsOffset).bindMemory(to: Slot.self, capacity: Self.leafRows)
            .initialize(repeating: nil, count: Self.leafRows)
        directory[leafIndex] = leaf
        return leaf
    }

    private func secondInstance(_ object: StoredObject, _ rowID: UInt32) -> Never {
        fatalError("Cabinet internal error: a second live \(type(of: object)) for row \(rowID); uniquing must hand out one instance per row")
    }

    /// Makes room for rows up to `rowID` at once, so a scan of a whole class does
    /// not grow the directory step by step.
    func reserve(upTo rowID: UInt32) {
        let leafIndex = Self.leafIndex(rowID)
        if leafIndex >= leafCount { grow(toInclude: leafIndex, exactly: true) }
    }

    private func grow(toInclude leafIndex: Int, exactly: Bool = false) {
        let newCount = exactly ? leafIndex + 1 : max(leafIndex + 1, leafCount * 2, 16)
        let larger = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: newCount)
        larger.moveInitialize(from: directory, count: leafCount)
        (larger + leafCount).initialize(repeating: nil, count: newCount - leafCount)
        directory.deallocate()
        directory = larger
        leafCount = newCount
        // A row lives in one place: rows the table now covers leave the dictionary
        // (a pool's context keeps rows there until its first scan).
        if !sparse.isEmpty {
            for (rowID, reference) in sparse where Self.leafIndex(rowID) < newCount {
                sparse.removeValue(forKey: rowID)
                count -= 1
                place(reference, at: rowID, leafIndex: Self.leafIndex(rowID))
            }
        }
    }

    /// Forgets `rowID` if its entry is `object` (an entry for another object stays).
    func remove(_ object: StoredObject, at rowID: UInt32) {
        let leafIndex = Self.leafIndex(rowID)
        let target = Unmanaged.passUnretained(object).toOpaque()
        if leafIndex < leafCount {
            guard let leaf = directory[leafIndex] else { return }
            let slot = Self.slots(of: leaf) + Self.slotIndex(rowID)
            guard let current = slot.pointee, current.toOpaque() == target else { return }
            slot.pointee = nil
            count -= 1
            let live = Self.liveCount(of: leaf)
            live.pointee -= 1
            if live.pointee == 0 {
                directory[leafIndex] = nil
                if spareCount < Self.maxSpares {
                    spares[spareCount] = leaf   // every slot is nil again, and its count 0
                    spareCount += 1
                } else {
                    leaf.deallocate()
                }
            }
        } else if let current = sparse[rowID], current.toOpaque() == target {
            sparse.removeValue(forKey: rowID)
            count -= 1
        }
    }

    /// How many leaves are allocated: one per group of 64 rows with a live object.
    var leavesInUse: Int {
        (0..<leafCount).reduce(0) { $0 + (directory[$1] == nil ? 0 : 1) }
    }

    /// Every live object, retained, so the caller may release others while using them.
    func allObjects() -> [StoredObject] {
        var result: [StoredObject] = []
        result.reserveCapacity(count)
        forEachObject { result.append($0) }
        return result
    }

    /// Calls `body` with each live object, rows in the table first in row order,
    /// then those in the dictionary (which must not free the object it is given).
    /// Every leaf and dictionary entry is looked up again just before its object
    /// is handed over: `body` may free other objects (and with them a leaf, or
    /// their dictionary entries), or grow the table over rows of the dictionary.
    func forEachObject(_ body: (StoredObject) -> Void) {
        var leafIndex = 0
        while leafIndex < leafCount {
            var slot = 0
            while slot < Self.leafRows, leafIndex < leafCount, let leaf = directory[leafIndex] {
                if let entry = Self.slots(of: leaf)[slot] { body(entry.takeUnretainedValue()) }
                slot += 1
            }
            leafIndex += 1
        }
        guard !sparse.isEmpty else { return }
        for rowID in Array(sparse.keys) {
            if let entry = sparse[rowID] { body(entry.takeUnretainedValue()) }
        }
    }

    func removeAll() {
        freeLeaves()
        directory.deallocate()
        directory = UnsafeMutablePointer.allocate(capacity: 0)
        leafCount = 0
        sparse = [:]
        count = 0
    }

    private func freeLeaves() {
        for leafIndex in 0..<leafCount {
            directory[leafIndex]?.deallocate()
            directory[leafIndex] = nil
        }
        for spare in 0..<spareCount { spares[spare].deallocate() }
        spareCount = 0
    }
}
