import Foundation

extension CabinetError {
    /// What happened, where (file, class, row) and what to do, for a person to read.
    ///
    /// ```swift
    /// print(error)   // Cabinet: the store '/tmp/music' is locked by process 4242. Close it there first, or open a copy.
    /// ```
    /// Built when asked for, from the error's parts.
    public var description: String {
        let l = location.map(String.init(describing:)) ?? "''"
        let path = path ?? ""
        let reason = reason ?? ""
        let className = className ?? "?"
        switch code {
        case .notADirectory:
            return "Cabinet: '\(path)' is a file, not a store directory. Pass the path of a directory (it is created if missing)."
        case .cannotAccessDirectory:
            // The reason says what to do: an access problem's adds "check the path and its permissions".
            return "Cabinet: cannot use the directory '\(path)': \(reason)."
        case .storeLocked:
            if pid == getpid() {
                return "Cabinet: this process already has the store '\(path)' open (another ObjectStore or StorePool); use that one, or a StorePool for concurrent access, or close it first."
            }
            return "Cabinet: the store '\(path)' is locked by \(pid.map { "process \($0)" } ?? "another process"). Close it there first, or open a copy."
        case .notADatabase:
            return "Cabinet: \(l) is not a Tokyo Cabinet hash database (\(reason)). Move the file away or restore it from a backup; the other classes are unaffected."
        case .backendFailure, .systemCallFailure:
            return "Cabinet: \(operation ?? "an operation") failed on \(l): \(underlying.map(String.init(describing:)) ?? reason)."
        case .truncatedRecord:
            return "Cabinet: the record at \(l) is truncated: reading \(needed ?? 0) bytes at offset \(offset ?? 0), only \(available ?? 0) left. \(self.reason ?? "The record is damaged or was written by a different class layout.")"
        case .malformedRecord:
            return "Cabinet: the record at \(l) is malformed: \(reason)."
        case .checksumMismatch:
            return "Cabinet: the record at \(l) is damaged: its checksum does not match (\(reason)). Restore it from a backup; `cabinet verify` lists every damaged record."
        case .unsupportedFormat:
            return "Cabinet: cannot open the store '\(path)': \(reason)."
        case .malformedMetadata:
            return "Cabinet: the metadata row of \(l) is damaged: \(reason). Restore the file from a backup."
        case .newerVersion:
            return "Cabinet: the record at \(l) was written by version \(recordVersion ?? 0) of its class, but this program declares version \(classVersion ?? 0). Open the store with the newer program."
        case .missingRecord:
            return "Cabinet: there is no record at \(l). The object was deleted, or a reference to it is damaged."
        case .unknownClassID:
            return "Cabinet: the record at \(l) refers to class ID \(classID ?? 0), which no registered class has. Register every class of the store before reading it."
        case .classNotRegistered:
            return "Cabinet: \(className) is not registered with this store. Call store.register(\(className).self) first."
        case .classConflict, .invalidModel, .layoutChanged:
            return "Cabinet: cannot register \(className): \(reason)."
        case .tooManyClasses:
            return "Cabinet: cannot register \(className): the store already has \(limit ?? 0) classes, the most a class ID can name. Keep further classes in another store."
        case .referenceToUninsertedObject:
            let target = targetClass ?? "object"
            return "Cabinet: the object at \(l) refers to \(CabinetError.indefiniteArticle(before: target)) \(target) that was never inserted. Insert it (store.insert(_:)) before saving."
        case .unloadedObjectModified:
            return "Cabinet: the object at \(l) was changed but its stored content could not be loaded; saving it would overwrite the damaged record. Fetch it again with store.fetch to see the error."
        case .staleList:
            return "Cabinet: the StoredList saved into \(l) is a copy taken before the list was last saved, and saving it would drop that save's changes (\(reason)); nothing was written. Change the owner's current list instead; to put a copy's elements back on purpose, save a new list of them (StoredList(copy)) before the list is saved again."
        case .unsavedChanges:
            return "Cabinet: \(className) has unsaved changes. Save (or undo) them before upgrading the class."
        case .unindexableValue:
            return "Cabinet: the object at \(l) cannot be saved: its value for the index \(name ?? "?") \(reason); nothing was written. Change the value, then save again."
        case .noSuchIndex:
            return "Cabinet: \(className) has no \(reason)."
        case .noStoreForReferences:
            return "Cabinet: this DataBuffer belongs to no store, so it cannot turn row IDs into objects. Read references from buffers the store hands you."
        case .invalidName:
            return "Cabinet: '\(name ?? "")' is not a valid named-buffer name (1 to 4096 UTF-8 bytes)."
        case .readOnly:
            return "Cabinet: the store '\(path)' is open read-only: \(reason). Open it without readOnly to change it."
        case .storeClosed:
            return "Cabinet: the store '\(path)' is closed. Open it again with ObjectStore(path:)."
        case .valueTooLarge:
            return "Cabinet: the value for \(l) is \(size ?? 0) bytes, more than the \(limit ?? 0) a record can hold. Nothing was written; split the data over several objects or named buffers."
        case .saveNotFinished:
            return "Cabinet: the save is committed to the store '\(path)' (its journal holds every change), but writing it to the class files failed: \(reason). The objects count as saved; the next save, or the next open of the store, finishes writing them."
        case .missingClassFile:
            return "Cabinet: \(l) is missing: the store's catalog lists the class\(classID.map { " (class ID \($0))" } ?? ""), but its file is gone. Opening it empty would lose its objects and break references to them; restore the file from a backup (`cabinet restore`), or put it back where it was."
        case .invalidStoredName:
            return "Cabinet: cannot register \(className): its stored name '\(name ?? "")' \(reason). Give the class another storedName."
        case .notAStore:
            return "Cabinet: '\(path)' is not a Cabinet store: \(reason). Check the path; this operation opens only an existing store and never creates one."
        case .recoveryPending:
            return "Cabinet: the store '\(path)' has a save to finish (\(reason)); open it writable once to finish it (the app, or `cabinet compact`). A read-only open writes nothing, so it cannot."
        case .saveConflict:
            return "Cabinet: another process saved the store '\(path)' first (\(reason)); nothing of this save was written and its changes are still pending. Call refresh(discardingConflicts: true) to take that save (it discards your changes to the objects it changed), apply them again, then save."
        case .foreignByteOrder:
            return "Cabinet: \(l) is a Tokyo Cabinet file in \(reason); this machine's Tokyo Cabinet writes the other layout and cannot open it. The store was probably copied from a Mac: convert it with `cabinet import '\(path)' NEWSTORE`, which only reads it and writes a new store with the same content."
        case .durabilityUnavailable:
            return "Cabinet: the save asked to be flushed to stable storage, which the store '\(path)' cannot promise: \(reason). Nothing was written and the changes are still pending; save again once the store is configured for it, or save without durability: .flushed."
        case .durabilityUnconfirmed:
            return "Cabinet: the save is committed to the store '\(path)', but it was not confirmed to be on stable storage: \(reason). The objects count as saved (don't save them again); a power loss before the server flushes may lose it."
        default:
            let place = location.map { " at \($0)" } ?? self.path.map { " in the store '\($0)'" } ?? ""
            return "Cabinet: \(code)\(place)" + (self.reason.map { ": \($0)." } ?? ".")
        }
    }
}

extension CabinetError {
    /// "a" or "an" before a class name, by its first letter: "an Author", "a Song".
    static func indefiniteArticle(before word: String) -> String {
        guard let first = word.first else { return "a" }
        return "AEIOUaeiou".contains(first) ? "an" : "a"
    }
}
