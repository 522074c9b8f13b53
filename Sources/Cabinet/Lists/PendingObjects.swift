/// The objects a leaf of a ``StoredList`` holds in memory, by position: the
/// elements added since the leaf was read or written, which a save resolves
/// to their row IDs (an object inserted in the same block has none before).
///
/// Sparse: an append to a leaf of 500 stored row IDs keeps one entry, not a
/// 500-slot array of which 499 are `nil` that every copy, resolve and
/// teardown walks (a pool's write block appends one note to a notebook of
/// 100,000 and throws its copy of the leaf away). A list made in memory from
/// objects has an entry at every position, and is looked up directly.
struct PendingObjects {
    /// The positions that hold an object, ascending.
    private var offsets: [Int] = []
    /// The object at each of ``offsets``.
    private var objects: [StoredObject] = []

    init() {}

    /// An object at every position, `0..<elements.count`.
    init(_ elements: [StoredObject]) {
        offsets = Array(elements.indices)
        objects = elements
    }

    var isEmpty: Bool { offsets.isEmpty }

    /// The object at `offset`, or `nil` if the element there is a stored row ID.
    subscript(offset: Int) -> StoredObject? {
        // Every position from 0 held (a list made from objects): no search.
        if let last = offsets.last, last == offsets.count - 1 {
            return offset <= last ? objects[offset] : nil
        }
        let index = firstIndex(notBelow: offset)
        return index < offsets.count && offsets[index] == offset ? objects[index] : nil
    }

    /// Each position that holds an object, ascending, with the object.
    func forEach(_ body: (_ offset: Int, _ object: StoredObject) throws -> Void) rethrows {
        for index in offsets.indices { try body(offsets[index], objects[index]) }
    }

    /// An element was inserted at `offset` (holding `object`, if not a stored row ID):
    /// the positions after it move up one.
    mutating func insert(_ object: StoredObject?, at offset: Int) {
        let index = firstIndex(notBelow: offset)
        for later in index..<offsets.count { offsets[later] += 1 }
        guard let object else { return }
        offsets.insert(offset, at: index)
        objects.insert(object, at: index)
    }

    /// The element at `offset` was removed: returns its object, and the positions after it move down one.
    mutating func remove(at offset: Int) -> StoredObject? {
        var index = firstIndex(notBelow: offset)
        var removed: StoredObject?
        if index < offsets.count && offsets[index] == offset {
            offsets.remove(at: index)
            removed = objects.remove(at: index)
        }
        while index < offsets.count {
            offsets[index] -= 1
            index += 1
        }
        return removed
    }

    /// The element at `offset` now holds `object` (`nil`: a stored row ID).
    mutating func set(_ object: StoredObject?, at offset: Int) {
        let index = firstIndex(notBelow: offset)
        let present = index < offsets.count && offsets[index] == offset
        switch (object, present) {
        case (let object?, true): objects[index] = object
        case (let object?, false):
            offsets.insert(offset, at: index)
            objects.insert(object, at: index)
        case (nil, true):
            offsets.remove(at: index)
            objects.remove(at: index)
        case (nil, false): break
        }
    }

    /// Removes the positions from `offset` on and returns them, counted from `offset`
    /// (a leaf split in two: the right half's objects).
    mutating func split(at offset: Int) -> PendingObjects {
        let index = firstIndex(notBelow: offset)
        var right = PendingObjects()
        right.offsets = offsets[index...].map { $0 - offset }
        right.objects = Array(objects[index...])
        offsets.removeSubrange(index...)
        objects.removeSubrange(index...)
        return right
    }

    /// The index in ``offsets`` of the first position at or after `offset`.
    private func firstIndex(notBelow offset: Int) -> Int {
        // Appends, the common change, land past the last position.
        if let last = offsets.last, last < offset { return offsets.count }
        var low = 0, high = offsets.count
        while low < high {
            let middle = (low + high) / 2
            if offsets[middle] < offset { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
