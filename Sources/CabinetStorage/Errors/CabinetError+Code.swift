extension CabinetError {
    /// What kind of error a ``CabinetError`` is.
    ///
    /// Compare it, or switch over it with a `default:` (codes can be added in any
    /// release; adding one breaks no app):
    /// ```swift
    /// switch error.code {
    /// case .storeLocked: print("close the store in the other process first")
    /// case .missingRecord: print("the object was deleted")
    /// default: print(error)
    /// }
    /// ```
    /// A code is also a `catch` pattern of its own, as `URLError`'s codes are:
    /// ```swift
    /// do {
    ///     try store.load(song)
    /// } catch CabinetError.Code.storeClosed {
    ///     print("open the store again")
    /// }
    /// ```
    /// Each code's documentation says which of the error's properties it sets.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code's name, as in `"storeLocked"`.
        public let rawValue: String

        /// A code by name; Cabinet's own are the static members (``storeLocked``, …).
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The code's name.
        public var description: String { rawValue }

        /// The store path exists and is not a directory. Sets ``CabinetError/path``.
        public static let notADirectory = Code(rawValue: "notADirectory")
        /// The store directory could not be created or read. Sets ``CabinetError/path``, ``CabinetError/reason``.
        public static let cannotAccessDirectory = Code(rawValue: "cannotAccessDirectory")
        /// Another process (or another `ObjectStore` in this process) has the store open.
        /// Sets ``CabinetError/path``, and ``CabinetError/pid`` when the lock names its holder.
        public static let storeLocked = Code(rawValue: "storeLocked")
        /// A class file exists but is not a Tokyo Cabinet hash database.
        /// Sets ``CabinetError/location``, ``CabinetError/reason``.
        public static let notADatabase = Code(rawValue: "notADatabase")
        /// The backend reported an error. Sets ``CabinetError/location``,
        /// ``CabinetError/operation``, and ``CabinetError/underlying``: in the
        /// ``Underlying/Domain/tokyoCabinet`` domain for Tokyo Cabinet, in its own for another backend.
        public static let backendFailure = Code(rawValue: "backendFailure")
        /// A call to the operating system failed (opening, writing, renaming, syncing
        /// Cabinet's own files: the journal, the catalog, temporaries). Sets
        /// ``CabinetError/location``, ``CabinetError/operation``, and
        /// ``CabinetError/underlying`` in the ``Underlying/Domain/posix`` domain (its `errno`).
        public static let systemCallFailure = Code(rawValue: "systemCallFailure")
        /// A record is shorter than what its reader asked for. Sets ``CabinetError/location``,
        /// ``CabinetError/offset``, ``CabinetError/needed``, ``CabinetError/available``.
        public static let truncatedRecord = Code(rawValue: "truncatedRecord")
        /// A record's bytes do not decode: a bad length, invalid UTF-8, a bad key.
        /// Sets ``CabinetError/location``, ``CabinetError/reason``.
        public static let malformedRecord = Code(rawValue: "malformedRecord")
        /// A record's checksum does not match its bytes: it was damaged on disk.
        /// Sets ``CabinetError/location``, ``CabinetError/reason``.
        public static let checksumMismatch = Code(rawValue: "checksumMismatch")
        /// The store's format marker names a format this version does not know, or
        /// the options ask for a format the store was not written in.
        /// Sets ``CabinetError/path``, ``CabinetError/reason``.
        public static let unsupportedFormat = Code(rawValue: "unsupportedFormat")
        /// A class's metadata row (row 1) is damaged. Sets ``CabinetError/location``, ``CabinetError/reason``.
        public static let malformedMetadata = Code(rawValue: "malformedMetadata")
        /// A record was written by a newer version of its class than this program declares.
        /// Sets ``CabinetError/location``, ``CabinetError/recordVersion``, ``CabinetError/classVersion``.
        public static let newerVersion = Code(rawValue: "newerVersion")
        /// A fault or fetch names a row that is not in its class's file (deleted, or a
        /// damaged reference). Sets ``CabinetError/location``.
        public static let missingRecord = Code(rawValue: "missingRecord")
        /// A heterogeneous reference names a class ID no registered class has.
        /// Sets ``CabinetError/location``, ``CabinetError/classID``.
        public static let unknownClassID = Code(rawValue: "unknownClassID")
        /// A class was used before `register(_:)`. Sets ``CabinetError/className``.
        public static let classNotRegistered = Code(rawValue: "classNotRegistered")
        /// Two registered Swift classes claim the same file, or a file's class ID clashes
        /// with another registered class's. Sets ``CabinetError/className``, ``CabinetError/reason``.
        public static let classConflict = Code(rawValue: "classConflict")
        /// A class can't be stored as it is written, such as one that declares
        /// `@Stored` properties but whose `write(to:)` writes nothing (it was not
        /// overridden). Sets ``CabinetError/className``, ``CabinetError/reason``.
        public static let invalidModel = Code(rawValue: "invalidModel")
        /// A class's layout of a version differs from the layout that version's
        /// records were written in: a stored property was removed, moved or retyped
        /// without raising the class's version (`StoredObject.layoutFingerprints`, in Cabinet).
        /// Reading on would misread every such record, so the class is refused before
        /// any is read. Sets ``CabinetError/className``, ``CabinetError/recordVersion``
        /// (the version whose layout changed) and ``CabinetError/reason`` (what to do).
        public static let layoutChanged = Code(rawValue: "layoutChanged")
        /// The store has as many classes as a class ID can name, so no other class can
        /// be registered. Sets ``CabinetError/className``, ``CabinetError/limit``.
        public static let tooManyClasses = Code(rawValue: "tooManyClasses")
        /// An object being saved refers to an object that was never inserted.
        /// Sets ``CabinetError/location``, ``CabinetError/targetClass``.
        public static let referenceToUninsertedObject = Code(rawValue: "referenceToUninsertedObject")
        /// An object whose content could not be loaded was changed; saving it would
        /// overwrite the damaged record. Sets ``CabinetError/location``.
        public static let unloadedObjectModified = Code(rawValue: "unloadedObjectModified")
        /// An operation that rewrites a whole class (an upgrade) found unsaved changes to it.
        /// Sets ``CabinetError/className``.
        public static let unsavedChanges = Code(rawValue: "unsavedChanges")
        /// A `StoredList` copied before a later save of the same list was saved
        /// again, which would drop that save's changes. Sets ``CabinetError/location``, ``CabinetError/reason``.
        public static let staleList = Code(rawValue: "staleList")
        /// An object's value cannot go into one of its class's indexes (NaN in a
        /// `Float64` index); nothing was saved. Sets ``CabinetError/location``,
        /// ``CabinetError/name`` (the index), ``CabinetError/reason``.
        public static let unindexableValue = Code(rawValue: "unindexableValue")
        /// A query names a property its class declares no index of that kind on, or
        /// an index a read-only store has not built yet. Sets ``CabinetError/className``, ``CabinetError/reason``.
        public static let noSuchIndex = Code(rawValue: "noSuchIndex")
        /// A reference was read from a buffer that belongs to no store. Sets nothing else.
        public static let noStoreForReferences = Code(rawValue: "noStoreForReferences")
        /// The store was opened read-only and the operation would write.
        /// Sets ``CabinetError/path``, ``CabinetError/reason``.
        public static let readOnly = Code(rawValue: "readOnly")
        /// A named-buffer name is empty or too long. Sets ``CabinetError/name``.
        public static let invalidName = Code(rawValue: "invalidName")
        /// The store was closed. Sets ``CabinetError/path``.
        public static let storeClosed = Code(rawValue: "storeClosed")
        /// A record or named buffer is larger than the backend can store.
        /// Sets ``CabinetError/location``, ``CabinetError/size``, ``CabinetError/limit``.
        public static let valueTooLarge = Code(rawValue: "valueTooLarge")
        /// A save's changes are committed (in the store's journal) but could not all
        /// be written to the class files yet; the next save, or the next open,
        /// finishes writing them. The objects count as saved.
        /// Sets ``CabinetError/path``, ``CabinetError/reason``.
        public static let saveNotFinished = Code(rawValue: "saveNotFinished")
        /// The store's catalog lists a class file that is not there.
        /// Sets ``CabinetError/location``, and ``CabinetError/classID`` if the catalog lists one.
        public static let missingClassFile = Code(rawValue: "missingClassFile")
        /// A class's stored name cannot be a file name in the store: it is malformed,
        /// or it is the name of a file the store uses for something else.
        /// Sets ``CabinetError/className``, ``CabinetError/name``, ``CabinetError/reason``.
        public static let invalidStoredName = Code(rawValue: "invalidStoredName")
        /// The path was to be opened as an existing store (a maintenance tool, or
        /// `createIfMissing: false`) and is not one: missing, empty, or some other folder.
        /// Sets ``CabinetError/path``, ``CabinetError/reason``.
        public static let notAStore = Code(rawValue: "notAStore")
        /// A read-only open found work that only a writable open may do: a save's
        /// journal to replay, or a class file's interrupted transaction to roll back.
        /// Until then the files may be half-written, so nothing is read from them.
        /// Sets ``CabinetError/path``, ``CabinetError/reason``.
        public static let recoveryPending = Code(rawValue: "recoveryPending")
        /// Another process saved the same records (or the same index) of a shared
        /// store first, so this save would overwrite what it has not seen: nothing
        /// was written and the changes stay pending. Sets ``CabinetError/path``,
        /// ``CabinetError/reason``. Call `refresh` on the objects involved (or reopen) and save again.
        public static let saveConflict = Code(rawValue: "saveConflict")
        /// A Tokyo Cabinet file of the store is in the other byte order than this
        /// machine's Tokyo Cabinet writes: a store copied from a Mac (little-endian) to
        /// Debian (big-endian), or back. Nothing was read or written. Sets
        /// ``CabinetError/location`` (the file) and ``CabinetError/reason`` (its layout).
        /// Convert a copy with `cabinet import` (`ObjectStore.importStore(from:to:)`).
        public static let foreignByteOrder = Code(rawValue: "foreignByteOrder")
        /// A save asked for ``CommitDurability/flushed`` and the backend cannot
        /// promise it (a Redis server that does not fsync its append-only file at
        /// every write). Nothing was written and the changes stay pending: save
        /// again once the backend is configured for it, or at the default level.
        /// Sets ``CabinetError/path``, ``CabinetError/reason`` (what to configure).
        public static let durabilityUnavailable = Code(rawValue: "durabilityUnavailable")
        /// A save asked for ``CommitDurability/flushed``: it was committed, but the
        /// backend did not confirm in time that it reached stable storage (a Redis
        /// server's `WAITAOF` timed out). The objects count as saved; a power loss
        /// may still lose it. Sets ``CabinetError/path``, ``CabinetError/reason``.
        public static let durabilityUnconfirmed = Code(rawValue: "durabilityUnconfirmed")

        /// Whether `error` is a ``CabinetError`` with this code: what makes a code a
        /// `catch` (or `case`) pattern.
        ///
        /// ```swift
        /// do { try store.save() } catch CabinetError.Code.readOnly { print("open it writable") }
        /// ```
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? CabinetError)?.code == code
        }
    }
}
