/// Where in a store something happened: the file, the stored class and the row.
///
/// Every ``CabinetError`` that concerns stored data carries one, so a message
/// can say exactly which record of which file is involved.
public struct RecordLocation: Hashable, Sendable, CustomStringConvertible {
    /// The path of the database file (or the in-memory table's name).
    public var file: String
    /// The stored class name (``StoredObject/storedName``), or `nil` for named buffers.
    public var className: String?
    /// The row ID, or `nil` when the problem concerns the whole file.
    public var rowID: UInt32?

    public init(file: String, className: String? = nil, rowID: UInt32? = nil) {
        self.file = file
        self.className = className
        self.rowID = rowID
    }

    public var description: String {
        var text = "'\(file)'"
        if let className { text += ", class \(className)" }
        if let rowID { text += ", row \(rowID)" }
        return text
    }
}

/// The one error type Cabinet throws.
///
/// Switch on the case to react; print it (``description``) to tell a person what
/// happened, where, and what to do:
/// ```swift
/// do {
///     let store = try ObjectStore(path: "/tmp/music")
/// } catch CabinetError.storeLocked(let path, let pid) {
///     print("\(path) is in use by process \(pid.map(String.init) ?? "?")")
/// } catch {
///     print(error)
/// }
/// ```
public enum CabinetError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The store path exists and is not a directory.
    case notADirectory(path: String)
    /// The store directory could not be created or read.
    case cannotAccessDirectory(path: String, reason: String)
    /// Another process (or another `ObjectStore` in this process) has the store open.
    case storeLocked(path: String, pid: Int32?)
    /// A class file exists but is not a Tokyo Cabinet hash database.
    case notADatabase(RecordLocation, reason: String)
    /// The storage backend reported an error: Tokyo Cabinet's error code, or errno for the journal.
    case backendFailure(RecordLocation, operation: String, code: Int32, message: String)
    /// A record is shorter than what its reader asked for.
    case truncatedRecord(RecordLocation, offset: Int, needed: Int, available: Int)
    /// A record's bytes do not decode: a bad length, invalid UTF-8, a bad key.
    case malformedRecord(RecordLocation, reason: String)
    /// A record's checksum does not match its bytes: it was damaged on disk.
    case checksumMismatch(RecordLocation, reason: String)
    /// The store's format marker names a format this version does not know, or
    /// the options ask for a format the store was not written in.
    case unsupportedFormat(path: String, reason: String)
    /// A class's metadata row (row 1) is damaged.
    case malformedMetadata(RecordLocation, reason: String)
    /// A record was written by a newer version of its class than this program declares.
    case newerVersion(RecordLocation, recordVersion: UInt8, classVersion: UInt8)
    /// A fault or fetch names a row that is not in its class's file (deleted, or a damaged reference).
    case missingRecord(RecordLocation)
    /// A heterogeneous reference names a class ID no registered class has.
    case unknownClassID(RecordLocation, classID: UInt8)
    /// A class was used before `register(_:)`.
    case classNotRegistered(className: String)
    /// Two registered Swift classes claim the same file, or a file's class ID clashes.
    case classConflict(className: String, reason: String)
    /// An object being saved refers to an object that was never inserted.
    case referenceToUninsertedObject(RecordLocation, targetClass: String)
    /// An object whose content could not be loaded was changed; saving it would overwrite the damaged record.
    case unloadedObjectModified(RecordLocation)
    /// An operation that rewrites a whole class (an upgrade) found unsaved changes to it.
    case unsavedChanges(className: String)
    /// A reference was read from a buffer that belongs to no store.
    case noStoreForReferences
    /// The store was opened read-only and the operation would write.
    case readOnly(path: String, reason: String)
    /// A named-buffer name is empty or too long.
    case invalidName(String)
    /// The store was closed.
    case storeClosed(path: String)
    /// A record or named buffer is larger than the backend can store.
    case valueTooLarge(RecordLocation, size: Int, limit: Int)
    /// A save's changes are committed (in the store's journal) but could not all
    /// be written to the class files yet; the next save, or the next open,
    /// finishes writing them. The objects count as saved.
    case saveNotFinished(path: String, reason: String)
    /// The store's catalog lists a class file that is not there.
    case missingClassFile(RecordLocation, classID: UInt8?)
    /// A stored name would collide with a file the store uses for something else.
    case invalidStoredName(className: String, name: String, reason: String)
    /// The path was to be opened as an existing store (a maintenance tool, or
    /// `createIfMissing: false`) and is not one: missing, empty, or some other folder.
    case notAStore(path: String, reason: String)
    /// A read-only open found work that only a writable open may do: a save's
    /// journal to replay, or a class file's interrupted transaction to roll back.
    /// Until then the files may be half-written, so nothing is read from them.
    case recoveryPending(path: String, reason: String)

    /// The location involved, when the error concerns stored data.
    public var location: RecordLocation? {
        switch self {
        case .notADatabase(let l, _), .backendFailure(let l, _, _, _), .truncatedRecord(let l, _, _, _),
             .malformedRecord(let l, _), .malformedMetadata(let l, _), .checksumMismatch(let l, _), .newerVersion(let l, _, _),
             .unknownClassID(let l, _), .missingRecord(let l), .referenceToUninsertedObject(let l, _), .unloadedObjectModified(let l),
             .valueTooLarge(let l, _, _), .missingClassFile(let l, _):
            return l
        default:
            return nil
        }
    }

    public var description: String {
        switch self {
        case .notADirectory(let path):
            return "Cabinet: '\(path)' is a file, not a store directory. Pass the path of a directory (it is created if missing)."
        case .cannotAccessDirectory(let path, let reason):
            return "Cabinet: cannot use the store directory '\(path)': \(reason). Check the path and its permissions."
        case .storeLocked(let path, let pid):
            let who = pid.map { "process \($0)" } ?? "another process"
            return "Cabinet: the store '\(path)' is locked by \(who). Close it there first, or open a copy."
        case .notADatabase(let l, let reason):
            return "Cabinet: \(l) is not a Tokyo Cabinet hash database (\(reason)). Move the file away or restore it from a backup; the other classes are unaffected."
        case .backendFailure(let l, let op, let code, let message):
            return "Cabinet: \(op) failed on \(l): \(message) (error code \(code))."
        case .truncatedRecord(let l, let offset, let needed, let available):
            return "Cabinet: the record at \(l) is truncated: reading \(needed) bytes at offset \(offset), only \(available) left. The record is damaged or was written by a different class layout."
        case .malformedRecord(let l, let reason):
            return "Cabinet: the record at \(l) is malformed: \(reason)."
        case .checksumMismatch(let l, let reason):
            return "Cabinet: the record at \(l) is damaged: its checksum does not match (\(reason)). Restore it from a backup; `cabinet verify` lists every damaged record."
        case .unsupportedFormat(let path, let reason):
            return "Cabinet: cannot open the store '\(path)': \(reason)."
        case .malformedMetadata(let l, let reason):
            return "Cabinet: the metadata row of \(l) is damaged: \(reason). Restore the file from a backup."
        case .newerVersion(let l, let recordVersion, let classVersion):
            return "Cabinet: the record at \(l) was written by version \(recordVersion) of its class, but this program declares version \(classVersion). Open the store with the newer program."
        case .missingRecord(let l):
            return "Cabinet: there is no record at \(l). The object was deleted, or a reference to it is damaged."
        case .unknownClassID(let l, let classID):
            return "Cabinet: the record at \(l) refers to class ID \(classID), which no registered class has. Register every class of the store before reading it."
        case .classNotRegistered(let className):
            return "Cabinet: \(className) is not registered with this store. Call store.register(\(className).self) first."
        case .classConflict(let className, let reason):
            return "Cabinet: cannot register \(className): \(reason)."
        case .referenceToUninsertedObject(let l, let target):
            return "Cabinet: the object at \(l) refers to a \(target) that was never inserted. Insert it (store.insert(_:)) before saving."
        case .unloadedObjectModified(let l):
            return "Cabinet: the object at \(l) was changed but its stored content could not be loaded; saving it would overwrite the damaged record. Fetch it again with store.fetch to see the error."
        case .unsavedChanges(let className):
            return "Cabinet: \(className) has unsaved changes. Save (or undo) them before upgrading the class."
        case .noStoreForReferences:
            return "Cabinet: this DataBuffer belongs to no store, so it cannot turn row IDs into objects. Read references from buffers the store hands you."
        case .invalidName(let name):
            return "Cabinet: '\(name)' is not a valid named-buffer name (1 to 4096 UTF-8 bytes)."
        case .readOnly(let path, let reason):
            return "Cabinet: the store '\(path)' is open read-only: \(reason). Open it without readOnly to change it."
        case .storeClosed(let path):
            return "Cabinet: the store '\(path)' is closed. Open it again with ObjectStore(path:)."
        case .valueTooLarge(let l, let size, let limit):
            return "Cabinet: the value for \(l) is \(size) bytes, more than the \(limit) a record can hold. Nothing was written; split the data over several objects or named buffers."
        case .saveNotFinished(let path, let reason):
            return "Cabinet: the save is committed to the store '\(path)' (its journal holds every change), but writing it to the class files failed: \(reason). The objects count as saved; the next save, or the next open of the store, finishes writing them."
        case .missingClassFile(let l, let classID):
            let id = classID.map { " (class ID \($0))" } ?? ""
            return "Cabinet: \(l) is missing: the store's catalog lists the class\(id), but its file is gone. Opening it empty would lose its objects and break references to them; restore the file from a backup (`cabinet restore`), or put it back where it was."
        case .invalidStoredName(let className, let name, let reason):
            return "Cabinet: cannot register \(className): its stored name '\(name)' \(reason). Give the class another storedName."
        case .notAStore(let path, let reason):
            return "Cabinet: '\(path)' is not a Cabinet store: \(reason). Check the path; this operation opens only an existing store and never creates one."
        case .recoveryPending(let path, let reason):
            return "Cabinet: the store '\(path)' has a save to finish (\(reason)); open it writable once to finish it (the app, or `cabinet compact`). A read-only open writes nothing, so it cannot."
        }
    }
}
