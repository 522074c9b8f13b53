extension StorePool {
    /// One committed save, as ``StorePool/changes`` delivers it: the rows it
    /// inserted, updated and deleted in each class, and the named buffers it set or removed.
    /// A save is a write block's (or a `save()` inside one): blocks committed
    /// together in one group commit give one change each, in the order they ran,
    /// delivered once the group is committed.
    ///
    /// ```swift
    /// for await change in pool.changes {
    ///     print(change)      // "save 3: Note inserted [12] updated [] deleted []"
    ///     if let notes = change.changes(of: Note.self), notes.deleted.contains(id) { … }
    /// }
    /// ```
    public struct Change: Sendable, Equatable, CustomStringConvertible {
        /// The save's place among the pool's commits: 1 for the first, then 2, 3, …
        /// (saves that changed no row and no named buffer are not numbered).
        public let sequence: UInt64
        /// The classes whose rows the save changed, by stored name.
        public let classes: [ClassChange]
        /// The named buffers the save set or removed, by name.
        public let namedBuffers: [String]
        /// Whether another process made the save (a backend several processes
        /// write, as Redis): its rows are all in ``ClassChange/updated``, since
        /// the store's log says which rows a save wrote or removed, not which.
        public internal(set) var isFromAnotherProcess = false

        /// What the save changed in `type`'s rows; `nil` if nothing.
        public func changes(of type: StoredObject.Type) -> ClassChange? {
            classes.first { $0.className == type.storedName }
        }

        /// One line for a log: `save 3: Note inserted [12] updated [] deleted []; Notebook …`.
        public var description: String {
            let parts = classes.map(\.description) + (namedBuffers.isEmpty ? [] : ["named buffers \(namedBuffers)"])
            return "save \(sequence)\(isFromAnotherProcess ? " (another process)" : ""): " + parts.joined(separator: "; ")
        }
    }

    /// The rows of one class that a save changed.
    ///
    /// ```swift
    /// if let notes = change.changes(of: Note.self) {
    ///     print(notes.className, notes.inserted, notes.updated, notes.deleted)
    /// }
    /// ```
    public struct ClassChange: Sendable, Equatable, CustomStringConvertible {
        /// The class's ``StoredObject/storedName`` (its file's name; the class's name unless it says otherwise).
        public let className: String
        /// Row IDs of objects the save inserted, in the order they were inserted.
        public let inserted: [UInt32]
        /// Row IDs of objects whose content the save wrote anew.
        public let updated: [UInt32]
        /// Row IDs of objects the save deleted.
        public let deleted: [UInt32]
        /// Whether any row of the class may have changed, beyond those listed: a
        /// save of another process too large for the log to list its rows, or a restore.
        public internal(set) var wholeClass = false

        var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }

        /// `Note inserted [12] updated [4] deleted []`.
        public var description: String {
            wholeClass ? "\(className) all rows" : "\(className) inserted \(inserted) updated \(updated) deleted \(deleted)"
        }
    }
}
