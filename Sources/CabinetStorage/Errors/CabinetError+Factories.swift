/// One factory a code, named and labelled as the code's parts, for throwing:
///
/// ```swift
/// throw CabinetError.malformedRecord(location, reason: "a length of -1")
/// ```
extension CabinetError {
    /// A ``Code/notADirectory`` error: `path` is a file.
    public static func notADirectory(path: String) -> CabinetError {
        CabinetError(.notADirectory, path: path)
    }

    /// A ``Code/cannotAccessDirectory`` error: the store directory `path` could not be created or read.
    public static func cannotAccessDirectory(path: String, reason: String) -> CabinetError {
        CabinetError(.cannotAccessDirectory, path: path, reason: reason)
    }

    /// A ``Code/storeLocked`` error: process `pid` (`nil`: unknown) has the store at `path` open.
    ///
    /// ```swift
    /// throw CabinetError.storeLocked(path: "/tmp/music", pid: 4242)
    /// ```
    public static func storeLocked(path: String, pid: Int32?) -> CabinetError {
        CabinetError(.storeLocked, path: path, pid: pid)
    }

    /// A ``Code/notADatabase`` error: the file at `location` is not a Tokyo Cabinet hash database.
    public static func notADatabase(_ location: RecordLocation, reason: String) -> CabinetError {
        CabinetError(.notADatabase, location: location, reason: reason)
    }

    /// A ``Code/backendFailure`` error: Tokyo Cabinet's `operation` on `location`
    /// failed with its error `code` (`tchdbecode`) and `message` (`tchdberrmsg`).
    ///
    /// ```swift
    /// throw CabinetError.backendFailure(RecordLocation(file: path), operation: "write", code: code, message: message)
    /// ```
    public static func backendFailure(_ location: RecordLocation, operation: String, code: Int32, message: String) -> CabinetError {
        backendFailure(location, operation: operation, underlying: .tokyoCabinet(code: code, message: message))
    }

    /// A ``Code/backendFailure`` error of any backend: its `operation` on
    /// `location` failed, as `underlying` says in the backend's own domain (a
    /// backend that is not Tokyo Cabinet must not pass its codes off as Tokyo Cabinet's).
    ///
    /// ```swift
    /// let redis = CabinetError.Underlying(domain: .init(rawValue: "redis"), code: 1, message: "connection lost")
    /// throw CabinetError.backendFailure(RecordLocation(file: "redis://host/music/Song"), operation: "GET", underlying: redis)
    /// ```
    public static func backendFailure(_ location: RecordLocation, operation: String, underlying: Underlying) -> CabinetError {
        CabinetError(.backendFailure, location: location, underlying: underlying, operation: operation)
    }

    /// A ``Code/systemCallFailure`` error: the system call behind `operation` on
    /// `location` failed with `errno`, which `message` explains.
    ///
    /// ```swift
    /// throw CabinetError.systemCallFailure(RecordLocation(file: path), operation: "rename", errno: errno,
    ///                                      message: String(cString: strerror(errno)))
    /// ```
    public static func systemCallFailure(_ location: RecordLocation, operation: String, errno: Int32, message: String) -> CabinetError {
        CabinetError(.systemCallFailure, location: location, underlying: .posix(errno: errno, message: message), operation: operation)
    }

    /// A ``Code/truncatedRecord`` error: reading `needed` bytes at `offset` of the
    /// record at `location` found only `available`.
    public static func truncatedRecord(_ location: RecordLocation, offset: Int, needed: Int, available: Int) -> CabinetError {
        CabinetError(.truncatedRecord, location: location, offset: offset, needed: needed, available: available)
    }

    /// A ``Code/malformedRecord`` error: the record at `location` does not decode, for `reason`.
    public static func malformedRecord(_ location: RecordLocation, reason: String) -> CabinetError {
        CabinetError(.malformedRecord, location: location, reason: reason)
    }

    /// A ``Code/checksumMismatch`` error: the record at `location` was damaged on disk.
    public static func checksumMismatch(_ location: RecordLocation, reason: String) -> CabinetError {
        CabinetError(.checksumMismatch, location: location, reason: reason)
    }

    /// An ``Code/unsupportedFormat`` error: the store at `path` cannot be opened in its format.
    public static func unsupportedFormat(path: String, reason: String) -> CabinetError {
        CabinetError(.unsupportedFormat, path: path, reason: reason)
    }

    /// A ``Code/malformedMetadata`` error: the metadata row at `location` is damaged.
    public static func malformedMetadata(_ location: RecordLocation, reason: String) -> CabinetError {
        CabinetError(.malformedMetadata, location: location, reason: reason)
    }

