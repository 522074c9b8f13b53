/// The live instances of one class, by row ID, without keeping them alive.
///
/// Entries are unretained: an object removes itself when it is freed
/// (`StoredObject.deinit`), so the table never holds a dangling pointer and never
/// keeps an object the app has dropped. Row IDs are dense (2, 3, 4, …), so they
/// index an array directly; a row ID far beyond the class's last row (only a
/// damaged reference can name one) goes to a dictionary instead, so no record can
/// make the table allocate more than the class's size.
///
/// A class over raw memory: it is touched once or twice per object in every
/// fetch loop, and raw pointer access needs no exclusivity bookkeeping.
final class UniquingTable {
    @exclusivity(unchecked) private var dense: UnsafeMutablePointer<Unmanaged<StoredObject>?>
    @exclusivity(unchecked) private var denseCount = 0
    @exclusivity(unchecked) private var sparse: [UInt32: Unmanaged<StoredObject>] = [:]
    @exclusivity(unchecked) private(set) var count = 0

    init() {
        dense = UnsafeMutablePointer.allocate(capacity: 0)
    }

    deinit {
        dense.deallocate()
    }

    /// The live object at `rowID`, if any.
    @inline(__always)
    func object(at rowID: UInt32) -> StoredObject? {
        let index = Int(rowID)
        if index < denseCount {
            return dense[index]?.takeUnretainedValue()
        }
        return sparse.isEmpty ? nil : sparse[rowID]?.takeUnretainedValue()
    }

    /// Records `object` as the live instance of `rowID`. Rows up to `denseLimit` go in the array.
    ///
    /// A row whose entry is another object stops the program: that object points
    /// at its class entry unretained and would outlive its store's bookkeeping
    /// (two live instances for one row lose edits and free memory twice). Every
    /// caller checks the row first; this is the fence, and costs no extra load.
    @inline(__always)
    func insert(_ object: StoredObject, at rowID: UInt32, denseLimit: UInt32) {
        let index = Int(rowID)
        let reference = Unmanaged.passUnretained(object)
        if index >= denseCount {
            guard rowID <= denseLimit else {
                if let previous = sparse.updateValue(reference, forKey: rowID) {
                    if previous.toOpaque() != reference.toOpaque() { secondInstance(object, rowID) }
                } else {
                    count += 1
                }
                return
            }
            grow(toInclude: index)
        }
        if let previous = dense[index] {
            if previous.toOpaque() != reference.toOpaque() { secondInstance(object, rowID) }
        } else {
            count += 1
        }
        dense[index] = reference
    }

    private func secondInstance(_ object: StoredObject, _ rowID: UInt32) -> Never {
        fatalError("Cabinet internal error: a second live \(type(of: object)) for row \(rowID); uniquing must hand out one instance per row")
    }

    /// Makes room for rows up to `rowID` at once, so a scan of a whole class does
    /// not grow the array step by step (and hold two copies at each step).
    func reserve(upTo rowID: UInt32) {
        if Int(rowID) >= denseCount { grow(toInclude: Int(rowID), exactly: true) }
    }

    private func grow(toInclude index: Int, exactly: Bool = false) {
        let newCount = exactly ? index + 1 : max(index + 1, denseCount * 2, 64)
        let larger = UnsafeMutablePointer<Unmanaged<StoredObject>?>.allocate(capacity: newCount)
        larger.moveInitialize(from: dense, count: denseCount)
        (larger + denseCount).initialize(repeating: nil, count: newCount - denseCount)
        dense.deallocate()
        dense = larger
        denseCount = newCount
        // A row lives in one place: rows the array now covers leave the dictionary
        // (a pool's context keeps rows there until its first scan).
        if !sparse.isEmpty {
            for (rowID, entry) in sparse.filter({ Int($0.key) < newCount }) {
                dense[Int(rowID)] = entry
                sparse.removeValue(forKey: rowID)
            }
        }
    }

    /// Forgets `rowID` if its entry is `object` (an entry for another object stays).
    func remove(_ object: StoredObject, at rowID: UInt32) {
        let index = Int(rowID)
        let target = Unmanaged.passUnretained(object).toOpaque()
        if index < denseCount {
            if let current = dense[index], current.toOpaque() == target {
                dense[index] = nil
                count -= 1
            }
        } else if let current = sparse[rowID], current.toOpaque() == target {
            sparse.removeValue(forKey: rowID)
            count -= 1
        }
    }

    /// Every live object, retained, so the caller may release others while using them.
    func allObjects() -> [StoredObject] {
        var result: [StoredObject] = []
        result.reserveCapacity(count)
        forEachObject { result.append($0) }
        return result
    }

    /// Calls `body` with each live object (which must not free any of them).
    func forEachObject(_ body: (StoredObject) -> Void) {
        for index in 0..<denseCount {
            if let entry = dense[index] { body(entry.takeUnretainedValue()) }
        }
        for entry in sparse.values { body(entry.takeUnretainedValue()) }
    }

    func removeAll() {
        dense.deallocate()
        dense = UnsafeMutablePointer.allocate(capacity: 0)
        denseCount = 0
        sparse = [:]
        count = 0
    }
}
