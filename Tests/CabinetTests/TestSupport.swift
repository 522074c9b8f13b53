import Cabinet
import CabinetRedis
import CabinetStorage
import Foundation

/// Opens and reopens one store on a backend, so tests can check what survives a close.
final class StoreFixture {
    let kind: BackendKind
    let directory: TemporaryDirectory
    private let memory = MemoryBackend(name: "memory-store")
    /// The dictionary store's records, which each open of it shares.
    private let dictionary = DictionaryBackend.Contents(name: "dictionary-store")
    /// The store's name on the test Redis server.
    let redisStore = TestRedis.newStoreName()

    init(_ kind: BackendKind) throws {
        self.kind = kind
        directory = try TemporaryDirectory()
    }

    var storePath: String { directory.path + "/store" }

    /// A store with the test models registered.
    func open(_ types: StoredObject.Type..., options: ObjectStore.Options = .init()) throws -> ObjectStore {
        let store: ObjectStore
        switch kind {
        case .tokyoCabinet: store = try ObjectStore(path: storePath, options: options)
        case .memory: store = try ObjectStore(backend: memory, options: options)
        case .redis: store = try ObjectStore(backend: TestRedis.backend(store: redisStore), options: options)
        case .dictionary: store = try ObjectStore(backend: DictionaryBackend(dictionary), options: options)
        }
        for type in types.isEmpty ? [Song.self, Playlist.self, Album.self, Node.self] : types {
            try store.register(type)
        }
        return store
    }

    /// A pool over the store, with `types` registered (the store must be closed).
    func pool(_ types: StoredObject.Type...) throws -> StorePool {
        kind == .tokyoCabinet ? try StorePool(path: storePath, classes: types) : try StorePool(backend: try backend(), classes: types)
    }

    /// The store's backend, opened afresh (the store must be closed): for tests that look below the store.
    func backend() throws -> any StorageBackend {
        switch kind {
        case .tokyoCabinet: try TokyoCabinetBackend(directory: storePath)
        case .memory: memory
        case .redis: try TestRedis.backend(store: redisStore)
        case .dictionary: DictionaryBackend(dictionary)
        }
    }

    /// A store whose backend counts reads, for faulting tests.
    func openCounting() throws -> (ObjectStore, CountingBackend) {
        let counting = CountingBackend(try backend())
        let store = try ObjectStore(backend: counting)
        try store.register(Song.self, Playlist.self, Album.self, Node.self)
        return (store, counting)
    }
}

/// A backend that hands every call to `inner`. Test wrappers subclass it and
/// change one thing, so a requirement added to the protocol is forwarded here once.
class ForwardingBackend: StorageBackend {
    let inner: any StorageBackend
    init(_ inner: any StorageBackend) { self.inner = inner }
    var path: String { inner.path }
    var services: any StoreServices { inner.services }
    func openTable(named name: String) throws -> any StorageTable { try inner.openTable(named: name) }
    func openOrderedTable(named name: String) throws -> any OrderedStorageTable { try inner.openOrderedTable(named: name) }
    func removeTable(named name: String) throws { try inner.removeTable(named: name) }
    func tableNames() throws -> [String] { try inner.tableNames() }
    func hasTable(named name: String) throws -> Bool { try inner.hasTable(named: name) }
    func location(ofTable name: String) -> String { inner.location(ofTable: name) }
    func storageProblems() throws -> [StorageProblem] { try inner.storageProblems() }
    func replaceContents(with source: any StorageBackend, formatMarker: String) throws {
        try inner.replaceContents(with: source, formatMarker: formatMarker)
    }
    func replaceContents(with source: any StorageBackend, formatMarker: String, progress: StoreProgress.Handler?) throws {
        try inner.replaceContents(with: source, formatMarker: formatMarker, progress: progress)
    }
    /// Through this backend's own tables (so that a subclass's failing tables fail it), as the inner one would;
    /// a backend whose tables have no transactions (the dictionary one, written from the seam alone) commits it itself.
    func commit(_ batch: WriteBatch) throws {
        if inner is DictionaryBackend { return try inner.commit(batch) }
        try commits.commit(batch, to: self)
    }
    var hasUnfinishedCommit: Bool { commits.hasUnfinished }
    func finishUnfinishedCommit() throws -> Int? { try commits.finishUnfinished(in: self) }
    private let commits = JournaledCommit()
    func close() { inner.close() }
}

