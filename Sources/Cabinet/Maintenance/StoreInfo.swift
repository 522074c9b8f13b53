import Foundation

/// What a store directory holds, read without the app's classes: for
/// `cabinet info` and for tools that look at a store from outside.
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
        /// The file's size in bytes (0 for tables that are not files).
        public var bytes: UInt64
        /// The class metadata (row 1), or `nil` for the named buffers or a file without it.
        public var lastRowID: UInt32?
        public var classVersion: UInt8?
        public var classID: UInt8?
        /// `"bnr"` for BNRPersistence's 6-byte metadata row, `"cabinet"` for the 14-byte one.
        public var metadataFormat: String?
    }

    public var path: String
    /// The record format: from the store's marker, or plain for a store without one.
    public var recordFormat: RecordFormat
    public var tables: [Table]
    /// Whether a save's journal is waiting to be replayed (it will be at the next open).
    public var journalPending: Bool

    /// Reads the store at `path`. Takes the store's lock while it reads, so it
    /// fails with ``CabinetError/storeLocked(path:pid:)`` if an app has it open.
    public init(path: String) throws {
        let backend = try TokyoCabinetBackend(directory: path)
        defer { backend.close() }
        try self.init(backend: backend)
    }

    init(backend: any StorageBackend) throws {
        path = backend.path
        recordFormat = try StoreVerifier.recordFormat(of: backend)
        journalPending = try backend.readJournal() != nil
        tables = try backend.tableNames().map { name in
            let table = try backend.openTable(named: name)
            var info = Table(name: name, records: table.recordCount, bytes: (table as? TokyoCabinetTable)?.fileSize ?? 0)
            if name != ObjectStore.namedBuffersTableName {
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
