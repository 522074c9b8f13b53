@testable import Cabinet
import CabinetStorage
import Foundation
import Testing

/// A store directory someone else can write to must not turn Cabinet against
/// files outside it, nor let a second writer in: links are never followed,
/// names read from disk are checked, and the lock cannot be removed.
@Suite struct SecurityTests {
    /// A file outside the store that a planted link points at, and its original bytes.
    private func victim(in directory: TemporaryDirectory, _ text: String = "precious, not Cabinet's\n") throws -> (path: String, bytes: Data) {
        let path = directory.path + "/victim"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return (path, Data(text.utf8))
    }

    @Test func aLockFileThatIsALinkIsReplacedNotWrittenThrough() throws {
        let outside = try TemporaryDirectory()
        let (target, original) = try victim(in: outside)
        let store = outside.path + "/store"
        try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: store + "/.cabinet-lock", withDestinationPath: target)
        try saveSongAndPlaylist(store)
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == original)

        // A hard link is a second name for the victim: it must be replaced too, not truncated.
        #expect(link(target, store + "/.cabinet-lock") == 0)
        try saveSongAndPlaylist(store, title: "again")
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == original)
        #expect(try songTitles(store) == ["again", "saved"])
    }

    @Test func journalAndMarkerTemporariesThatAreLinksAreReplacedNotWrittenThrough() throws {
        let outside = try TemporaryDirectory()
        let (target, original) = try victim(in: outside)
        let store = outside.path + "/store"
        try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: store + "/.cabinet-format.tmp", withDestinationPath: target)
        try FileManager.default.createSymbolicLink(atPath: store + "/.cabinet-journal.tmp", withDestinationPath: target)
        try saveSongAndPlaylist(store)          // writes the marker and a journal, each through its temporary
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == original)
        #expect(try String(contentsOfFile: store + "/.cabinet-format", encoding: .utf8) == "cabinet-record-format checksummed\n")
        #expect(try songTitles(store) == ["saved"])
        #expect(!DirectoryFiles.exists(store + "/.cabinet-journal.tmp"))
        #expect(try !TokyoCabinetBackend.hasPendingJournal(inDirectory: store))
    }

    /// The journal is one file written in place: a second hard link planted in
    /// its place (here to an empty file, which reads as "no journal") is replaced
    /// by a file of its own before the first write, never written through.
    @Test func aJournalThatIsAHardLinkIsReplacedNotWrittenThrough() throws {
        let outside = try TemporaryDirectory()
        let store = outside.path + "/store"
        try saveSongAndPlaylist(store)
        let victim = outside.path + "/empty-victim"
        #expect(FileManager.default.createFile(atPath: victim, contents: Data()))
        try FileManager.default.linkItem(atPath: victim, toPath: store + "/.cabinet-journal")
        try saveSongAndPlaylist(store)          // a save of two files: through the journal
        #expect(try Data(contentsOf: URL(fileURLWithPath: victim)).isEmpty)
        #expect(try songTitles(store) == ["saved", "saved"])
    }

    @Test func aJournalOrMarkerThatIsALinkIsRefusedUnread() throws {
        let outside = try TemporaryDirectory()
        let (target, original) = try victim(in: outside)
        let store = outside.path + "/store"
        try saveSongAndPlaylist(store)
        try? FileManager.default.removeItem(atPath: store + "/.cabinet-journal")   // the writer's, if any
        try FileManager.default.createSymbolicLink(atPath: store + "/.cabinet-journal", withDestinationPath: target)
        let error = expectCabinetError({ _ = try ObjectStore(path: store) }) {
            guard $0.code == .systemCallFailure, $0.underlying?.domain == .posix, let location = $0.location,
                  let message = $0.underlying?.message else { return false }
            return location.file.hasSuffix(".cabinet-journal") && message.contains("symbolic link")
        }
        #expect(error != nil)
        try FileManager.default.removeItem(atPath: store + "/.cabinet-journal")
        try FileManager.default.removeItem(atPath: store + "/.cabinet-format")
        try FileManager.default.createSymbolicLink(atPath: store + "/.cabinet-format", withDestinationPath: target)
        #expect(throws: CabinetError.self) { _ = try ObjectStore(path: store) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == original)
    }

    @Test func aClassFileOrItsLogThatIsALinkIsRefused() throws {
        let outside = try TemporaryDirectory()
        let (target, original) = try victim(in: outside)
        let empty = outside.path + "/empty"
        #expect(FileManager.default.createFile(atPath: empty, contents: nil))
        let store = outside.path + "/store"
        try saveSongAndPlaylist(store)
        // An empty file behind a link would be made into a database; a log behind one, truncated.
        try FileManager.default.createSymbolicLink(atPath: store + "/Album", withDestinationPath: empty)
        try FileManager.default.createSymbolicLink(atPath: store + "/Song.wal", withDestinationPath: target)
        let opened = try ObjectStore(path: store)
        for type: StoredObject.Type in [Album.self, Song.self] {
            let error = expectCabinetError({ try opened.register(type) }) {
                guard $0.code == .notADatabase, let reason = $0.reason else { return false }
                return reason.contains("symbolic link")
            }
            #expect(error != nil, "\(type)")
        }
        opened.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == original)
        #expect(try Data(contentsOf: URL(fileURLWithPath: empty)).isEmpty)
    }

    @Test func aStoreDirectoryThatIsALinkIsRefused() throws {
        let outside = try TemporaryDirectory()
        try saveSongAndPlaylist(outside.path + "/store")
        try FileManager.default.createSymbolicLink(atPath: outside.path + "/alias", withDestinationPath: outside.path + "/store")
        let error = expectCabinetError({ _ = try ObjectStore(path: outside.path + "/alias") }) {
            guard $0.code == .cannotAccessDirectory, let reason = $0.reason else { return false }
            return reason.contains("symbolic link")
        }
        #expect(error != nil)
    }

    /// A journal written by hand: table names as given, each with one put.
    private func plantJournal(_ store: String, tables: [String]) throws {
        var journal = WriteBatch()
        var record = DataBuffer(); record.writeUInt8(1); record.writeString("planted"); record.writeUInt32(1)
        record.appendTrailer(for: .checksummed)
        for table in tables {
            RawTokyoCabinet.rowKey(900).withUnsafeBytes { key in record.withUnsafeBytes { journal.set($0, forKey: key, inTable: table) } }
        }
        try Data(journal.encoded()).write(to: URL(fileURLWithPath: store + "/" + TokyoCabinetBackend.journalFileName))
    }

    @Test(arguments: ["../escape", "/tmp/escape", ".cabinet-lock", "Song.wal", "Song.tmp.12", ""])
    func aJournalNamingAFileThatIsNotATableIsDamagedAndAppliesNothing(_ name: String) throws {
        let outside = try TemporaryDirectory()
        let store = outside.path + "/store"
        try saveSongAndPlaylist(store)
        // A valid table first: nothing may be applied before every name is checked.
        try plantJournal(store, tables: ["Song", name])
        let before = try DirectorySnapshot(store)
        let journal = store + "/" + TokyoCabinetBackend.journalFileName
        let error = expectCabinetError({ _ = try ObjectStore(path: store) }) {
            guard $0.code == .malformedRecord, let location = $0.location, let reason = $0.reason else { return false }
            return location.file == journal && reason.contains("the save journal is damaged") && reason.contains("cannot exist")
        }
        #expect(error != nil)
        #expect(try DirectorySnapshot(store).entries == before.entries)     // the directory itself changed: the writer's lock note came and went
        #expect(!FileManager.default.fileExists(atPath: outside.path + "/escape"))
        #expect(!FileManager.default.fileExists(atPath: "/tmp/escape"))
        try FileManager.default.removeItem(atPath: journal)     // as the error says: move it away, the store is as before
        #expect(try songTitles(store) == ["saved"])
    }

    @Test func storedNamesThatCollideWithOtherFilesAreRefusedAtRegister() throws {
        final class Log: StoredObject { override class var storedName: String { "Song.wal" } }
        final class Copy: StoredObject { override class var storedName: String { "Song.tmp.3" } }
        final class Escape: StoredObject { override class var storedName: String { "../Song" } }
        let store = try ObjectStore(backend: MemoryBackend())
        for type: StoredObject.Type in [Log.self, Copy.self, Escape.self] {
            let error = expectCabinetError({ try store.register(type) }) {
                guard $0.code == .invalidStoredName, let name = $0.name else { return false }
                // The message names the stored name once.
                return name == type.storedName && "\($0)".components(separatedBy: "'\(type.storedName)'").count == 2
            }
            #expect(error != nil, "\(type.storedName)")
        }
        #expect(TableName.problem(with: "Song") == nil && TableName.problem(with: "My.tmp.file") == nil)
        for name in [".cabinet-lock", "a/b", "/Song", "Song\0", "So\nng", "", String(repeating: "x", count: 239)] {
            #expect(TableName.problem(with: name) != nil, "\(name.debugDescription)")
        }
        #expect(TableName.problem(with: "Song.v2") == nil && TableName.problem(with: "Söng") == nil && TableName.problem(with: "a.b.c") == nil)
    }

    /// The longest names Cabinet and Tokyo Cabinet derive from a stored name
    /// (`.cabinet-tmp.NAME.wal` for a new or rebuilt file;
    /// `NAME.index.tmp.<inode>.wal` for a compacted index file) must be file names: a longer stored name is refused at
    /// register, before any file is made, and the longest allowed one works.
    @Test func storedNamesTooLongForTheFilesCabinetDerivesAreRefusedAtRegister() throws {
        final class Long: StoredObject { override class var storedName: String { String(repeating: "l", count: 239) } }
        final class Longest: StoredObject { override class var storedName: String { String(repeating: "m", count: 238) } }
        class Worded: StoredObject {
            @Stored var word = ""
            override class var indexes: [StoredIndex] { [.value(\Worded.word)] }
            override func read(from buffer: inout DataBuffer) throws { word = try buffer.readString() }
            override func write(to buffer: inout DataBuffer) { buffer.writeString(word) }
        }
        final class LongIndexed: Worded { override class var storedName: String { String(repeating: "i", count: 221) } }
        final class LongestIndexed: Worded { override class var storedName: String { String(repeating: "j", count: 220) } }
        let directory = try TemporaryDirectory()
        let store = try ObjectStore(path: directory.path)
        let before = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        for type: StoredObject.Type in [Long.self, LongIndexed.self] {
            let error = expectCabinetError({ try store.register(type) }) {
                $0.code == .invalidStoredName && ($0.reason ?? "").contains("255 bytes")
            }
            #expect(error != nil, "\(type.storedName.utf8.count) bytes")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == before, "no file was left")
        try store.register(Longest.self, LongestIndexed.self)
        store.insert(Longest())
        let indexed = LongestIndexed(); indexed.word = "w"; store.insert(indexed)
        try store.save()
        try store.compact()
        #expect(try store.fetchAll(LongestIndexed.self).map(\.word) == ["w"])
        store.close()
        #expect(try StoreVerifier.verify(path: directory.path).isEmpty)
    }

    @Test func removingTheLockFileLetsNoSecondWriterIn() throws {
        let directory = try TemporaryDirectory()
        let first = try ObjectStore(path: directory.path)
        #expect(DirectoryFiles.exists(directory.path + "/.cabinet-lock"))
        try FileManager.default.removeItem(atPath: directory.path + "/.cabinet-lock")
        #expect(throws: CabinetError.storeLocked(path: directory.path, pid: nil)) { _ = try ObjectStore(path: directory.path) }
        #expect(throws: CabinetError.storeLocked(path: directory.path, pid: getpid())) { _ = try ObjectStore(path: directory.path, readOnly: true) }
        first.close()
        #expect(!DirectoryFiles.exists(directory.path + "/.cabinet-lock"), "closing leaves no stale process ID")

        // The same with the writer in another process.
        let (holder, input, line) = try startHolder(directory.path)
        #expect(line == "locked \(holder.processIdentifier)")
        try FileManager.default.removeItem(atPath: directory.path + "/.cabinet-lock")
        #expect(throws: CabinetError.storeLocked(path: directory.path, pid: nil)) { _ = try ObjectStore(path: directory.path) }
        try input.fileHandleForWriting.close()
        holder.waitUntilExit()
        let after = try ObjectStore(path: directory.path)
        after.close()
    }

    /// Readers coordinate with the writer through `.cabinet-commit`; without it a
    /// reader may read only with the writer kept out, so removing it lets no reader
    /// read beside a writer that does not know of it.
    @Test func removingTheCommitFileLetsNoReaderReadUnlocked() throws {
        let directory = try TemporaryDirectory()
        let writer = try LiveWriter(directory.path)
        _ = try writer.send("save")
        try FileManager.default.removeItem(atPath: directory.path + "/.cabinet-commit")
        #expect(throws: CabinetError.storeLocked(path: directory.path, pid: writer.pid)) { _ = try ObjectStore(path: directory.path, readOnly: true) }
        _ = try writer.send("quit")
        // A reader of a store without the file holds the directory shared, as before: writers wait for it to close.
        let (reader, input, line) = try startHolder(directory.path, reading: true)
        #expect(line == "locked \(reader.processIdentifier)")
        #expect(throws: CabinetError.storeLocked(path: directory.path, pid: nil)) { _ = try ObjectStore(path: directory.path) }
        try input.fileHandleForWriting.close()
        reader.waitUntilExit()
        let next = try ObjectStore(path: directory.path)                    // makes the file again
        #expect(DirectoryFiles.exists(directory.path + "/.cabinet-commit"))
        next.close()
    }

    @Test func aStaleLockNoteOfAKilledWriterNamesNoOne() throws {
        let directory = try TemporaryDirectory()
        try saveSongAndPlaylist(directory.path)
        // What a killed writer leaves: its note, naming a process that is gone.
        let gone = Process()
        gone.executableURL = URL(fileURLWithPath: "/bin/true")
        try gone.run()
        gone.waitUntilExit()
        try Data("\(gone.processIdentifier)\n".utf8).write(to: URL(fileURLWithPath: directory.path + "/.cabinet-lock"))
        let reader = try ObjectStore(path: directory.path, readOnly: true)
        // Only a reader holds the store: the writer is told no process ID, not the dead one.
        #expect(throws: CabinetError.storeLocked(path: directory.path, pid: nil)) { _ = try ObjectStore(path: directory.path) }
        reader.close()
        let writer = try ObjectStore(path: directory.path)
        #expect(try String(contentsOfFile: directory.path + "/.cabinet-lock", encoding: .utf8) == "\(getpid())\n")
        writer.close()
    }
}
