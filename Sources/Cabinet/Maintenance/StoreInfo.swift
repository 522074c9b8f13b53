import Foundation

/// What a store holds, read without the app's classes: for `cabinet info` and
/// for tools that look at a store from outside. Works on any backend.
///
/// ```swift
/// let info = try StoreInfo(path: "/tmp/music")
/// for table in info.tables { print(table.name, table.records) }
/// ```
public struct StoreInfo: Sendable {
    /// One table (a class file, or the named buffers).
    public struct Table: Sendable {
        public var name: String
        /// Records in the file, the metadata row included.
        public var records: Int
        /// The bytes the table occupies (a file's size; see ``/CabinetStorage/StorageTable/byteCount``).
        public var bytes: UInt64
        /// The class metadata (row 1), or `nil` for the named buffers or a file without it.
        public var lastRowID: UInt32?
        public var classVersion: UInt8?
        public var classID: UInt8?
        /// `"bnr"` for BNRPersistence's 6-byte metadata row, `"cabinet"` for the 14-byte one.
        public var metadataFormat: String?
        /// Whether the table waits for a recovery only a writer may do (for a Tokyo
        /// Cabinet file, a killed writer's transaction in its `.wal`); it is not
        /// opened then, so its counts are unknown (0).
        public var transactionPending = false
    }

    public var path: String
    /// The record format: from the store's marker, or plain for a store without one.
    public var recordFormat: RecordFormat
    public var tables: [Table]
    /// Whether a save's journal is waiting to be replayed (it will be at the next writable open).
    public var journalPending: Bool
    /// What the next writable open will finish, in words (a journal, a file's
    /// interrupted transaction); empty when nothing is pending.
    public var pendingRecovery: [String]

    /// Reads the store at `path`, read-only: alongside other readers and a writer
    /// in another process (as of its last save), writing nothing; fails with
    /// ``/CabinetStorage/CabinetError/notAStore(path:reason:)`` if `path` is not a store.
    public init(path: String) throws {
        var reading = TokyoCabinetBackend.Options()
        reading.readOnly = true
        reading.createIfMissing = false
        let backend = try TokyoCabinetBackend(directory: path, options: reading)
        defer { backend.close() }
        try self.init(backend: backend)
    }

    /// Reads the store behind `backend`, any backend:
    ///
    /// ```swift
    /// let info = try StoreInfo(backend: MemoryBackend())
    /// ```
    /// It reads only, as one read operation (see ``/CabinetStorage/StoreServices/withCommittedState(_:)``);
    /// a table that waits for recovery is not opened. On a read-only backend
    /// nothing at all is written.
    public init(backend: any StorageBackend) throws {
        // One read operation: a writer in another process does not commit while it runs.
        self = try backend.services.withCommittedState { try StoreInfo(reading: backend) }
    }

    private init(reading backend: any StorageBackend) throws {
        path = backend.path
        recordFormat = try StoreVerifier.recordFormat(of: backend)
        let pending = try backend.services.pendingRecovery()
        // A damaged journal is pending too: a writer's backend refuses to read it
        // (pendingRecovery says why), and info is for looking at such a store.
        journalPending = try pending.contains { $0.problem != nil } || backend.services.readJournal() != nil
        pendingRecovery = pending.map(\.description)
        let interrupted = Set(pending.compactMap(\.table))
        tables = try backend.tableNames().map { name in
            if interrupted.contains(name) {
                // Opening it would finish the recovery (Tokyo Cabinet rolls the transaction back), writing.
                var info = Table(name: name, records: 0, bytes: 0)
                info.transactionPending = true
                return info
            }
            let table = try backend.openTable(named: name)
            var info = Table(name: name, records: try table.recordCount, bytes: try table.byteCount)
            if !ObjectStore.isAuxiliaryTable(name) {
                let format = try table.withValue(forRow: ClassMetadata.rowID) { $0.count == 6 ? "bnr" : "cabinet" }
                if let metadata = try ClassRegistrar.readMetadata(of: table, className: name) {
                    info.lastRowID = metadata.lastRowID
                    info.classVersion = metadata.version
                    info.classID = metadata.classID
                    info.metadataFormat = format
                }
            }
            return info
        }
    }
}
