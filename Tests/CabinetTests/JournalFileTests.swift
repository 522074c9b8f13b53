@testable import Cabinet
import CabinetStorage
import Foundation
import Testing

/// The journal file written in place (`TokyoCabinetJournalFile`, docs/FORMAT.md):
/// one file a writer keeps, a journal in it decided only once it is whole.
@Suite struct JournalFileTests {
    private func inode(_ path: String) throws -> UInt64 {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? UInt64)
    }

    @Test func savesOfSeveralFilesWriteOneJournalFileInPlace() throws {
        let directory = try TemporaryDirectory()
        let journal = directory.path + "/" + TokyoCabinetBackend.journalFileName
        let (store, song, list) = try openStoreSavingSongAndPlaylist(directory.path, title: "one")
        let first = try inode(journal)
        song.title = "two"; list.songs.append(song)
        try store.save()
        #expect(try inode(journal) == first, "the same file, not a new one renamed into place")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: journal)))
        #expect(bytes.starts(with: TokyoCabinetJournalFile.magic) && bytes[8] == 0, "it holds no journal once the save is done")
        #expect(try !TokyoCabinetBackend.hasPendingJournal(inDirectory: directory.path))
        store.close()
        #expect(!DirectoryFiles.exists(journal), "a writer's clean close removes the file holding no journal")
        #expect(try songTitles(directory.path) == ["two"])
    }

    /// A kill can stop a write of several pages between two: the journal's own
    /// checksum then fails, and such a journal decided nothing (the files are
    /// not touched before it is whole). The store opens as it was.
    @Test func aJournalCutShortInItsFileIsNoSaveAndTheNextSaveWritesOverIt() throws {
        let directory = try TemporaryDirectory()
        try saveSongAndPlaylist(directory.path, title: "before")
        var journal = WriteBatch()
        let record = DataBuffer(bytes: [1, 2, 3])
        RawTokyoCabinet.rowKey(2).withUnsafeBytes { k in record.withUnsafeBytes { journal.set($0, forKey: k, inTable: "Song") } }
        var whole = journal.encoded()
        whole[whole.count - 1] ^= 0xFF
        let path = directory.path + "/" + TokyoCabinetBackend.journalFileName
        try Data(TokyoCabinetJournalFile.header(holding: whole) + whole).write(to: URL(fileURLWithPath: path))
        #expect(try !TokyoCabinetBackend.hasPendingJournal(inDirectory: directory.path))
        #expect(try songTitles(directory.path) == ["before"])       // a reader is not refused
        try saveSongAndPlaylist(directory.path, title: "after")  // a writer opens, and writes over it
        #expect(try songTitles(directory.path) == ["after", "before"])
        #expect(try !TokyoCabinetBackend.hasPendingJournal(inDirectory: directory.path))
    }

    /// A kill can cut a journal's write after its first pages, leaving an older
    /// journal's last pages behind them, of the same length: the header names
    /// the CRC-32 of this journal, and the bytes are not it. The older journal
    /// (applied long ago) must not come back.
    @Test func anOlderJournalBehindANewHeaderIsNotReplayed() throws {
        let directory = try TemporaryDirectory()
        try saveSongAndPlaylist(directory.path, title: "before")
        func journal(_ value: UInt8) -> [UInt8] {
            var journal = WriteBatch()
            let record = DataBuffer(bytes: [value, 2, 3])
            RawTokyoCabinet.rowKey(2).withUnsafeBytes { k in record.withUnsafeBytes { journal.set($0, forKey: k, inTable: "Song") } }
            return journal.encoded()
        }
        let older = journal(1), newer = journal(9)
        #expect(older.count == newer.count && WriteBatch.isWhole(older))
        let path = directory.path + "/" + TokyoCabinetBackend.journalFileName
        try Data(TokyoCabinetJournalFile.header(holding: newer) + older).write(to: URL(fileURLWithPath: path))
        #expect(try !TokyoCabinetBackend.hasPendingJournal(inDirectory: directory.path))
        try Data(TokyoCabinetJournalFile.header(holding: older) + older).write(to: URL(fileURLWithPath: path))
        #expect(try TokyoCabinetBackend.hasPendingJournal(inDirectory: directory.path), "the same bytes behind their own header are a journal")
    }

    /// A power loss can leave a new file with its length and no bytes (zeros),
    /// or a few bytes of its header: no journal was decided, the store opens.
    @Test func aJournalFileOfZerosOrAHeaderCutShortIsNoJournal() throws {
        let directory = try TemporaryDirectory()
        try saveSongAndPlaylist(directory.path, title: "before")
        let path = directory.path + "/" + TokyoCabinetBackend.journalFileName
        for bytes in [[UInt8](repeating: 0, count: 4096), Array(TokyoCabinetJournalFile.magic.prefix(5)),
                      Array(TokyoCabinetJournalFile.header(holding: [1, 2, 3, 4, 5]).prefix(14))] {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            #expect(try !TokyoCabinetBackend.hasPendingJournal(inDirectory: directory.path))
            try saveSongAndPlaylist(directory.path, title: "after \(bytes.count)")
        }
        #expect(try songTitles(directory.path).count == 4)
        // Bytes that are not the journal file's at all are still damage, named.
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: path))
        #expect(throws: CabinetError.self) { _ = try ObjectStore(path: directory.path) }
    }

    /// A journal file that is not one says why when the writer opens: which
    /// part of its header is wrong, not only that the replay found no journal.
    /// Nothing is changed, and the store opens once the file is dealt with.
    @Test func aJournalFileWithABadHeaderNamesWhatIsWrong() throws {
        let directory = try TemporaryDirectory()
        try saveSongAndPlaylist(directory.path, title: "before")
        let path = directory.path + "/" + TokyoCabinetBackend.journalFileName
        let whole = TokyoCabinetJournalFile.header(holding: [1, 2, 3, 4, 5])
        var unknownState = whole, reservedSet = whole
        unknownState[8] = 7
        reservedSet[10] = 1
        for (bytes, expected) in [(unknownState, "header's state is 7, which no Cabinet writes"),
                                  (reservedSet, "header's bytes 9 to 11, always 0, are not"),
                                  ([1, 2, 3] + whole, "starts with neither this version's header (CABINETW) nor an older journal"),
                                  (Array(whole.prefix(8)) + [2], "9 bytes long, shorter than a header (20 bytes), and not the start of one")] {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let error = expectCabinetError({ _ = try ObjectStore(path: directory.path) }) { $0.code == .malformedRecord }
            let reason = error?.reason ?? "no malformedRecord error"
            #expect(reason.contains("the save journal is damaged") && reason.contains(expected), "\(reason)")
            #expect(error?.location?.file == path, "names the journal file")
            // The tools that look at such a store say the same: verify (read-only), and info on a writer's backend.
            let problems = try StoreVerifier.verify(path: directory.path)
            #expect(problems.contains { $0.location.file == path && $0.reason.contains(expected) }, "\(problems)")
            let writer = try TokyoCabinetBackend(directory: directory.path)
            let info = try StoreInfo(backend: writer)
            writer.close()
            #expect(info.journalPending && info.pendingRecovery.contains { $0.contains(expected) }, "\(info.pendingRecovery)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(bytes), "left as it was, for a person to look at")
        }
        try FileManager.default.removeItem(atPath: path)
        #expect(try songTitles(directory.path) == ["before"])
    }

    /// A big journal's room is given back when it goes: the file does not keep
    /// the size of the largest save it ever held.
    @Test func aBigJournalLeavesNoBigFile() throws {
        let directory = try TemporaryDirectory()
        let store = try openStoreSavingSongAndPlaylist(directory.path, title: String(repeating: "x", count: TokyoCabinetJournalFile.keptSize + 1)).store
        let path = directory.path + "/" + TokyoCabinetBackend.journalFileName
        let size = try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(size == TokyoCabinetJournalFile.headerSize)
        store.close()
    }

    /// The writer checks before each journal that its open file is still the
    /// one at the path: a file linked elsewhere since is replaced, not written through.
    @Test func aJournalFileLinkedElsewhereWhileOpenIsReplaced() throws {
        let directory = try TemporaryDirectory()
        let (store, song, list) = try openStoreSavingSongAndPlaylist(directory.path)
        let path = directory.path + "/" + TokyoCabinetBackend.journalFileName, copy = directory.path + "-elsewhere"
        try FileManager.default.linkItem(atPath: path, toPath: copy)
        let before = try Data(contentsOf: URL(fileURLWithPath: copy))
        song.title = "again"; list.songs.append(song)
        try store.save()
        #expect(try Data(contentsOf: URL(fileURLWithPath: copy)) == before)
        #expect(try inode(path) != inode(copy))
        store.close()
        try FileManager.default.removeItem(atPath: copy)
        #expect(try songTitles(directory.path) == ["again"])
    }

    /// A directory planted where the journal file was, while the writer has it
    /// open: the journal cannot be written, so the save throws (it went on
    /// without a journal before) and stays pending; once the directory is gone it saves.
    @Test func aJournalThatCannotBeWrittenStopsTheSaveBeforeAnyFile() throws {
        let directory = try TemporaryDirectory()
        let (store, song, list) = try openStoreSavingSongAndPlaylist(directory.path, title: "before")
        let path = directory.path + "/" + TokyoCabinetBackend.journalFileName
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        song.title = "after"; list.songs.append(song)
        #expect(throws: CabinetError.self) { try store.save() }
        #expect(store.hasUnsavedChanges)
        try FileManager.default.removeItem(atPath: path)
        try store.save()
        store.close()
        #expect(try songTitles(directory.path) == ["after"])
    }

    /// A reader keeps the journal file open between its read operations
    /// (`TokyoCabinetJournalProbe`) and asks the path only whether it is still
    /// that file: a journal written in place, the file removed, and another
    /// file in its place are each seen at the next read.
    @Test func aReaderFollowsTheJournalFileChangedInPlaceRemovedAndReplaced() throws {
        let directory = try TemporaryDirectory()
        try saveSongAndPlaylist(directory.path, title: "saved")
        let path = directory.path + "/" + TokyoCabinetBackend.journalFileName
        let url = URL(fileURLWithPath: path)
        var journal = WriteBatch()
        let record = DataBuffer(bytes: [1, 2, 3])
        RawTokyoCabinet.rowKey(2).withUnsafeBytes { k in record.withUnsafeBytes { journal.set($0, forKey: k, inTable: "Song") } }
        let whole = journal.encoded()
        let pending = Data(TokyoCabinetJournalFile.header(holding: whole) + whole)
        let done = Data(TokyoCabinetJournalFile.header(holding: nil))

        let reader = try ObjectStore(path: directory.path, readOnly: true)
        defer { reader.close() }
        try reader.register(Song.self, Playlist.self)
        func titles() throws -> [String] { try reader.fetchAll(Song.self).map(\.title) }
        func refused() -> Bool {
            expectCabinetError({ _ = try titles() }) { $0.code == .recoveryPending && ($0.reason ?? "").contains(TokyoCabinetBackend.journalFileName) } != nil
        }
        #expect(try titles() == ["saved"])
        try done.write(to: url)
        #expect(try titles() == ["saved"], "a file holding no journal")
        let kept = try inode(path)
        try pending.write(to: url)
        #expect(try inode(path) == kept)
        #expect(refused(), "a journal written in place, into the file the reader keeps")
        try done.write(to: url)
        #expect(try inode(path) == kept && titles() == ["saved"], "taken back in place")
        try FileManager.default.removeItem(atPath: path)
        #expect(try titles() == ["saved"], "removed")
        try pending.write(to: url)
        #expect(refused(), "a new file at the path")
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        #expect(expectCabinetError({ _ = try titles() }) { $0.description.contains("not a regular file") } != nil,
                "a directory in its place is named, not read")
    }
}
