@testable import Cabinet
@testable import CabinetStorage
import CTokyoCabinet
import Foundation
import Testing

/// A rebuild of a class file (after a failed commit, or a compaction) must not
/// leave the old file's transaction log beside the new file: Tokyo Cabinet
/// would write the log's old pages into the new file at the next open that
/// finds the header's "open" flag set.
@Suite struct RebuildLogTests {
    /// Leaves beside the (cleanly closed) file at `path` the log of a
    /// transaction that was rolled back, as closing a handle a failed commit
    /// left fatal does (Tokyo Cabinet removes the log only when the handle is not fatal).
    private func leaveSpentLog(_ path: String) throws {
        guard let hdb = tchdbnew() else { fatalError("tchdbnew") }
        defer { tchdbdel(hdb) }
        precondition(tchdbopen(hdb, path, Int32(HDBOWRITER)), "open \(path)")
        precondition(tchdbtranbegin(hdb), "begin")
        for row in UInt32(2)...UInt32(400) {
            let key = RawTokyoCabinet.rowKey(row)
            let value = [UInt8](repeating: 0xEE, count: 300)
            precondition(tchdbput(hdb, key, Int32(key.count), value, Int32(value.count)), "put")
        }
        _ = tchdbmemsync(hdb, false)
        let log = try Data(contentsOf: URL(fileURLWithPath: path + ".wal"))
        precondition(tchdbtranabort(hdb) && tchdbclose(hdb))
        try log.write(to: URL(fileURLWithPath: path + ".wal"))
    }

    @Test func aRebuildRemovesTheOldFilesLogSoAKilledWriterCannotReplayIt() throws {
        let fixture = try StoreFixture(.tokyoCabinet)
        let path = fixture.storePath + "/Song"
        do {
            let store = try fixture.open(Song.self)
            let songs = (0..<600).map { i in let song = Song(); song.title = "S\(i)"; store.insert(song); return song }
            try store.save()
            // Free space the rebuild leaves out: the new file's layout is not the old one's.
            for song in songs.prefix(300) { store.delete(song) }
            try store.save()
            store.close()
        }
        try leaveSpentLog(path)
        do {
            let backend = try TokyoCabinetBackend(directory: fixture.storePath)
            try backend.openTable(named: "Song").compact()
            backend.close()
        }
        #expect(!FileManager.default.fileExists(atPath: path + ".wal"), "the old file's log went with it")
        // A writer killed after the rebuild leaves the new file's "open" flag set.
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        try handle.seek(toOffset: UInt64(TokyoCabinetDirectory.flagsOffset))
        let flags = try #require(try handle.read(upToCount: 1)).first!
        try handle.seek(toOffset: UInt64(TokyoCabinetDirectory.flagsOffset))
        try handle.write(contentsOf: [flags | TokyoCabinetDirectory.openFlag])
        try handle.close()
        let store = try fixture.open(Song.self)
        defer { store.close() }
        let titles = try store.fetchAll(Song.self).sorted { $0.rowID < $1.rowID }.map(\.title)
        #expect(titles == (300..<600).map { "S\($0)" })
        #expect(try StoreVerifier.verify(store.backend).isEmpty)
    }
}