/// Services that hand every call to `inner`; see ``ForwardingBackend``.
class ForwardingServices: StoreServices {
    let inner: any StoreServices
    init(_ inner: any StoreServices) { self.inner = inner }
    var isReadOnly: Bool { inner.isReadOnly }
    var needsJournal: Bool { inner.needsJournal }
    var journalLocation: String { inner.journalLocation }
    func writeJournal(_ bytes: [UInt8]) throws { try inner.writeJournal(bytes) }
    func readJournal() throws -> [UInt8]? { try inner.readJournal() }
    func removeJournal() throws { try inner.removeJournal() }
    var formatMarkerLocation: String { inner.formatMarkerLocation }
    func readFormatMarker() throws -> String? { try inner.readFormatMarker() }
    func writeFormatMarker(_ text: String) throws { try inner.writeFormatMarker(text) }
    func readCatalog() throws -> StoreCatalog? { try inner.readCatalog() }
    func writeCatalog(_ catalog: StoreCatalog) throws { try inner.writeCatalog(catalog) }
    func pendingRecovery() throws -> [PendingRecovery] { try inner.pendingRecovery() }
    func withCommittedState<R>(_ body: () throws -> R) throws -> R { try inner.withCommittedState(body) }
    func withExclusiveCommit<R>(_ body: () throws -> R) throws -> R { try inner.withExclusiveCommit(body) }
}

/// A table that hands every call to `inner`; see ``ForwardingBackend``.
class ForwardingTable: TransactionalTable {
    let name: String
    let inner: any StorageTable
    init(name: String, inner: any StorageTable) { self.name = name; self.inner = inner }
    var path: String { inner.path }
    var recordCount: Int { get throws { try inner.recordCount } }
    var byteCount: UInt64 { get throws { try inner.byteCount } }
    func withValue<R>(forKey key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try inner.withValue(forKey: key, body)
    }
    func withValues(forKeys keys: [[UInt8]], _ body: (Int, UnsafeRawBufferPointer?) throws -> Void) throws {
        try inner.withValues(forKeys: keys, body)
    }
    func setValue(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer) throws { try inner.setValue(value, forKey: key) }
    func removeValue(forKey key: UnsafeRawBufferPointer) throws -> Bool { try inner.removeValue(forKey: key) }
    func reserveCapacity(_ records: Int) throws { try inner.reserveCapacity(records) }
    func compact() throws { try inner.compact() }
    func compact(progress: (Int) -> Void) throws { try inner.compact(progress: progress) }
    func forEach(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws { try inner.forEach(body) }
    func beginTransaction() throws { try inner.transactional().beginTransaction() }
    func commitTransaction() throws { try inner.transactional().commitTransaction() }
    func abortTransaction() throws { try inner.transactional().abortTransaction() }
}

/// Tests write raw records, and check the seam's rules, through the built-in
/// backends' table transactions (``TransactionalTable``, not part of the seam).
extension StorageTable {
    /// This table as one with transactions; throws for one without (the dictionary backend's).
    func transactional() throws -> any TransactionalTable {
        guard let table = self as? any TransactionalTable else {
            throw CabinetError.tablesWithoutTransactions(RecordLocation(file: path))
        }
        return table
    }