    /// A ``Code/newerVersion`` error: the record at `location` was written by
    /// `recordVersion` of its class, newer than the `classVersion` declared.
    public static func newerVersion(_ location: RecordLocation, recordVersion: UInt8, classVersion: UInt8) -> CabinetError {
        CabinetError(.newerVersion, location: location, recordVersion: recordVersion, classVersion: classVersion)
    }

    /// A ``Code/missingRecord`` error: there is no record at `location`.
    ///
    /// ```swift
    /// throw CabinetError.missingRecord(RecordLocation(file: path, className: "Song", rowID: 7))
    /// ```
    public static func missingRecord(_ location: RecordLocation) -> CabinetError {
        CabinetError(.missingRecord, location: location)
    }

    /// An ``Code/unknownClassID`` error: the record at `location` refers to `classID`, which no registered class has.
    public static func unknownClassID(_ location: RecordLocation, classID: UInt8) -> CabinetError {
        CabinetError(.unknownClassID, location: location, classID: classID)
    }

    /// A ``Code/classNotRegistered`` error: `className` was used before `register(_:)`.
    public static func classNotRegistered(className: String) -> CabinetError {
        CabinetError(.classNotRegistered, className: className)
    }

    /// A ``Code/classConflict`` error: `className` cannot be registered because of another class, for `reason`.
    public static func classConflict(className: String, reason: String) -> CabinetError {
        CabinetError(.classConflict, reason: reason, className: className)
    }

    /// An ``Code/invalidModel`` error: class `className` can't be stored as it is written, for `reason`.
    public static func invalidModel(className: String, reason: String) -> CabinetError {
        CabinetError(.invalidModel, reason: reason, className: className)
    }

    /// A ``Code/layoutChanged`` error: `className`'s records of `recordVersion` were
    /// written in another layout than the class now declares for that version;
    /// `reason` says what changed and what to do.
    ///
    /// ```swift
    /// throw CabinetError.layoutChanged(className: "Album", recordVersion: 1,
    ///                                  reason: "raise the version and mark the removed property @Removed(in: 2)")
    /// ```
    public static func layoutChanged(className: String, recordVersion: UInt8, reason: String) -> CabinetError {
        CabinetError(.layoutChanged, reason: reason, recordVersion: recordVersion, className: className)
    }

    /// A ``Code/tooManyClasses`` error: `className` cannot be registered, the store
    /// already has `limit` classes.
    public static func tooManyClasses(className: String, limit: Int) -> CabinetError {
        CabinetError(.tooManyClasses, limit: limit, className: className)
    }

    /// A ``Code/referenceToUninsertedObject`` error: the object at `location`
    /// refers to a `targetClass` that was never inserted.
    public static func referenceToUninsertedObject(_ location: RecordLocation, targetClass: String) -> CabinetError {
        CabinetError(.referenceToUninsertedObject, location: location, targetClass: targetClass)
    }

    /// An ``Code/unloadedObjectModified`` error: the object at `location` was changed but never loaded.
    public static func unloadedObjectModified(_ location: RecordLocation) -> CabinetError {
        CabinetError(.unloadedObjectModified, location: location)
    }

    /// A ``Code/staleList`` error: the list saved into the record at `location` is a copy taken before a later save of the same list (saving it would drop that save's changes).
    public static func staleList(_ location: RecordLocation, reason: String) -> CabinetError {
        CabinetError(.staleList, location: location, reason: reason)
    }

    /// An ``Code/unsavedChanges`` error: `className` has unsaved changes.
    public static func unsavedChanges(className: String) -> CabinetError {
        CabinetError(.unsavedChanges, className: className)
    }

    /// A ``Code/noStoreForReferences`` error: a reference was read from a buffer of no store.
    ///
    /// ```swift
    /// throw CabinetError.noStoreForReferences
    /// ```
    public static var noStoreForReferences: CabinetError {
        CabinetError(.noStoreForReferences)
    }

    /// A ``Code/readOnly`` error: the store at `path` is open read-only.
    public static func readOnly(path: String, reason: String) -> CabinetError {
        CabinetError(.readOnly, path: path, reason: reason)
    }

    /// An ``Code/unindexableValue`` error: the object at `location` has a value `index` cannot order.
    public static func unindexableValue(_ location: RecordLocation, index: String, reason: String) -> CabinetError {
        CabinetError(.unindexableValue, location: location, reason: reason, name: index)
    }

    /// A ``Code/noSuchIndex`` error: `className` has no index answering the query (`reason` says which and what to do).
    public static func noSuchIndex(className: String, reason: String) -> CabinetError {
        CabinetError(.noSuchIndex, reason: reason, className: className)
    }

    /// An ``Code/invalidName`` error: `name` is not a valid named-buffer name.
    public static func invalidName(_ name: String) -> CabinetError {
        CabinetError(.invalidName, name: name)
    }

