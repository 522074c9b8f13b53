@testable import Cabinet
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
        let store = try ObjectStore(path: directory.path)
        try store.register(Song.self, Playlist.self)
        let song = Song(); song.title = "one"; store.insert(song)
        let list = Playlist(); list.songs = [song]; store.insert(list)
        try store.save()
        let first = try inode(journal)
        song.title = "two"; list.songs.append(song)
        try store.save()
        #expect(try inode(journal) == first, "the same file, not a new one renamed into place")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: journal)))
        #expect(bytes.starts(with: TokyoCabinetJournalFile.magic) && bytes[8] == 0, "it holds no journal once the save is done")
        #expect(try !TokyoCabinetBackend.hasPendingJournal(inDirectory: directory.path))
        store.close()
        #expect(try songTitles(directory.path) == ["two"])
    }

    /// A kill can stop a write of several pages between two: the journal's own
    /// checksum then fails, and such a journal decided nothing (the files are
    /// not touched before it is whole). The store opens as it was.
    @Test func aJournalCutShortInItsFileIsNoSaveAndTheNextSaveWritesOverIt() throws {
        let directory = try TemporaryDirectory()
        try saveSongAndPlaylist(directory.path, title: "before")
        var journal = SaveJournal()
        let record = DataBuffer(bytes: [1, 2, 3])
        RawTokyoCabinet.rowKey(2).withUnsafeBytes { k in record.withUnsafeBytes { journal.record(table: "Song", key: k, value: $0) } }
        var whole = journal.encoded()
        whole[whole.count - 1] ^= 0xFF
        let path = directory.path + "/" + TokyoCabinetBackend.journalFileName
        try Data(TokyoCabinetJournalFile.header(holding: whole.count) + whole).write(to: URL(fileURLWithPath: path))
        #expect(try !TokyoCabinetBackend.hasPendingJournal(inDirectory: directory.path))
        #expect(try songTitles(directory.path) == ["before"])       // a reader is not refused
        try saveSongAndPlaylist(directory.path, title: "after")  // a writer opens, and writes over it
        #expect(try songTitles(directory.path) == ["after", "before"])
        #expect(try !TokyoCabinetBackend.hasPendingJournal(inDirectory: directory.path))
    }

    /// A big journal's room is given back when it goes: the file does not keep
    /// the size of the largest save it ever held.
    @Test func aBigJournalLeavesNoBigFile() throws {
        let directory = try TemporaryDirectory()
        try saveSongAndPlaylist(directory.path, title: String(repeating: "x", count: TokyoCabinetJournalFile.keptSize + 1))
        let path = directory.path + "/" + TokyoCabinetBackend.journalFileName
        let size = try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(size == TokyoCabinetJournalFile.headerSize)
        try saveSongAndPlaylist(directory.path, title: "small")
        #expect(try songTitles(directory.path).count == 2)
    }
}
