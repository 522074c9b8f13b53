@testable import Cabinet
import CabinetStorage
import Foundation
import Testing

/// A real Tokyo Cabinet backend whose tables fail one chosen write or commit,
/// once: how a save behaves when a file refuses its part.
final class FailingBackend: ForwardingBackend {
    /// The table whose next write fails, and the table whose next commit fails.
    var failWriteOf: String?
    var failCommitOf: String?
    /// How many commits of `failCommitOf` fail (1: once).
    var commitFailures = 1
    /// Whether the next journal write puts the journal in place and then reports a failure
    /// (as when the directory's flush fails after the rename).
    var failAfterJournal = false

    init(_ inner: TokyoCabinetBackend) { super.init(inner) }
    override func openTable(named name: String) throws -> any StorageTable {
        Table(name: name, inner: try inner.openTable(named: name), owner: self)
    }
    override var services: any StoreServices { Services(inner.services, owner: self) }

    static let injected = CabinetError.backendFailure(RecordLocation(file: "injected"), operation: "write", code: 28, message: "No space left on device")

    final class Services: ForwardingServices {
        unowned let owner: FailingBackend
        init(_ inner: any StoreServices, owner: FailingBackend) {
            self.owner = owner
            super.init(inner)
        }
        override func writeJournal(_ bytes: [UInt8]) throws {
            try inner.writeJournal(bytes)
            if owner.failAfterJournal { owner.failAfterJournal = false; throw FailingBackend.injected }
        }
    }

    final class Table: ForwardingTable {
        unowned let owner: FailingBackend
        init(name: String, inner: any StorageTable, owner: FailingBackend) {
            self.owner = owner
            super.init(name: name, inner: inner)
        }
        override func setValue(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer) throws {
            if owner.failWriteOf == name { owner.failWriteOf = nil; throw FailingBackend.injected }
            try inner.setValue(value, forKey: key)
        }
        override func commitTransaction() throws {
            if owner.failCommitOf == name {
                owner.commitFailures -= 1
                if owner.commitFailures == 0 { owner.failCommitOf = nil }
                try inner.abortTransaction()
                throw FailingBackend.injected
            }
            try inner.commitTransaction()
        }
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

    /// Inserts a song titled `title` and a playlist "list" that refers to it: a save of two files.
    @discardableResult
    private func insertSongAndList(into store: ObjectStore, title: String) -> Song {
        let song = Song(); song.title = title
        let list = Playlist(); list.title = "list"; list.songs = [song]
        store.insert(song); store.insert(list)
        return song
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
        insertSongAndList(into: store, title: "kept")
        backend.failWriteOf = "Song"
        #expect(expectCabinetError({ try store.save() }, where: { $0 == FailingBackend.injected }) != nil)
        #expect(store.hasUnsavedChanges)
        #expect(try !TokyoCabinetBackend.hasPendingJournal(inDirectory: directory.path + "/store"))

        // The app gives up on the change: it must not come back at the next open.
        try store.undoManager.undo()
        store.close()
        #expect(try titles(directory) == [])
    }

    @Test func aRetryAfterAFailedJournaledSaveWritesEverything() throws {
        let directory = try TemporaryDirectory()
        let (store, backend) = try openStore(directory)
        insertSongAndList(into: store, title: "one")
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
        insertSongAndList(into: store, title: "one")
        // Tables commit in name order: Playlist first, then Song, whose file keeps refusing.
        backend.failCommitOf = "Song"
        backend.commitFailures = 2
        let error = expectCabinetError({ try store.save() }, where: {
            $0.code == .saveNotFinished
        })
        #expect(error != nil)
        #expect("\(error.map { "\($0)" } ?? "")".contains("count as saved"))
        #expect(!store.hasUnsavedChanges)
        #expect(try TokyoCabinetBackend.hasPendingJournal(inDirectory: directory.path + "/store"))
        // The process ends here; the next open finishes the save.
        store.close()
        #expect(try titles(directory) == ["one", "list"])
        #expect(try !TokyoCabinetBackend.hasPendingJournal(inDirectory: directory.path + "/store"))
    }

    @Test func aFileThatRefusesItsPartOnceIsWrittenAtOnceFromTheJournal() throws {
        let directory = try TemporaryDirectory()
        let (store, backend) = try openStore(directory)
        insertSongAndList(into: store, title: "one")
        backend.failCommitOf = "Song"
        try store.save()   // Playlist committed, Song refused once: the journal finishes it before save returns
        #expect(!store.hasUnsavedChanges)
        #expect(try !TokyoCabinetBackend.hasPendingJournal(inDirectory: directory.path + "/store"))
        #expect(try store.fetchAll(Song.self).map(\.title) == ["one"])
        store.close()
        #expect(try titles(directory) == ["one", "list"])
    }

    @Test func readsFinishASaveThatMemoryCountsAsDone() throws {
        let directory = try TemporaryDirectory()
        let (store, backend) = try openStore(directory)
        insertSongAndList(into: store, title: "one")
        backend.failCommitOf = "Song"
        backend.commitFailures = 2
        #expect(throws: CabinetError.self) { try store.save() }
        // Memory says saved; a read must not show the files without Song's part.
        #expect(try store.count(of: Song.self) == 1)
        #expect(try !TokyoCabinetBackend.hasPendingJournal(inDirectory: directory.path + "/store"))
        store.close()
    }

    @Test func theNextSaveFinishesAJournaledSaveBeforeWritingItsOwn() throws {
        let directory = try TemporaryDirectory()
        let (store, backend) = try openStore(directory)
        let song = insertSongAndList(into: store, title: "one")
        backend.failCommitOf = "Song"
        backend.commitFailures = 2
        #expect(throws: CabinetError.self) { try store.save() }
        song.title = "two"
        try store.save()
        #expect(try !TokyoCabinetBackend.hasPendingJournal(inDirectory: directory.path + "/store"))
        store.close()
        #expect(try titles(directory) == ["two", "list"])
    }

    @Test func aJournalWriteThatFailsAfterItsRenameLeavesNoSaveToComeBack() throws {
        let directory = try TemporaryDirectory()
        let (store, backend) = try openStore(directory)
        insertSongAndList(into: store, title: "given up")
        backend.failAfterJournal = true
        #expect(expectCabinetError({ try store.save() }, where: { $0 == FailingBackend.injected }) != nil)
        #expect(store.hasUnsavedChanges)
        #expect(try !TokyoCabinetBackend.hasPendingJournal(inDirectory: directory.path + "/store"))
        store.close()   // the app gives up
        #expect(try titles(directory) == [])
    }
}
