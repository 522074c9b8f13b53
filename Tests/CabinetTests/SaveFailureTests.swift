@testable import Cabinet
import Foundation
import Testing

/// A real Tokyo Cabinet backend whose tables fail one chosen write or commit,
/// once: how a save behaves when a file refuses its part.
final class FailingBackend: StorageBackend {
    let inner: TokyoCabinetBackend
    /// The table whose next write fails, and the table whose next commit fails.
    var failWriteOf: String?
    var failCommitOf: String?
    /// How many commits of `failCommitOf` fail (1: once).
    var commitFailures = 1
    /// Whether the next journal write puts the journal in place and then reports a failure
    /// (as when the directory's flush fails after the rename).
    var failAfterJournal = false

    init(_ inner: TokyoCabinetBackend) { self.inner = inner }
    var path: String { inner.path }
    func tableNames() throws -> [String] { try inner.tableNames() }
    func hasTable(named name: String) throws -> Bool { try inner.hasTable(named: name) }
    func close() { inner.close() }
    func openTable(named name: String) throws -> any StorageTable {
        Table(name: name, inner: try inner.openTable(named: name), owner: self)
    }
    var needsJournal: Bool { true }
    func writeJournal(_ bytes: [UInt8]) throws {
        try inner.writeJournal(bytes)
        if failAfterJournal { failAfterJournal = false; throw FailingBackend.injected }
    }
    func readJournal() throws -> [UInt8]? { try inner.readJournal() }
    func removeJournal() throws { try inner.removeJournal() }
    func readFormatMarker() throws -> String? { try inner.readFormatMarker() }
    func writeFormatMarker(_ text: String) throws { try inner.writeFormatMarker(text) }
    func readCatalog() throws -> StoreCatalog? { try inner.readCatalog() }
    func writeCatalog(_ catalog: StoreCatalog) throws { try inner.writeCatalog(catalog) }
    var isReadOnly: Bool { inner.isReadOnly }
    func pendingRecovery() throws -> [String] { try inner.pendingRecovery() }

    static let injected = CabinetError.backendFailure(RecordLocation(file: "injected"), operation: "write", code: 28, message: "No space left on device")

    final class Table: StorageTable {
        let name: String
        let inner: any StorageTable
        unowned let owner: FailingBackend
        init(name: String, inner: any StorageTable, owner: FailingBackend) { self.name = name; self.inner = inner; self.owner = owner }
        var path: String { inner.path }
        var recordCount: Int { inner.recordCount }
        func withValue<R>(forKey key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
            try inner.withValue(forKey: key, body)
        }
        func setValue(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer) throws {
            if owner.failWriteOf == name { owner.failWriteOf = nil; throw FailingBackend.injected }
            try inner.setValue(value, forKey: key)
        }
        func removeValue(forKey key: UnsafeRawBufferPointer) throws -> Bool { try inner.removeValue(forKey: key) }
        func reserveCapacity(_ records: Int) throws { try inner.reserveCapacity(records) }
        func compact() throws { try inner.compact() }
        func forEach(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws { try inner.forEach(body) }
        func beginTransaction() throws { try inner.beginTransaction() }
        func commitTransaction() throws {
            if owner.failCommitOf == name {
                owner.commitFailures -= 1
                if owner.commitFailures == 0 { owner.failCommitOf = nil }
                try inner.abortTransaction()
                throw FailingBackend.injected
            }
            try inner.commitTransaction()
        }
        func abortTransaction() throws { try inner.abortTransaction() }
    }
}

/// A save either succeeds, or throws and leaves no trace, or throws
/// `saveNotFinished` with memory counting it as saved, and the next save or
/// open finishing it. A save that threw must never come back later.
@Suite struct SaveFailureTests {
    private func openStore(_ directory: TemporaryDirectory) throws -> (ObjectStore, FailingBackend) {
        let backend = FailingBackend(try TokyoCabinetBackend(directory: directory.path + "/store"))
        let store = try ObjectStore(backend: backend)
        try store.register(Song.self, Playlist.self)
        return (store, backend)
    }

    private func titles(_ directory: TemporaryDirectory) throws -> [String] {
        let store = try ObjectStore(path: directory.path + "/store")
        defer { store.close() }
        try store.register(Song.self, Playlist.self)
        return try store.fetchAll(Song.self).map(\.title).sorted() + store.fetchAll(Playlist.self).map(\.title).sorted()
    }

