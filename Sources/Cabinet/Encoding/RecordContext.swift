/// What a ``DataBuffer`` knows beyond its bytes when a store made it to be
/// read: the store its references resolve in and the record it holds (for
/// errors). Only what reading needs: what a save needs while writing lives in
/// the ``RecordEncoder`` of the loop that encodes.
///
/// A buffer has at most one, and only when a store made it (a buffer handed to
/// `read(from:)`, a named buffer); a buffer made by `DataBuffer()` or
/// `DataBuffer(bytes:)` has none. It is a value of plain data plus the store's
/// ``ReferenceResolver``, so copies of a buffer are independent and it is
/// `Sendable` (the resolver fences its own use).
struct RecordContext: Sendable {
    /// Turns row IDs into objects of the store; `nil` if the buffer belongs to no store.
    var resolver: ReferenceResolver?
    /// The record the bytes came from, named in the errors reading them throws.
    var location: RecordLocation
    /// The class entry `location` names, so the store's read loops can tell
    /// with one compare that only the row moved (``DataBuffer/pointContext(at:rowID:resolver:)``).
    /// Never dereferenced; only the store's own buffers are pointed, and its
    /// entries live as long as it, so an identifier is never that of a freed entry.
    var entryID: ObjectIdentifier?
    /// The class ID of the record's class: with the row, the scope of the
    /// record's out-of-line lists (`StoredList`).
    var ownerClassID: UInt8?
    /// Set only in the buffer an undo snapshot is read back from: the lists
    /// its bytes name by their place, kept as their trees (``UndoListTrees``).
    var undoLists: UndoListTrees?

    init(resolver: ReferenceResolver? = nil, location: RecordLocation, entryID: ObjectIdentifier? = nil) {
        self.resolver = resolver
        self.location = location
        self.entryID = entryID
    }

    /// Where a buffer that belongs to no record says its bytes came from.
    static let unknownFile = "<DataBuffer>"
}

extension DataBuffer {
    /// Names the record about to be read, `rowID` of `entry`'s class, and lets
    /// its references resolve through `resolver`. The read loops call it per
    /// record: the context is made once per class, after which only the row moves.
    @inline(__always)
    mutating func pointContext(at entry: ClassEntry, rowID: UInt32, resolver: ReferenceResolver) {
        if context?.entryID == ObjectIdentifier(entry) {
            context!.location.rowID = rowID
        } else {
            context = RecordContext(resolver: resolver, location: entry.location(row: rowID), entryID: ObjectIdentifier(entry))
            context!.ownerClassID = entry.metadata.classID
        }
    }

    /// The location named in errors thrown while reading.
    var location: RecordLocation {
        context?.location ?? RecordLocation(file: RecordContext.unknownFile)
    }
}
