/// The live instances of one class, by row ID, without keeping them alive.
///
/// Entries are unretained: an object removes itself when it is freed
/// (`StoredObject.deinit`), so the table never holds a dangling pointer and never
/// keeps an object the app has dropped. Row IDs are dense (2, 3, 4, …), so they
/// index an array directly; a row ID far beyond the class's last row (only a
/// damaged reference can name one) goes to a dictionary instead, so no record can
/// make the table allocate more than the class's size.
struct UniquingTable {
    private var dense: [Unmanaged<StoredObject>?] = []
    private var sparse: [UInt32: Unmanaged<StoredObject>] = [:]
    private(set) var count = 0

    /// The live object at `rowID`, if any.
    @inline(__always)
    func object(at rowID: UInt32) -> StoredObject? {
        let index = Int(rowID)
        if index < dense.count {
            return dense[index]?.takeUnretainedValue()
        }
        return sparse.isEmpty ? nil : sparse[rowID]?.takeUnretainedValue()
    }

    /// Records `object` as the live instance of `rowID`. Rows up to `denseLimit` go in the array.
    mutating func insert(_ object: StoredObject, at rowID: UInt32, denseLimit: UInt32) {
        let index = Int(rowID)
        if index < dense.count {
            if dense[index] == nil { count += 1 }
            dense[index] = Unmanaged.passUnretained(object)
        } else if rowID <= denseLimit {
            let newCount = max(index + 1, dense.count * 2, 64)
            dense.reserveCapacity(newCount)
            dense.append(contentsOf: repeatElement(nil, count: newCount - dense.count))
            dense[index] = Unmanaged.passUnretained(object)
            count += 1
        } else {
            if sparse.updateValue(Unmanaged.passUnretained(object), forKey: rowID) == nil { count += 1 }
        }
    }

    /// Forgets `rowID` if its entry is `object` (a stale entry for another object stays).
    mutating func remove(_ object: StoredObject, at rowID: UInt32) {
        let index = Int(rowID)
        if index < dense.count {
            if let current = dense[index], current.toOpaque() == Unmanaged.passUnretained(object).toOpaque() {
                dense[index] = nil
                count -= 1
            }
        } else if let current = sparse[rowID], current.toOpaque() == Unmanaged.passUnretained(object).toOpaque() {
            sparse.removeValue(forKey: rowID)
            count -= 1
        }
    }

    /// Every live object, retained, so the caller may release others while using them.
    func allObjects() -> [StoredObject] {
        var result: [StoredObject] = []
        result.reserveCapacity(count)
        for case let entry? in dense { result.append(entry.takeUnretainedValue()) }
        for entry in sparse.values { result.append(entry.takeUnretainedValue()) }
        return result
    }

    mutating func removeAll() {
        dense = []
        sparse = [:]
        count = 0
    }
}
