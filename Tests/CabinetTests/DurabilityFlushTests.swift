@testable import Cabinet
@testable import CabinetStorage
import Foundation
import Testing

/// What a flushed save flushes besides its own writes: the journal an earlier
/// default save left, what an earlier process left, files rebuilt or
/// compacted, and a pool block's group committed inside the block. Seen in the
/// kill-point shim's log of a scenario (Tests/Helpers/KillPoint/FlushScenarios)
/// or in the tables' flags.
@Suite struct DurabilityFlushTests {
    /// The file-changing calls of one unkilled, armed run of `scenario`.
    private func calls(of scenario: String) throws -> [String] {
        let harness = try KillPointHarness(KillPointCase(name: scenario, scenario: scenario))
        try harness.measure()
        return harness.calls
    }

    private static func isFlush(_ call: String, of file: String) -> Bool {
        ["fsync ", "fdatasync "].contains { call == $0 + file }
    }

    /// A journaled default save, then a flushed save of one file: the journal's
    /// last write (state 0) is flushed before the flushed save's commit.
    @Test func aFlushedSaveFlushesTheJournalAnEarlierSaveLeft() throws {
        let calls = try calls(of: "flush-after-journal")
        let lastWrite = try #require(calls.lastIndex { $0.hasPrefix("pwrite") && $0.hasSuffix("store/.cabinet-journal") },
                                     "the default save wrote no journal: \(calls)")
        let flush = calls[(lastWrite + 1)...].firstIndex { Self.isFlush($0, of: "store/.cabinet-journal") }
        #expect(flush != nil, "the journal's state 0 is never flushed: \(calls[lastWrite...])")
        let firstFlushOfSong = calls[(lastWrite + 1)...].firstIndex { $0.hasSuffix(" store/Song") && $0.hasPrefix("fsync") }
        if let flush, let firstFlushOfSong { #expect(flush < firstFlushOfSong, "the journal is flushed after the flushed commit") }
    }

    /// A flushed save of Playlist in a store an earlier process saved unflushed:
    /// Song (not written by this save), the catalog and the format marker are flushed.
    @Test func aFlushedSaveFlushesWhatAnEarlierProcessLeft() throws {
        let calls = try calls(of: "flush-earlier-open")
        // (The close truncates each file to its size: not a write of the save.)
        #expect(!calls.contains { $0.hasSuffix(" store/Song") && ["write", "pwrite"].contains(where: $0.hasPrefix) },
                "the save wrote Song, so this does not show an earlier process's writes flushed: \(calls)")
        for file in ["store/Song", "store/.cabinet-format", "store/.cabinet-catalog"] {
            #expect(calls.contains { Self.isFlush($0, of: file) }, "\(file) is not flushed: \(calls)")
        }
    }

    /// After a flushed save, a default save's growth rebuild flushes its copy
    /// before renaming it over the file, and the directory after.
    @Test func aRebuildAfterAFlushedSaveFlushesItsCopyBeforeTheRename() throws {
        let calls = try calls(of: "grow-after-flushed")
        let temporary = "store/" + DirectoryFiles.temporaryPrefix + "Song"
        let rename = try #require(calls.firstIndex { $0 == "rename \(temporary) -> store/Song" }, "no rebuild: \(calls)")
        #expect(calls[..<rename].contains { Self.isFlush($0, of: temporary) }, "the copy is renamed unflushed: \(calls)")
        #expect(calls[(rename + 1)...].contains("fsync store"), "the rename is not flushed: \(calls)")
    }

    /// A store opened without syncOnCommit starts with every file unflushed
    /// (an earlier process may have left it so); compaction and emptying of a
    /// B+ tree file leave it unflushed, as a hash file's rebuild does.
    @Test func compactionAndEmptyingLeaveTheFileUnflushed() throws {
        let directory = try TemporaryDirectory()
        let backend = try TokyoCabinetBackend(directory: directory.path)
        defer { backend.close() }
        let index = try #require(try backend.openOrderedTable(named: "Index") as? TokyoCabinetOrderedTable)
        let table = try #require(try backend.openTable(named: "Hash") as? TokyoCabinetTable)
        #expect(index.hasUnflushedChanges && table.hasUnflushedChanges, "a file opened for writing starts flushed")
        for operation in ["compact", "removeAll"] {
            try index.sync()
            #expect(!index.hasUnflushedChanges)
            if operation == "compact" { try index.compact() } else { try index.removeAll() }
            #expect(index.hasUnflushedChanges, "\(operation) of a B+ tree file left it flushed")
        }
        try table.sync()
        try table.compact()
        #expect(table.hasUnflushedChanges)
    }

    /// A flushed save with nothing to save flushes the saves before it.
    @Test func aFlushedSaveWithNothingToSaveFlushesTheSavesBeforeIt() throws {
        let directory = try TemporaryDirectory()
        let backend = try TokyoCabinetBackend(directory: directory.path)
        let store = try ObjectStore(backend: backend)
        try store.register(Song.self)
        let song = Song(); song.title = "one"
        store.insert(song)
        try store.save()
        #expect(backend.tables["Song"]?.hasUnflushedChanges == true)
        #expect(!store.hasUnsavedChanges)
        try store.save(durability: .flushed)
        #expect(backend.tables["Song"]?.hasUnflushedChanges == false, "the empty flushed save flushed nothing")
        store.close()
    }

    /// A flushed pool block whose saves were committed inside it (a compaction
    /// commits the group first), so that it waits for no commit at its end,
    /// still returns with them flushed.
    @Test func aFlushedBlockWhoseGroupWasCommittedInsideItReturnsFlushed() async throws {
        let directory = try TemporaryDirectory()
        let backend = try TokyoCabinetBackend(directory: directory.path)
        let pool = try StorePool(backend: backend, classes: [Song.self])
        try await pool.write { store in
            let song = Song(); song.title = "default"
            store.insert(song)
        }
        #expect(backend.tables["Song"]?.hasUnflushedChanges == true)
        try await pool.write(durability: .flushed) { store in
            let song = Song(); song.title = "flushed"
            store.insert(song)
            try store.save()
            try store.compact()
        }
        #expect(backend.tables["Song"]?.hasUnflushedChanges == false, "the flushed block returned unflushed")
        let titles = try await pool.read { store in try store.fetchAll(Song.self).map(\.title).sorted() }
        #expect(titles == ["default", "flushed"])
        try await pool.close()
    }
}
