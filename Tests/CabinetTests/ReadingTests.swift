@testable import Cabinet
import CabinetStorage
import CTokyoCabinet
import Foundation
import Testing

/// A reader writes nothing: not the lock, not a leftover's removal, not Tokyo
/// Cabinet's recovery. It works on a store it may only read, and says clearly
/// when a writer must first finish what a killed one left.
@Suite struct ReadingTests {
    private func makeStore() throws -> TemporaryDirectory {
        try makeSongStore(songs: 2)
    }

    private func readEverything(_ path: String) throws -> [String] {
        let store = try ObjectStore(path: path, readOnly: true)
        defer { store.close() }
        try store.register(Song.self, Playlist.self)
        var favorites = try #require(try store.namedBuffer(forName: "Favorite"))
        #expect(try favorites.readReferences(to: Song.self).count == 2)
        #expect(try store.fetchAll(Playlist.self).first?.songs.count == 2)
        return try store.fetchAll(Song.self).map(\.title).sorted()
    }

    @Test func aReaderAndTheReadingToolsChangeNotOneByte() throws {
        let directory = try makeStore()
        // A journal temporary that never became a journal: a writer removes it, a reader must not.
        try Data("half".utf8).write(to: URL(fileURLWithPath: directory.path + "/.cabinet-journal.tmp"))
        let before = try DirectorySnapshot(directory.path)
        #expect(try readEverything(directory.path) == ["s0", "s1"])
        let tool = cabinetToolPath
        #expect(try run(tool, ["verify", directory.path]).status == 0)
        #expect(try run(tool, ["info", directory.path]).status == 0)
        _ = try StoreInfo(path: directory.path)
        #expect(try DirectorySnapshot(directory.path) == before, "before: \(before)")
    }

    @Test func aUserWhoMayOnlyReadTheStoreReadsIt() throws {
        let directory = try makeStore()
        try makeReadOnly(directory.path)
        defer { makeWritable(directory.path) }
        let before = try DirectorySnapshot(directory.path)
        let tool = cabinetToolPath
        let verify = try runAsReader(tool, ["verify", directory.path])
        #expect(verify.status == 0 && verify.output.contains("no damage found"), "\(verify.output)")
        let info = try runAsReader(tool, ["info", directory.path])
        #expect(info.status == 0 && info.output.contains("Song"), "\(info.output)")
        // An app's read-only open, as that user: it opens, says so, and closes when its input ends.
        let holder = try runAsReader(buildProductsDirectory + "/cabinet-test-holder", [directory.path, "read"])
        #expect(holder.output.hasPrefix("locked "), "\(holder.output)")
        // Writing is refused by the system, and said so clearly.
        let compact = try runAsReader(tool, ["compact", directory.path])
        #expect(compact.status != 0 && compact.output.contains("Cabinet:"), "\(compact.output)")
        #expect(try DirectorySnapshot(directory.path) == before)
    }

    @Test func aPendingJournalIsReportedToAReaderAndFinishedByTheNextWriter() throws {
        let directory = try makeStore()
        var song = DataBuffer(); song.writeUInt8(1); song.writeString("journaled"); song.writeUInt32(0)
        song.appendTrailer(for: .checksummed)
        var journal = WriteBatch()
        RawTokyoCabinet.rowKey(2).withUnsafeBytes { key in song.withUnsafeBytes { journal.set($0, forKey: key, inTable: "Song") } }
        RawTokyoCabinet.rowKey(9).withUnsafeBytes { key in journal.set(nil, forKey: key, inTable: "Playlist") }
        try Data(journal.encoded()).write(to: URL(fileURLWithPath: directory.path + "/" + TokyoCabinetBackend.journalFileName))
        let before = try DirectorySnapshot(directory.path)

        let error = expectCabinetError({ _ = try ObjectStore(path: directory.path, readOnly: true) }) {
            guard $0.code == .recoveryPending, let path = $0.path, let reason = $0.reason else { return false }
            return path == directory.path && reason.contains(".cabinet-journal")
        }
        let message = "\(try #require(error))"
        #expect(message.contains("has a save to finish") && message.contains("open it writable once to finish it"))
        let info = try StoreInfo(path: directory.path)
        #expect(info.journalPending && info.pendingRecovery.count == 1)
        #expect(try StoreVerifier.verify(path: directory.path).isEmpty, "a whole journal is not damage")
        #expect(try DirectorySnapshot(directory.path) == before)

        let writer = try ObjectStore(path: directory.path)        // finishes the save
        writer.close()
        #expect(try readEverything(directory.path) == ["journaled", "s1"])
    }

    /// Tokyo Cabinet rolls a killed writer's transaction back at the next open of
    /// the file, even a reader's, writing to the file: what a reader must not do.
    @Test func tokyoCabinetItselfRollsBackAtAReadersOpen() throws {
        let directory = try makeStore()
        let song = directory.path + "/Song"
        try RawTokyoCabinet.leaveInterruptedTransaction(song, [(RawTokyoCabinet.rowKey(77), [1, 2, 3])])
        let before = try Data(contentsOf: URL(fileURLWithPath: song))
        #expect(TokyoCabinetDirectory.transactionPending(table: song, logSize: Int(try StoreInfoSize.bytes(song + ".wal"))))
        let hdb = try #require(tchdbnew())
        defer { tchdbdel(hdb) }
        #expect(tchdbopen(hdb, song, Int32(HDBOREADER)))
        _ = tchdbclose(hdb)
        #expect(try Data(contentsOf: URL(fileURLWithPath: song)) != before)
        #expect(!FileManager.default.fileExists(atPath: song + ".wal"))
    }

    @Test func anInterruptedTransactionIsLeftToAWriterAndReportedClearly() throws {
        let directory = try makeStore()
        // Row 2 half-overwritten and a row 77 half-added, as a writer killed inside a transaction leaves them.
        try RawTokyoCabinet.leaveInterruptedTransaction(directory.path + "/Song", [
            (RawTokyoCabinet.rowKey(2), [9, 9, 9]), (RawTokyoCabinet.rowKey(77), [1, 2, 3]),
        ])
        let before = try DirectorySnapshot(directory.path)

        let error = expectCabinetError({ _ = try ObjectStore(path: directory.path, readOnly: true) }) {
            guard $0.code == .recoveryPending, let reason = $0.reason else { return false }
            return reason.contains("Song.wal")
        }
        #expect(error != nil)
        let tool = cabinetToolPath
        let verify = try run(tool, ["verify", directory.path])
        #expect(verify.status == 1 && verify.output.contains("Song.wal") && verify.output.contains("did not finish"), "\(verify.output)")
        #expect(verify.output.contains("open the store writable once"))
        let info = try run(tool, ["info", directory.path])
        #expect(info.status == 0 && info.output.contains("transaction to roll back") && info.output.contains("Pending: Song.wal"), "\(info.output)")
        #expect(try DirectorySnapshot(directory.path) == before, "nothing rolled back by a reader")

        // Any writable open rolls it back: the store is as it was before that transaction.
        let writer = try ObjectStore(path: directory.path)
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/Song.wal"))
        writer.close()
        #expect(try readEverything(directory.path) == ["s0", "s1"])
        #expect(try StoreVerifier.verify(path: directory.path).isEmpty)
    }
}
