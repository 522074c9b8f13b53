import CTokyoCabinet
import Foundation

/// The backend that keeps each table in a Tokyo Cabinet hash database file,
/// all in one store directory: the layout BNRPersistence used, so its stores
/// open here and Cabinet's stores keep its format (see `docs/FORMAT.md`).
///
/// Opening a store by its path opens one of these; make one yourself to tune
/// the files Cabinet creates:
/// ```swift
/// var tuning = TokyoCabinetBackend.Options()
/// tuning.bucketCount = 2_000_003      // for a table of about a million records
/// let backend = try TokyoCabinetBackend(directory: "/tmp/music", options: tuning)
/// ```
/// The directory is locked while the backend is open: a second writer, in
/// this process or another, gets ``CabinetError/storeLocked(path:pid:)``;
/// readers in other processes read alongside the writer (see
/// ``withCommittedState(_:)``). The
/// services (journal, format marker, catalog) are files beside the tables: the
/// format marker and the catalog each written under a temporary name and
/// renamed into place, the journal written in place in a file the writer keeps
/// (`TokyoCabinetJournalFile`); the backend is its own ``StoreServices``.
public final class TokyoCabinetBackend: StorageBackend, StoreServices {
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
        /// reads and writes with a system call per record, which made a 10M-record
        /// save 2.5 times slower; mapping costs address space, not memory, and
        /// scans hand their pages back as they go.
        public var mappedSize: Int64 = 1 << 30
        /// Open as a reader: alongside other readers and the writer (in other
        /// processes), seeing whole saves only. Nothing is created or written, so a
        /// reader needs only read permission; the directory must already be a store
        /// (as with `createIfMissing = false`).
        public var readOnly = false
        /// Whether opening creates the store when the directory is missing or holds
        /// no store (the default, for apps). Tools that look after an existing store
        /// set it to `false`, so a mistyped path is ``CabinetError/notAStore(path:reason:)``
        /// instead of a new empty store:
        /// ```swift
        /// var existing = TokyoCabinetBackend.Options()
        /// existing.createIfMissing = false
        /// let backend = try TokyoCabinetBackend(directory: "/tmp/music", options: existing)
        /// ```
        /// A store is a directory with a `.cabinet-format` marker or at least one
        /// Tokyo Cabinet file.
        public var createIfMissing = true
        /// Whether each commit waits for the data to reach the disk (`HDBOTSYNC`):
        /// survives power loss, at the cost of an fsync per file per save.
        public var syncOnCommit = false
        /// Whether several threads may read the tables at once, while none writes
        /// (what `StorePool` needs, and sets): each file is opened in Tokyo Cabinet's
        /// thread-safe mode (`tchdbsetmutex`), and a single read copies into a buffer
        /// of its own instead of the table's shared one. Off (the default), reads
        /// cost what they always did.
        public var concurrentReads = false

