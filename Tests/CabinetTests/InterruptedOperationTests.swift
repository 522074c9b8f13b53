@testable import Cabinet
import Foundation
import Testing

/// What an operation killed part way leaves in a store directory, and how the
/// next open settles it: the store opens at its old state or its new one,
/// never without a class, never with a phantom one. (The kill-point harness
/// kills every operation at every file-changing system call; these tests pin
/// down each leftover it can produce.)
@Suite struct InterruptedOperationTests {
    private func makeStore(_ directory: TemporaryDirectory, songs: Int = 50, options: TokyoCabinetBackend.Options = .init()) throws -> String {
        let path = directory.path + "/store"
        let store = try ObjectStore(backend: TokyoCabinetBackend(directory: path, options: options))
        try store.register(Song.self, Playlist.self)
        let list = Playlist(); list.title = "all"
        for i in 0..<songs { let s = Song(); s.title = "song \(i)"; store.insert(s); list.songs.append(s) }
        store.insert(list)
        try store.save()
        store.close()
        return path
    }

    private func titles(_ path: String) throws -> [String] {
        let store = try ObjectStore(path: path)
        defer { store.close() }
        try store.register(Song.self, Playlist.self)
        return try store.fetchAll(Song.self).map(\.title).sorted()
    }

    private func files(_ path: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path).sorted()
    }

    @Test func aClassFileThatTokyoCabinetsOptimizeUnlinkedIsRecoveredFromItsTemporary() throws {
        let directory = try TemporaryDirectory()
        let path = try makeStore(directory)
        let expected = try titles(path)
        // Killed between tchdboptimize's unlink and its rename (Cabinet before this version).
        try FileManager.default.moveItem(atPath: path + "/Song", toPath: path + "/Song.tmp.4711")
        #expect(!(try StoreInfo(path: path).tables.map(\.name)).contains { $0.contains(".tmp.") })   // never a phantom class
        #expect(try titles(path) == expected)
        #expect(!(try files(path)).contains { $0.hasPrefix("Song.tmp") })
    }

    @Test func aPartialOptimizeTemporaryBesideItsFileIsRemovedAndNeverListed() throws {
        let directory = try TemporaryDirectory()
        let path = try makeStore(directory)
        let expected = try titles(path)
        try FileManager.default.copyItem(atPath: path + "/Song", toPath: path + "/Song.tmp.12")
        try FileManager.default.copyItem(atPath: path + "/Song", toPath: path + "/Song.wal")
        #expect(try StoreInfo(path: path).tables.map(\.name) == ["Playlist", "Song"])
        #expect(try titles(path) == expected)
        #expect(!(try files(path)).contains("Song.tmp.12"))
    }

    @Test func aHalfWrittenRebuildOrCreationIsRemovedAndTheOriginalKept() throws {
        let directory = try TemporaryDirectory()
        let path = try makeStore(directory)
        let expected = try titles(path)
        try Data("ToKyO CaBiNeT\nhalf".utf8).write(to: URL(fileURLWithPath: path + "/.cabinet-tmp.Song"))
        try Data("ToKyO CaBiNeT\nhalf".utf8).write(to: URL(fileURLWithPath: path + "/.cabinet-tmp.Album"))
        #expect(try titles(path) == expected)
        #expect(!(try files(path)).contains { $0.hasPrefix(".cabinet-tmp.") })
    }

    @Test func savesThatGrowTheBucketsAndCompactKeepEveryObject() throws {
        let directory = try TemporaryDirectory()
        var tuning = TokyoCabinetBackend.Options()
        tuning.bucketCount = 7
        let path = try makeStore(directory, songs: 100, options: tuning)   // 101 records > 3 × 7: rebuilt
        let grown = RawTokyoCabinet.bucketCount(path + "/Song")
        #expect(grown >= 50, "the buckets grew to \(grown)")
        let store = try ObjectStore(backend: TokyoCabinetBackend(directory: path, options: tuning))
        try store.register(Song.self, Playlist.self)
        for i in 100..<400 { let s = Song(); s.title = "song \(i)"; store.insert(s) }
        try store.save()
        try store.compact()
        store.close()
        #expect(try titles(path).count == 400)
        #expect(try StoreVerifier.verify(path: path).isEmpty)
        #expect(try files(path).filter { !$0.hasPrefix(".") } == ["Playlist", "Song"])
    }

    @Test func aDecidedRestoreIsFinishedByTheNextOpenEvenHalfMovedIn() throws {
        let source = try TemporaryDirectory(), target = try TemporaryDirectory()
        let backup = try makeStore(source, songs: 5)
        let path = try makeStore(target, songs: 9)
        let expected = try titles(backup)
        // The state of a restore killed after its decision, with Playlist already moved in.
        let staging = path + "/" + TokyoCabinetBackend.restoreStagingName
        try FileManager.default.copyItem(atPath: backup, toPath: staging)
        try Data("Playlist\nSong\n".utf8).write(to: URL(fileURLWithPath: staging + "/" + TokyoCabinetBackend.restoreManifestName))
        try FileManager.default.removeItem(atPath: path + "/Playlist")
        try FileManager.default.moveItem(atPath: staging + "/Playlist", toPath: path + "/Playlist")
        RawTokyoCabinet.write(path + "/Extra", [(RawTokyoCabinet.rowKey(2), [1])])   // not in the backup: goes

        #expect(throws: CabinetError.self) { try ObjectStore(path: path, readOnly: true) }   // a reader is told, not misled
        #expect(try titles(path) == expected)
        #expect(!(try files(path)).contains(TokyoCabinetBackend.restoreStagingName))
        #expect(!(try files(path)).contains("Extra"))
    }

    @Test func anUndecidedRestoreIsDroppedAndTheStoreKept() throws {
        let source = try TemporaryDirectory(), target = try TemporaryDirectory()
        let backup = try makeStore(source, songs: 5)
        let path = try makeStore(target, songs: 9)
        let expected = try titles(path)
        try FileManager.default.copyItem(atPath: backup, toPath: path + "/" + TokyoCabinetBackend.restoreStagingName + ".partial")
        #expect(try titles(path) == expected)
        #expect(!(try files(path)).contains { $0.hasPrefix(TokyoCabinetBackend.restoreStagingName) })
    }

    @Test func aBackupIsNeverAtItsDestinationUntilWhole() throws {
        let directory = try TemporaryDirectory()
        let path = try makeStore(directory)
        // A copy a killed backup left behind does not stop the next one.
        try FileManager.default.createDirectory(atPath: directory.path + "/.copy.cabinet-partial", withIntermediateDirectories: false)
        let store = try ObjectStore(path: path)
        try store.register(Song.self, Playlist.self)
        try store.backup(to: directory.path + "/copy")
        store.close()
        #expect(try titles(directory.path + "/copy") == titles(path))
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/.copy.cabinet-partial"))
    }

    @Test func backupAndRestoreCarryTheRecordFormat() throws {
        let directory = try TemporaryDirectory()
        let path = try makeStore(directory)   // checksummed
        let store = try ObjectStore(path: path)
        try store.register(Song.self, Playlist.self)
        try store.backup(to: directory.path + "/copy")
        store.close()
        #expect(try StoreInfo(path: directory.path + "/copy").recordFormat == .checksummed)
        #expect(try titles(directory.path + "/copy") == titles(path))

        // A plain backup restored over a checksummed store makes it plain, and readable.
        let plain = directory.path + "/plain"
        let old = try ObjectStore(path: plain, options: .init(recordFormat: .plain))
        try old.register(Song.self, Playlist.self)
        let song = Song(); song.title = "plain"; old.insert(song)
        try old.save()
        old.close()
        try ObjectStore.restore(from: plain, to: path)
        #expect(try StoreInfo(path: path).recordFormat == .plain)
        #expect(try titles(path) == ["plain"])
        #expect(try StoreVerifier.verify(path: path).isEmpty)
    }

    @Test func aRecordOverTwoGibibytesIsRefusedBeforeAnythingIsWritten() throws {
        final class Blob: StoredObject {
            var bytes: [UInt8] = []
            override func write(to buffer: inout DataBuffer) { buffer.writeBytes(bytes) }
            override func read(from buffer: inout DataBuffer) throws { bytes = try buffer.readBytes() }
        }
        let directory = try TemporaryDirectory()
        let path = try makeStore(directory, songs: 1)
        let store = try ObjectStore(path: path)
        try store.register(Song.self, Playlist.self, Blob.self)
        let blob = Blob()
        blob.bytes = [UInt8](unsafeUninitializedCapacity: Int(Int32.max) - 100) { bytes, count in
            memset(bytes.baseAddress!, 7, bytes.count)
            count = bytes.count
        }
        store.insert(blob)
        let song = Song(); song.title = "beside it"; store.insert(song)   // two files: a journaled save
        let error = expectCabinetError({ try store.save() }, where: {
            guard $0.code == .valueTooLarge, let location = $0.location, let size = $0.size else { return false }
            return location.className == "Blob" && size > Int(Int32.max) - 100
        })
        #expect(error != nil)
        #expect(store.hasUnsavedChanges)
        blob.bytes = []
        store.delete(blob)
        store.close()
        #expect(try !TokyoCabinetBackend.hasPendingJournal(inDirectory: path))
        #expect(try titles(path) == ["song 0"])
    }
}