    /// A ``Code/storeClosed`` error: the store at `path` was closed.
    public static func storeClosed(path: String) -> CabinetError {
        CabinetError(.storeClosed, path: path)
    }

    /// A ``Code/valueTooLarge`` error: the value for `location` is `size` bytes, over `limit`.
    public static func valueTooLarge(_ location: RecordLocation, size: Int, limit: Int) -> CabinetError {
        CabinetError(.valueTooLarge, location: location, size: size, limit: limit)
    }

    /// A ``Code/saveNotFinished`` error: the save is committed to the store at
    /// `path`, but writing it to the class files failed for `reason`.
    public static func saveNotFinished(path: String, reason: String) -> CabinetError {
        CabinetError(.saveNotFinished, path: path, reason: reason)
    }

    /// A ``Code/missingClassFile`` error: the class file at `location`, which the
    /// catalog lists (with `classID`, if any), is gone.
    public static func missingClassFile(_ location: RecordLocation, classID: UInt8?) -> CabinetError {
        CabinetError(.missingClassFile, location: location, classID: classID)
    }

    /// An ``Code/invalidStoredName`` error: `className`'s stored `name` cannot be its file's name, for `reason`.
    public static func invalidStoredName(className: String, name: String, reason: String) -> CabinetError {
        CabinetError(.invalidStoredName, reason: reason, className: className, name: name)
    }

    /// A ``Code/notAStore`` error: `path` is not an existing store.
    public static func notAStore(path: String, reason: String) -> CabinetError {
        CabinetError(.notAStore, path: path, reason: reason)
    }

    /// A ``Code/recoveryPending`` error: a read-only open of `path` found a save to finish.
    public static func recoveryPending(path: String, reason: String) -> CabinetError {
        CabinetError(.recoveryPending, path: path, reason: reason)
    }

    /// A ``Code/saveConflict`` error: another process saved what this save would
    /// change in the shared store at `path` first, for `reason`; nothing was written.
    public static func saveConflict(path: String, reason: String) -> CabinetError {
        CabinetError(.saveConflict, path: path, reason: reason)
    }

    /// A ``Code/foreignByteOrder`` error: the Tokyo Cabinet file at `location` is in
    /// `layout`, which this machine's Tokyo Cabinet does not read; `store` is its directory.
    ///
    /// ```swift
    /// throw CabinetError.foreignByteOrder(RecordLocation(file: "/mnt/mac/library/Song"), store: "/mnt/mac/library", layout: .littleEndian)
    /// ```
    public static func foreignByteOrder(_ location: RecordLocation, store: String, layout: TokyoCabinetByteOrder) -> CabinetError {
        CabinetError(.foreignByteOrder, location: location, path: store, reason: "\(layout.rawValue) layout (\(layout.writers))")
    }

    /// A ``Code/durabilityUnavailable`` error: the store at `path` cannot flush a
    /// batch as asked, for `reason` (which says what to configure); nothing was written.
    ///
    /// ```swift
    /// throw CabinetError.durabilityUnavailable(path: "redis://cache:6379/music", reason: "appendfsync is everysec; set it to always")
    /// ```
    public static func durabilityUnavailable(path: String, reason: String) -> CabinetError {
        CabinetError(.durabilityUnavailable, path: path, reason: reason)
    }

    /// A ``Code/durabilityUnconfirmed`` error: the batch is committed to the store
    /// at `path`, but its flush to stable storage was not confirmed, for `reason`.
    ///
    /// ```swift
    /// throw CabinetError.durabilityUnconfirmed(path: "redis://cache:6379/music", reason: "WAITAOF timed out after 5 s")
    /// ```
    public static func durabilityUnconfirmed(path: String, reason: String) -> CabinetError {
        CabinetError(.durabilityUnconfirmed, path: path, reason: reason)
    }
}

extension CabinetError {
    /// What ``TransactionalTable/beginTransaction()`` throws while a transaction of the
    /// table at `path` is open: the open one stays as it was.
    package static func transactionAlreadyOpen(path: String) -> CabinetError {
        .backendFailure(RecordLocation(file: path), operation: "begin a transaction", code: 0,
                        message: "a transaction of this table is already open; commit or abort it first")
    }

    /// What ``JournaledCommit`` throws for a backend whose tables have no
    /// transactions of their own (a wrapper that forgot to forward them).
    package static func tablesWithoutTransactions(_ location: RecordLocation) -> CabinetError {
        .backendFailure(location, operation: "commit a batch", code: 0,
                        message: "JournaledCommit commits through tables with transactions of their own, and this backend's tables have none: its commit(_:) must apply a batch itself")
    }
}