    func beginTransaction() throws { try transactional().beginTransaction() }
    func commitTransaction() throws { try transactional().commitTransaction() }
    func abortTransaction() throws { try transactional().abortTransaction() }
    /// `body` in one transaction of a table that has them; on one without
    /// (the dictionary backend's), `body` alone: its writes land as they are made.
    func transaction<R>(_ body: () throws -> R) throws -> R {
        guard let table = self as? any TransactionalTable else { return try body() }
        return try table.transaction(body)
    }
}

/// A real backend with a counter on every read, so tests can prove what was not read.
final class CountingBackend: ForwardingBackend {
    private(set) var singleReads: [String: Int] = [:]
    private(set) var scans: [String: Int] = [:]
    private(set) var batchReads: [String: Int] = [:]

    override func openTable(named name: String) throws -> any StorageTable {
        CountingTable(name: name, inner: try inner.openTable(named: name), owner: self)
    }
    /// How many times the store's format marker was read.
    private(set) var markerReads = 0

    override var services: any StoreServices { CountingServices(inner.services, owner: self) }
    func reads(of name: String) -> Int { singleReads[name, default: 0] }
    func resetCounts() { singleReads = [:]; scans = [:]; batchReads = [:]; markerReads = 0 }

    final class CountingServices: ForwardingServices {
        unowned let owner: CountingBackend
        init(_ inner: any StoreServices, owner: CountingBackend) {
            self.owner = owner
            super.init(inner)
        }
        override func readFormatMarker() throws -> String? {
            owner.markerReads += 1
            return try inner.readFormatMarker()
        }
    }

    final class CountingTable: ForwardingTable {
        unowned let owner: CountingBackend
        init(name: String, inner: any StorageTable, owner: CountingBackend) {
            self.owner = owner
            super.init(name: name, inner: inner)
        }
        override func withValue<R>(forKey key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
            owner.singleReads[name, default: 0] += 1
            return try inner.withValue(forKey: key, body)
        }
        override func withValues(forKeys keys: [[UInt8]], _ body: (Int, UnsafeRawBufferPointer?) throws -> Void) throws {
            owner.batchReads[name, default: 0] += 1
            try inner.withValues(forKeys: keys, body)
        }
        override func forEach(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
            owner.scans[name, default: 0] += 1
            try inner.forEach(body)
        }
    }
}

/// Writes (or with `nil` deletes) one record straight into `table`, below the
/// store: how tests lay down damage, or records an older version wrote.
func putRecord(_ table: any StorageTable, _ key: [UInt8], _ value: [UInt8]?) throws {
    try withRecordBytes(key, value) { key, value in try table.apply(value, forKey: key) }
}

/// Whether `body` throws a CabinetError that `matches` accepts; returns the error for further checks.
@discardableResult
func expectCabinetError(_ body: () throws -> Void, where matches: (CabinetError) -> Bool) -> CabinetError? {
    do {
        try body()
    } catch let error as CabinetError {
        return matches(error) ? error : nil
    } catch {
        return nil
    }
    return nil
}

/// The code of the CabinetError `body` throws, or nil if it throws none (or another error).
func errorCode(of body: () throws -> Void) -> CabinetError.Code? {
    do { try body() } catch let error as CabinetError { return error.code } catch { return nil }
    return nil
}

/// Opens the store at `path` and saves one song (titled `title`) and a
/// playlist holding it: a save of two files, so through the journal. The store
/// stays open.
func openStoreSavingSongAndPlaylist(_ path: String, title: String = "saved") throws -> (store: ObjectStore, song: Song, list: Playlist) {
    let store = try ObjectStore(path: path)
    try store.register(Song.self, Playlist.self)
    let song = Song(); song.title = title; store.insert(song)
    let list = Playlist(); list.songs = [song]; store.insert(list)
    try store.save()
    return (store, song, list)
}

/// The same, closing the store after the save.
func saveSongAndPlaylist(_ path: String, title: String = "saved") throws {
    try openStoreSavingSongAndPlaylist(path, title: title).store.close()
}

/// The titles of every song in the store at `path`, sorted, read by a reader.
func songTitles(_ path: String) throws -> [String] {
    let store = try ObjectStore(path: path, readOnly: true)
    defer { store.close() }
    try store.register(Song.self, Playlist.self)
    return try store.fetchAll(Song.self).map(\.title).sorted()
}