    @Test func aJournaledSaveThatNoFileTookLeavesNoJournalAndStaysPending() throws {
        let directory = try TemporaryDirectory()
        let (store, backend) = try openStore(directory)
        let song = Song(); song.title = "kept"
        let list = Playlist(); list.title = "list"; list.songs = [song]
        store.insert(song); store.insert(list)
        backend.failWriteOf = "Song"
        #expect(expectCabinetError({ try store.save() }, where: { $0 == FailingBackend.injected }) != nil)
        #expect(store.hasUnsavedChanges)
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/store/.cabinet-journal"))

        // The app gives up on the change: it must not come back at the next open.
        try store.undoManager.undo()
        store.close()
        #expect(try titles(directory) == [])
    }

    @Test func aRetryAfterAFailedJournaledSaveWritesEverything() throws {
        let directory = try TemporaryDirectory()
        let (store, backend) = try openStore(directory)
        let song = Song(); song.title = "one"
        let list = Playlist(); list.title = "list"; list.songs = [song]
        store.insert(song); store.insert(list)
        backend.failCommitOf = "Playlist"
        #expect(throws: CabinetError.self) { try store.save() }
        #expect(store.hasUnsavedChanges)
        try store.save()
        store.close()
        #expect(try titles(directory) == ["one", "list"])
    }

    @Test func aJournaledSaveThatOneFileCommittedIsReportedAsSavedAndFinishedLater() throws {
        let directory = try TemporaryDirectory()
        let (store, backend) = try openStore(directory)
        let song = Song(); song.title = "one"
        let list = Playlist(); list.title = "list"; list.songs = [song]
        store.insert(song); store.insert(list)
        // Tables commit in name order: Playlist first, then Song, whose file keeps refusing.
        backend.failCommitOf = "Song"
        backend.commitFailures = 2
        let error = expectCabinetError({ try store.save() }, where: {
            if case .saveNotFinished = $0 { return true } else { return false }
        })
        #expect(error != nil)
        #expect("\(error.map { "\($0)" } ?? "")".contains("count as saved"))
        #expect(!store.hasUnsavedChanges)
        #expect(FileManager.default.fileExists(atPath: directory.path + "/store/.cabinet-journal"))
        // The process ends here; the next open finishes the save.
        store.close()
        #expect(try titles(directory) == ["one", "list"])
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/store/.cabinet-journal"))
    }

    @Test func aFileThatRefusesItsPartOnceIsWrittenAtOnceFromTheJournal() throws {
        let directory = try TemporaryDirectory()
        let (store, backend) = try openStore(directory)
        let song = Song(); song.title = "one"
        let list = Playlist(); list.title = "list"; list.songs = [song]
        store.insert(song); store.insert(list)
        backend.failCommitOf = "Song"
        try store.save()   // Playlist committed, Song refused once: the journal finishes it before save returns
        #expect(!store.hasUnsavedChanges)
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/store/.cabinet-journal"))
        #expect(try store.fetchAll(Song.self).map(\.title) == ["one"])
        store.close()
        #expect(try titles(directory) == ["one", "list"])
    }

    @Test func readsFinishASaveThatMemoryCountsAsDone() throws {
        let directory = try TemporaryDirectory()
        let (store, backend) = try openStore(directory)
        let song = Song(); song.title = "one"
        let list = Playlist(); list.title = "list"; list.songs = [song]
        store.insert(song); store.insert(list)
        backend.failCommitOf = "Song"
        backend.commitFailures = 2
        #expect(throws: CabinetError.self) { try store.save() }
        // Memory says saved; a read must not show the files without Song's part.
        #expect(try store.count(of: Song.self) == 1)
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/store/.cabinet-journal"))
        store.close()
    }

    @Test func theNextSaveFinishesAJournaledSaveBeforeWritingItsOwn() throws {
        let directory = try TemporaryDirectory()
        let (store, backend) = try openStore(directory)
        let song = Song(); song.title = "one"
        let list = Playlist(); list.title = "list"; list.songs = [song]
        store.insert(song); store.insert(list)
        backend.failCommitOf = "Song"
        backend.commitFailures = 2
        #expect(throws: CabinetError.self) { try store.save() }
        song.title = "two"
        try store.save()
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/store/.cabinet-journal"))
        store.close()
        #expect(try titles(directory) == ["two", "list"])
    }

    @Test func aJournalWriteThatFailsAfterItsRenameLeavesNoSaveToComeBack() throws {
        let directory = try TemporaryDirectory()
        let (store, backend) = try openStore(directory)
        let song = Song(); song.title = "given up"
        let list = Playlist(); list.title = "list"; list.songs = [song]
        store.insert(song); store.insert(list)
        backend.failAfterJournal = true
        #expect(expectCabinetError({ try store.save() }, where: { $0 == FailingBackend.injected }) != nil)
        #expect(store.hasUnsavedChanges)
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/store/.cabinet-journal"))
        store.close()   // the app gives up
        #expect(try titles(directory) == [])
    }
}
