import CTokyoCabinet
import Foundation

/// The backend that keeps each table in a Tokyo Cabinet hash database file,
/// all in one store directory: the layout BNRPersistence used, so its stores
/// open here and Cabinet's stores keep its format (see `docs/FORMAT.md`).
///
/// ``ObjectStore/init(path:options:)`` creates one for you; make one yourself
/// to tune the files Cabinet creates:
/// ```swift
/// var tuning = TokyoCabinetBackend.Options()
/// tuning.bucketCount = 2_000_003      // for a class of about a million objects
/// let store = try ObjectStore(backend: TokyoCabinetBackend(directory: "/tmp/music", options: tuning))
/// ```
/// The directory is locked while the backend is open: a second writer, in
/// this process or another, gets ``CabinetError/storeLocked(path:pid:)``.
public final class TokyoCabinetBackend: StorageBackend {
    /// Tuning for newly created files (existing files keep their own), and durability.
    public struct Options: Sendable, Equatable {
        /// The number of hash buckets of a new file. A file's buckets grow by
        /// themselves before a save would put more than two records in each.
        public var bucketCount: Int64 = 131_071
        /// Records are aligned to 2^alignmentPower bytes. 2 (4 bytes) keeps small
        /// records small; files can reach 2^(32+alignmentPower) bytes (16 GiB).
        public var alignmentPower: Int8 = 2
        /// The free-block pool holds 2^freeBlockPoolPower entries.
        public var freeBlockPoolPower: Int8 = 10
        /// How many bytes of each file are memory-mapped. Beyond it Tokyo Cabinet
        /// reads and writes with a system call per record, which made a 10M-object
        /// save 2.5 times slower; mapping costs address space, not memory, and
        /// scans hand their pages back as they go.
        public var mappedSize: Int64 = 1 << 30
        /// Open as a reader: other readers may open the store at the same time,
        /// a writer may not (and a reader cannot open a store a writer has open).
        /// Nothing is created or written.
        public var readOnly = false
        /// Whether each commit waits for the data to reach the disk (`HDBOTSYNC`):
        /// survives power loss, at the cost of an fsync per file per save.
        public var syncOnCommit = false

        public init() {}
    }

    public let path: String
    public let options: Options
    private var lock: StoreLock?
    var tables: [String: TokyoCabinetTable] = [:]

    /// Opens (creating if missing) the store directory at `directory` and locks it.
    ///
    /// Throws ``CabinetError/notADirectory(path:)`` if a file is in the way and
    /// ``CabinetError/storeLocked(path:pid:)`` if another writer has it open.
    public init(directory: String, options: Options = Options()) throws {
        path = directory
        self.options = options
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw CabinetError.notADirectory(path: directory) }
        } else if options.readOnly {
            throw CabinetError.cannotAccessDirectory(path: directory, reason: "there is no store there to read")
        } else {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw CabinetError.cannotAccessDirectory(path: directory, reason: "\(error.localizedDescription)")
            }
        }
        lock = try StoreLock(directory: directory, shared: options.readOnly)
        do {
            try finishRestore()
            if !options.readOnly { try TokyoCabinetBackend.tidyLeftovers(in: directory) }
        } catch {
            close()
            throw error
        }
    }

    deinit {
        close()
    }

    /// The file that holds table `name`.
    public func filePath(forTable name: String) -> String {
        path + "/" + name
    }

    public func openTable(named name: String) throws -> any StorageTable {
        if let table = tables[name] { return table }
        guard lock != nil else { throw CabinetError.storeClosed(path: path) }
        if !options.readOnly && !DirectoryFiles.exists(filePath(forTable: name)) {
            try TokyoCabinetTable.create(directory: path, name: name, options: options)
        }
        let table = try TokyoCabinetTable(directory: path, name: name, options: options)
        tables[name] = table
        return table
    }

    /// Tokyo Cabinet files in the directory: regular files whose first bytes are
    /// Tokyo Cabinet's magic. Dot files and anything else are left alone.
    public func tableNames() throws -> [String] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: path)
        } catch {
            throw CabinetError.cannotAccessDirectory(path: path, reason: "\(error.localizedDescription)")
        }
        // Never open and close a file this process has open: closing any descriptor of a
        // file drops all of the process's fcntl locks on it, Tokyo Cabinet's included.
        return names.filter { name in
            !name.hasPrefix(".") && !TokyoCabinetBackend.isLeftover(name)
                && (tables[name] != nil || TokyoCabinetTable.hasMagic(atPath: filePath(forTable: name)))
        }.sorted()
    }

    public func hasTable(named name: String) throws -> Bool {
        tables[name] != nil || DirectoryFiles.exists(filePath(forTable: name))
    }

    public var needsJournal: Bool { true }

    /// The file that records the store's record format.
    public static let formatFileName = ".cabinet-format"

    public func readFormatMarker() throws -> String? {
        try JournalFile.read(path + "/" + TokyoCabinetBackend.formatFileName).map { String(decoding: $0, as: UTF8.self) }
    }

    private func checkWritable(_ reason: String) throws {
        if options.readOnly { throw CabinetError.readOnly(path: path, reason: reason) }
    }

    public func writeFormatMarker(_ text: String) throws {
        try checkWritable("a new store needs its format marker written")
        let final = path + "/" + TokyoCabinetBackend.formatFileName
        try JournalFile.write(Array(text.utf8), to: final + ".tmp", sync: options.syncOnCommit)
        try JournalFile.rename(final + ".tmp", to: final, directory: path, sync: options.syncOnCommit)
    }

    /// The file that lists the store's tables (see ``StoreCatalog``).
    public static let catalogFileName = ".cabinet-catalog"

    public func readCatalog() throws -> StoreCatalog? {
        let file = path + "/" + TokyoCabinetBackend.catalogFileName
        return try JournalFile.read(file).map { try StoreCatalog(encoded: $0, file: file) }
    }

    public func writeCatalog(_ catalog: StoreCatalog) throws {
        try checkWritable("the store's catalog needs to be written")
        let final = path + "/" + TokyoCabinetBackend.catalogFileName
        try JournalFile.write(catalog.encoded, to: final + ".tmp", sync: options.syncOnCommit)
        try JournalFile.rename(final + ".tmp", to: final, directory: path, sync: options.syncOnCommit)
    }

    public var isReadOnly: Bool { options.readOnly }

    /// The journal of a save in progress (see `docs/FORMAT.md`).
    public static let journalFileName = ".cabinet-journal"

    var journalPath: String { path + "/" + TokyoCabinetBackend.journalFileName }

    /// Writes the journal beside its final name and renames it into place, so a
    /// reader sees a whole journal or none. With `syncOnCommit`, the file and the
    /// directory are flushed to the disk first.
    public func writeJournal(_ bytes: [UInt8]) throws {
        try checkWritable("a save needs to write")
        let temporary = journalPath + ".tmp"
        try JournalFile.write(bytes, to: temporary, sync: options.syncOnCommit)
        try JournalFile.rename(temporary, to: journalPath, directory: path, sync: options.syncOnCommit)
    }

    public func readJournal() throws -> [UInt8]? {
        try? JournalFile.remove(journalPath + ".tmp", directory: path, sync: false)
        return try JournalFile.read(journalPath)
    }

    public func removeJournal() throws {
        try JournalFile.remove(journalPath, directory: path, sync: options.syncOnCommit)
    }

    public func close() {
        for table in tables.values { table.close() }
        tables.removeAll()
        lock?.release()
        lock = nil
    }
}
