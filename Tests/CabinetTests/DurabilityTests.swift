@testable import Cabinet
@testable import CabinetStorage
import Foundation
import Testing

/// A save's durability level (`save(durability:)`, `WriteBatch.durability`):
/// what a flushed save flushes on Tokyo Cabinet, seen in the system calls the
/// kill-point shim logs (Tests/Helpers/KillPointShim), that a default save
/// flushes nothing, that a flush that fails is a typed error that loses
/// nothing, and that the level travels through a pool's group commit.
@Suite struct DurabilityTests {
    /// The file-changing calls of one unkilled run of a kill-point scenario
    /// ("fsync store/Song", …), and the harness that made them.
    private func calls(of scenario: String) throws -> (calls: [String], harness: KillPointHarness) {
        let harness = try KillPointHarness(KillPointCase(name: scenario, scenario: scenario))
        try harness.measure()
        return (harness.calls, harness)
    }

    private static func isFlush(_ call: String) -> Bool {
        ["fsync ", "fdatasync ", "msync "].contains(where: call.hasPrefix)
    }

    @Test(arguments: ["save-one", "save-multi", "save-grow"])
    func aDefaultSaveFlushesNothing(_ scenario: String) throws {
        let (calls, _) = try calls(of: scenario)
        #expect(!calls.isEmpty)
        #expect(calls.filter(Self.isFlush).isEmpty, "a save at the default level flushed: \(calls.filter(Self.isFlush))")
    }