        public init() {}
    }

    public let path: String
    public let options: Options
    var lock: StoreLock?
    var tables: [String: any TokyoCabinetFile] = [:]
    /// What each table's handle saw of its file when it was opened, for a reader
    /// (see ``withCommittedState(_:)``).
    var readerStamps: [String: TokyoCabinetTable.ReadingStamp] = [:]
    /// The journal file, kept open by a writer once its first save of several files wrote it.
    lazy var journalFile = TokyoCabinetJournalFile(path: journalPath, directory: path, sync: options.syncOnCommit, writable: !options.readOnly)
    /// A reader's kept look at the journal file, at every read operation (see ``TokyoCabinetJournalProbe``).
    let journalProbe: TokyoCabinetJournalProbe
    /// Batches that change several files go through the journal.
    let commits = JournaledCommit()
    /// A reader's watch on the writer's commit announcements (``watchCommits(_:)``).
    var commitWatcher: CommitWatcher?
    /// The service files (catalog, format marker) that may have been renamed
    /// into place without a flush since the last flushed commit (see
    /// `commitFlushed(_:)`). A writer's open without `syncOnCommit` starts with
    /// both: an earlier process may have written them unflushed.
    var unflushedServiceFiles: Set<String> = []
    /// Set by the first flushed commit of this open: from then on a rebuild
    /// of a class file (growth, compaction) flushes its copy before renaming
    /// it over the file, which may hold a flushed commit a power loss must
    /// not take back (``TokyoCabinetTable/syncsRebuilds``).
    var hadFlushedCommit = false {
        didSet { if hadFlushedCommit { for table in tables.values { (table as? TokyoCabinetTable)?.syncsRebuilds = true } } }
    }

    /// Opens the store directory at `directory` (creating it if missing, unless
    /// `options` say otherwise) and locks it.
    ///
    /// Throws ``CabinetError/notADirectory(path:)`` if a file is in the way,
    /// ``CabinetError/notAStore(path:reason:)`` if the store must exist and does not,
    /// and ``CabinetError/storeLocked(path:pid:)`` if another writer has it open (or,
    /// for a reader, this process has it open for writing).
    /// A writable open finishes a restore that was decided (see ``replaceContents(with:formatMarker:)``)
    /// and rolls back any table file's transaction a killed writer left half-done;
    /// a read-only open leaves that to a writer (see ``pendingRecovery()``).
    public init(directory: String, options: Options = Options()) throws {
        path = directory
        self.options = options
        if !options.readOnly && !options.syncOnCommit {
            unflushedServiceFiles = [TokyoCabinetBackend.catalogFileName, TokyoCabinetBackend.formatFileName]
        }
        journalProbe = TokyoCabinetJournalProbe(path: directory + "/" + TokyoCabinetBackend.journalFileName)
        let mayCreate = options.createIfMissing && !options.readOnly
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw CabinetError.notADirectory(path: directory) }
        } else if !mayCreate {
            throw CabinetError.notAStore(path: directory, reason: "there is nothing at that path")
        } else {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw CabinetError.cannotAccessDirectory(path: directory, reason: "\(error.localizedDescription); check the path and its permissions")
            }
        }
        lock = try StoreLock(directory: directory, shared: options.readOnly)
        do {
            if !mayCreate { try requireStore() }
            try lock?.prepareCommits()
            if options.readOnly {
                try withCommittedState { try finishRestore() }   // only looks: a reader finishes nothing
            } else {
                // What a killed writer or restore left is finished while readers wait.
                try withExclusiveCommit {
                    try finishRestore()
                    try TokyoCabinetBackend.tidyLeftovers(in: directory)
                    lock?.recordOwner()
                    // Opening a file as a writer makes Tokyo Cabinet roll its transaction back;
                    // a file that fails to open is reported when it is opened again.
                    for table in try TokyoCabinetDirectory.interruptedTransactions(in: directory) { _ = try? openTable(named: table) }
                }
            }
        } catch {
            close()
            throw error
        }
    }

    /// Throws unless the directory is a store: it has a format marker or a Tokyo Cabinet file.
    private func requireStore() throws {
        if DirectoryFiles.exists(path + "/" + TokyoCabinetBackend.formatFileName) { return }
        let entries = try TokyoCabinetDirectory.entries(of: path)
        if entries.contains(where: \.isTokyoCabinetFile) { return }
        let reason = entries.isEmpty ? "the directory is empty"
            : "it has no \(TokyoCabinetBackend.formatFileName) marker and none of its \(entries.count) files is a Tokyo Cabinet file"
        throw CabinetError.notAStore(path: path, reason: reason)
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
        try checkOpen()
        if !options.readOnly && !DirectoryFiles.exists(filePath(forTable: name)) {
            try TokyoCabinetTable.create(directory: path, name: name, options: options)
        }
        let table: any TokyoCabinetFile = TokyoCabinetDirectory.isOrderedFile(filePath(forTable: name))
            ? try TokyoCabinetOrderedTable(directory: path, name: name, options: options)
            : try TokyoCabinetTable(directory: path, name: name, options: options)
        if hadFlushedCommit { (table as? TokyoCabinetTable)?.syncsRebuilds = true }
        tables[name] = table
        if options.readOnly { readerStamps[name] = table.readingStamp }
        return table
    }

    /// Opens (or creates) table `name` as a Tokyo Cabinet B+ tree database file.
    public func openOrderedTable(named name: String) throws -> any OrderedStorageTable {
        if let table = tables[name] { return try ordered(table) }
        try checkOpen()
        if !options.readOnly && !DirectoryFiles.exists(filePath(forTable: name)) {
            try TokyoCabinetOrderedTable.create(directory: path, name: name, options: options)
        }
        return try ordered(try openTable(named: name))
    }

    /// Closes table `name` if it is open, then removes its file and its log (and
    /// flushes the directory, when saves are synced).
    public func removeTable(named name: String) throws {
        try checkWritable("removing a table writes the store")
        tables.removeValue(forKey: name)?.close()
        readerStamps[name] = nil
        let file = filePath(forTable: name)
        try TokyoCabinetTable.removeLog(of: file)
        if DirectoryFiles.exists(file) { try DirectoryFiles.remove(file) }
        if options.syncOnCommit { try DirectoryFiles.syncDirectory(path) }
    }

    private func ordered(_ table: any StorageTable) throws -> any OrderedStorageTable {
        guard let ordered = table as? any OrderedStorageTable else {
            throw CabinetError.notADatabase(RecordLocation(file: table.path), reason: "it is a hash database file, where a B+ tree database file (an index) was expected; `cabinet reindex` makes it again")
        }
        return ordered
    }

    /// Tokyo Cabinet files in the directory: regular files whose first bytes are
    /// Tokyo Cabinet's magic. Dot files and anything else are left alone.
    public func tableNames() throws -> [String] {
        let names = try TokyoCabinetDirectory.allNames(in: path)
        // Never open and close a file this process has open: closing any descriptor of a
        // file drops all of the process's fcntl locks on it, Tokyo Cabinet's included.
        return names.filter { name in
            !name.hasPrefix(".") && !TokyoCabinetBackend.isLeftover(name)
                && (tables[name] != nil || TokyoCabinetTable.hasMagic(atPath: filePath(forTable: name)))
        }
    }

    public func hasTable(named name: String) throws -> Bool {
        tables[name] != nil || DirectoryFiles.exists(filePath(forTable: name))
    }

    public func location(ofTable name: String) -> String { filePath(forTable: name) }

    public var services: any StoreServices { self }

    /// One file's changes in one transaction; several files' through the
    /// journal first (`JournaledCommit`), so a kill at any instant leaves all or none.
    /// A batch whose ``WriteBatch/durability`` is ``CommitDurability/flushed``
    /// is flushed as with ``Options/syncOnCommit`` (see `commitFlushed(_:)`).
    public func commit(_ batch: WriteBatch) throws {
        try checkWritable("a save writes the store")
        if batch.durability == .flushed && !options.syncOnCommit { return try commitFlushed(batch) }
        try commits.commit(batch, to: self)
    }

    public var hasUnfinishedCommit: Bool { commits.hasUnfinished }

    @discardableResult
    public func finishUnfinishedCommit() throws -> Int? {
        try commits.finishUnfinished(in: self)
    }

    public func close() {
        commitWatcher?.stop()
        commitWatcher = nil
        // By name: the same system calls in the same order at every run (the kill-point harness counts them).
        let closeTables = { for name in self.tables.keys.sorted() { self.tables[name]?.close() } }
        // With the commit lock: an index file's close logs its header for a moment,
        // which a reader must not take for a killed writer's transaction.
        if (try? withExclusiveCommit(closeTables)) == nil { closeTables() }
        tables.removeAll()
        readerStamps.removeAll()
        // A writer's file holding no journal goes: between writers the store looks as older versions left it.
        journalFile.close(removing: !options.readOnly)
        lock?.release()
        lock = nil
    }
}
