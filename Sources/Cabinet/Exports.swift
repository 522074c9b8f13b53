// An app writes `import Cabinet` only, and sees the object API: the storage
// layer's types it needs (errors, progress, the backends it opens a store on)
// are named here, and nothing else of CabinetStorage (tables, the catalog, the
// journal, checksums) comes with it. A backend's author writes
// `import CabinetStorage`. docs/PUBLIC-API.md has the list and the rule.
import CabinetStorage

/// The one error type Cabinet throws; see `CabinetStorage.CabinetError`.
public typealias CabinetError = CabinetStorage.CabinetError
/// Where in a store something happened (a `CabinetError`'s `location`); see `CabinetStorage.RecordLocation`.
public typealias RecordLocation = CabinetStorage.RecordLocation
/// What a long operation (backup, restore, compact, verify, upgrade, import) reports as it goes.
public typealias StoreProgress = CabinetStorage.StoreProgress
/// One thing ``StoreVerifier`` or ``ObjectStore/verifyIndexes()`` found damaged.
public typealias StorageProblem = CabinetStorage.StorageProblem
/// What ``ObjectStore/importStore(from:to:progress:)`` copied from a Mac's store and what it left out.
public typealias StoreImportReport = CabinetStorage.StoreImportReport
/// The byte order ``ObjectStore/exportStore(to:byteOrder:progress:)`` writes.
public typealias TokyoCabinetByteOrder = CabinetStorage.TokyoCabinetByteOrder
/// Sizes every backend accepts: the largest record a save may write.
public typealias StorageLimits = CabinetStorage.StorageLimits
/// Where a store keeps its tables: what ``ObjectStore/init(backend:options:logger:)``,
/// ``StorePool`` and the maintenance operations take. To write one, `import CabinetStorage`.
public typealias StorageBackend = CabinetStorage.StorageBackend
/// A store in a directory, one Tokyo Cabinet file per class; open one with options
/// (`TokyoCabinetBackend.Options`: `syncOnCommit`, `concurrentReads`).
public typealias TokyoCabinetBackend = CabinetStorage.TokyoCabinetBackend
/// A store in memory, for tests and scratch data.
public typealias MemoryBackend = CabinetStorage.MemoryBackend
/// How durable a save is when it returns: what ``ObjectStore/save(durability:)``
/// and ``StorePool/write(durability:_:)`` take (`.flushed`: it survives a power loss).
public typealias CommitDurability = CabinetStorage.CommitDurability

extension CabinetError.Code {
    /// Whether `error` is a `CabinetError` with this code: what makes a code a
    /// `catch` (or `case`) pattern in a file that imports only Cabinet.
    ///
    /// ```swift
    /// do { try store.save() } catch CabinetError.Code.readOnly { print("open it writable") }
    /// ```
    /// CabinetStorage declares the same operator, but a module's operators are found
    /// only where it is imported; this one gives way to it where both are
    /// (`@_disfavoredOverload`), so a file importing both is not ambiguous.
    @_disfavoredOverload
    public static func ~= (code: CabinetError.Code, error: any Error) -> Bool {
        (error as? CabinetError)?.code == code
    }
}