    /// Each file the save writes is flushed after its last write and before the
    /// save ends (the journal's removal, flushed); each name it makes or renames
    /// in the directory is followed by a flush of the directory.
    @Test func aFlushedSaveFlushesEachFileItWritesAndTheDirectory() throws {
        let (all, _) = try calls(of: "save-flushed")
        // The save ends with the journal's removal; what follows is the close.
        let end = try #require(all.lastIndex(of: "fdatasync store/.cabinet-journal"), "the journal is never flushed: \(all)")
        let save = Array(all[...end])
        func target(_ call: String) -> String { String(call.drop { $0 != " " }.dropFirst()) }
        var written: [String: Int] = [:]
        for (index, call) in save.enumerated() {
            let file = target(call)
            // A file written under a temporary name and renamed into place is flushed under its own.
            if call.hasPrefix("rename "), let arrow = file.range(of: " -> ") {
                let from = String(file[..<arrow.lowerBound]), to = String(file[arrow.upperBound...])
                if let last = written.removeValue(forKey: from) { written[to] = max(last, written[to] ?? last) }
                continue
            }
            // A log emptied after its commit needs no flush: a log that comes back is one with nothing to undo.
            if call.hasPrefix("ftruncate") && file.hasSuffix(".wal") { continue }
            if ["write ", "pwrite", "ftruncate"].contains(where: call.hasPrefix), file.hasPrefix("store/") { written[file] = index }
        }
        #expect(Set(written.keys).isSuperset(of: ["store/.cabinet-journal", "store/Song", "store/Playlist", "store/NamedBuffers",
                                                  "store/Song.wal", "store/Playlist.wal", "store/NamedBuffers.wal"]), "\(written.keys.sorted())")
        for (file, last) in written.sorted(by: { $0.key < $1.key }) {
            let flushed = save[(last + 1)...].contains { $0 == "fsync \(file)" || $0 == "fdatasync \(file)" }
            #expect(flushed, "\(file) is written at point \(last + 1) and not flushed before the save returns")
        }
        // Tokyo Cabinet writes a file's records through its map: msync'ed before the file's fsync.
        #expect(save.contains { $0.hasPrefix("msync ") })
        for (index, call) in save.enumerated() where call.hasPrefix("rename ") || call.hasSuffix("/store/.cabinet-journal") && call.hasPrefix("open") {
            #expect(save[(index + 1)...].contains("fsync store"), "\(call) at point \(index + 1) is not followed by a flush of the directory")
        }
    }

    /// The flushes of a flushed save fail with EIO, one at a time: the save
    /// throws a CabinetError, memory keeps its changes (or, once the journal
    /// decided it, counts it as saved), and a retry saves it. Until the journal
    /// is flushed every failure is reported. After it, a failure may pass
    /// unnoticed only as the existing rules let a failed write pass: the save
    /// replays its journal at once, at the same level (every table's
    /// transaction synced again, the journal's removal flushed), or the
    /// journal's removal alone did not reach the disk, when every file holds
    /// the batch, flushed, and the next commit removes it first.
    @Test func aFlushThatFailsIsATypedErrorThatLosesNothing() throws {
        let (calls, harness) = try calls(of: "save-flushed")
        let flushes = calls.indices.filter { Self.isFlush(calls[$0]) }.map { $0 + 1 }
        #expect(flushes.count > 5)
        let journalFlushed = try #require(calls.firstIndex(of: "fdatasync store/.cabinet-journal")) + 1
        for k in flushes {
            for retry in [true, false] {
                let outcome = try harness.fail(at: k, errno: EIO, retry: retry)
                let allowed: [KillPointOutcome] = k > journalFlushed ? [.reported, .absorbed] : [.reported]
                #expect(allowed.contains(outcome), "\(harness.describe(point: k)) failed with EIO\(retry ? ", retried" : ""): \(outcome)")
            }
        }
    }

    /// A flushed save flushes what default saves before it left in the page
    /// cache, so that it never outlives an earlier save (an object it refers to).
    @Test func aFlushedSaveFlushesTheDefaultSavesBeforeIt() throws {
        let directory = try TemporaryDirectory()
        let backend = try TokyoCabinetBackend(directory: directory.path)
        let store = try ObjectStore(backend: backend)
        try store.register(Song.self, Playlist.self)
        let song = Song(); song.title = "one"
        store.insert(song)
        try store.save()
        #expect(backend.tables["Song"]?.hasUnflushedChanges == true, "a default save leaves its file unflushed")
        let list = Playlist(); list.title = "flushed"; list.songs = [song]
        store.insert(list)
        try store.save(durability: .flushed)
        #expect(backend.tables["Song"]?.hasUnflushedChanges == false, "the flushed save did not flush the earlier save's file")
        #expect(backend.tables["Playlist"]?.hasUnflushedChanges == false)
        song.title = "two"
        try store.save()
        #expect(backend.tables["Song"]?.hasUnflushedChanges == true)
        store.close()
    }

    @Test func theLevelIsNotInTheBatchsBytesAndAMergeKeepsTheStrongest() throws {
        var batch = WriteBatch()
        batch.set(Array("v".utf8), forKey: Array("k".utf8), inTable: "Song")
        let bytes = batch.encoded()
        batch.durability = .flushed
        #expect(batch.encoded() == bytes, "the level changed the journal's bytes")
        #expect(try WriteBatch(decoding: bytes, location: RecordLocation(file: "journal")).durability == .asOpened)
        var merged = WriteBatch()
        merged.append(contentsOf: batch)
        #expect(merged.durability == .flushed)
        merged.append(contentsOf: WriteBatch())
        #expect(merged.durability == .flushed, "merging a default batch weakened the level")
        #expect(CommitDurability.asOpened < .flushed)
    }

    @Test func aMemoryStoreSavesFlushedAsAnyOther() throws {
        let memory = MemoryBackend(name: "flushed")
        let store = try ObjectStore(backend: memory)
        try store.register(Song.self)
        let song = Song(); song.title = "kept"
        store.insert(song)
        try store.save(durability: .flushed)
        #expect(!store.hasUnsavedChanges)
        store.close()
        let again = try ObjectStore(backend: memory)
        try again.register(Song.self)
        #expect(try again.fetchAll(Song.self).map(\.title) == ["kept"])
        again.close()
    }

    /// A pool's flushed block returns once its group's commit is flushed; the
    /// blocks around it commit at the default level.
    @Test func aPoolsFlushedBlockFlushesItsGroup() async throws {
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
        }
        #expect(backend.tables["Song"]?.hasUnflushedChanges == false, "the flushed block returned before its commit was flushed")
        try await pool.write { store in
            let song = Song(); song.title = "default again"
            store.insert(song)
        }
        #expect(backend.tables["Song"]?.hasUnflushedChanges == true, "the level outlived its group")
        let titles = try await pool.read { store in try store.fetchAll(Song.self).map(\.title).sorted() }
        #expect(titles == ["default", "default again", "flushed"])
        try await pool.close()
    }
}
