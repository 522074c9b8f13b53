import Cabinet
import CabinetStorage

/// A Tokyo Cabinet store whose commits can stop inside the transaction of the
/// `Left` file, after its first record is written there: the live-store tests
/// read (and kill) a writer caught inside a transaction. A save encodes its
/// whole batch before any transaction begins, so the pause cannot come from
/// `write(to:)`; it comes from the table, as the batch is applied.
final class PausingBackend: StorageBackend {
    let inner: TokyoCabinetBackend
    /// Called once, at the next write into `Left` inside a commit.
    nonisolated(unsafe) static var pauseNextWrite: (() -> Void)?
    private let commits = JournaledCommit()
    private var left: PausingTable?

    init(_ inner: TokyoCabinetBackend) { self.inner = inner }

    var path: String { inner.path }
    var services: any StoreServices { inner.services }
    func openTable(named name: String) throws -> any StorageTable {
        let table = try inner.openTable(named: name)
        guard name == "Left", let transactional = table as? any TransactionalTable else { return table }
        if let left, left.inner === table { return left }
        let wrapped = PausingTable(transactional)
        left = wrapped
        return wrapped
    }
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
    /// Through this backend's tables, so that `Left`'s pauses.
    func commit(_ batch: WriteBatch) throws { try commits.commit(batch, to: self) }
    var hasUnfinishedCommit: Bool { commits.hasUnfinished }
    func finishUnfinishedCommit() throws -> Int? { try commits.finishUnfinished(in: self) }
    func close() { inner.close() }
}

/// `Left`'s table, pausing at the write ``PausingBackend/pauseNextWrite`` asks for.
final class PausingTable: TransactionalTable {
    let inner: any TransactionalTable
    init(_ inner: any TransactionalTable) { self.inner = inner }
    var path: String { inner.path }
    var recordCount: Int { get throws { try inner.recordCount } }
    var byteCount: UInt64 { get throws { try inner.byteCount } }
    func withValue<R>(forKey key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try inner.withValue(forKey: key, body)
    }
    func withValues(forKeys keys: [[UInt8]], _ body: (Int, UnsafeRawBufferPointer?) throws -> Void) throws {
        try inner.withValues(forKeys: keys, body)
    }
    func setValue(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer) throws {
        try inner.setValue(value, forKey: key)
        if let pause = PausingBackend.pauseNextWrite {
            PausingBackend.pauseNextWrite = nil
            pause()
        }
    }
    func removeValue(forKey key: UnsafeRawBufferPointer) throws -> Bool { try inner.removeValue(forKey: key) }
    func reserveCapacity(_ records: Int) throws { try inner.reserveCapacity(records) }
    func compact() throws { try inner.compact() }
    func forEach(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws { try inner.forEach(body) }
    func beginTransaction() throws { try inner.beginTransaction() }
    func commitTransaction() throws { try inner.commitTransaction() }
    func abortTransaction() throws { try inner.abortTransaction() }
}
