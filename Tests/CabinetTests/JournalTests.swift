@testable import Cabinet
import CabinetStorage
import Foundation
import Testing

@Suite struct JournalTests {
    @Test func aJournalReplaysEveryOperationInOrder() throws {
        var journal = WriteBatch()
        let key = RawTokyoCabinet.rowKey(2)
        key.withUnsafeBytes { k in [UInt8]([1, 2, 3]).withUnsafeBytes { journal.set($0, forKey: k, inTable: "Song") } }
        key.withUnsafeBytes { journal.set(nil, forKey: $0, inTable: "Playlist") }
        Array("Favorite".utf8).withUnsafeBytes { k in [UInt8]([9]).withUnsafeBytes { journal.set($0, forKey: k, inTable: "NamedBuffers") } }
        var seen: [String] = []
        try WriteBatch.replay(journal.encoded(), location: RecordLocation(file: "j")) { table, key, value in
            seen.append("\(table) \(Array(key)) \(value.map { Array($0) }.map { "\($0)" } ?? "removed")")
        }
        #expect(seen == ["Song [2, 0, 0, 0] [1, 2, 3]", "Playlist [2, 0, 0, 0] removed", "NamedBuffers [70, 97, 118, 111, 114, 105, 116, 101] [9]"])
    }

    @Test func aDamagedOrCutJournalAppliesNothing() throws {
        var journal = WriteBatch()
        RawTokyoCabinet.rowKey(2).withUnsafeBytes { k in [UInt8](repeating: 7, count: 40).withUnsafeBytes { journal.set($0, forKey: k, inTable: "Song") } }
        let bytes = journal.encoded()
        var variants: [[UInt8]] = [Array(bytes.dropLast(5)), Array(bytes.prefix(10)), []]
        for index in stride(from: 0, to: bytes.count, by: 7) {
            var flipped = bytes
            flipped[index] ^= 0x10
            variants.append(flipped)
        }
        for damaged in variants {
            var applied = 0
            #expect(throws: CabinetError.self) {
                try WriteBatch.replay(damaged, location: RecordLocation(file: "j")) { _, _, _ in applied += 1 }
            }
            #expect(applied == 0)
        }
    }

    /// A save killed after writing its journal and before touching the files is finished by the next open.
    @Test func openingAStoreFinishesASaveLeftInItsJournal() throws {
        let directory = try TemporaryDirectory()
        do {
            // Plain, so the records below need no checksum.
            let store = try ObjectStore(path: directory.path, options: .init(recordFormat: .plain))
            try store.register(Song.self, Playlist.self)
            store.close()
        }
        // What a save of one song and one playlist that refers to it journals.
        var song = DataBuffer(); song.writeUInt8(1); song.writeString("Journaled"); song.writeUInt32(7)
        var list = DataBuffer(); list.writeUInt8(1); list.writeString("J"); list.writeUInt32(1); list.writeUInt32(2)
        // Song has class ID 0 and Playlist 1 (registered in that order); each save writes the last row ID.
        let songMetadata = DataBuffer(bytes: ClassMetadata(lastRowID: 2, version: 1, classID: 0, salt: (1, 2)).bytes)
        let listMetadata = DataBuffer(bytes: ClassMetadata(lastRowID: 2, version: 1, classID: 1, salt: (3, 4)).bytes)
        var journal = WriteBatch()
        for (table, row, record) in [("Song", UInt32(2), song), ("Playlist", UInt32(2), list),
                                     ("Song", ClassMetadata.rowID, songMetadata), ("Playlist", ClassMetadata.rowID, listMetadata)] {
            RawTokyoCabinet.rowKey(row).withUnsafeBytes { k in record.withUnsafeBytes { journal.set($0, forKey: k, inTable: table) } }
        }
        let backend = try TokyoCabinetBackend(directory: directory.path)
        try backend.writeJournal(journal.encoded())
        backend.close()

        #expect(try TokyoCabinetBackend.hasPendingJournal(inDirectory: directory.path))
        let store = try ObjectStore(path: directory.path)
        #expect(try !TokyoCabinetBackend.hasPendingJournal(inDirectory: directory.path))
        try store.register(Song.self, Playlist.self)
        let playlist = try #require(try store.fetch(Playlist.self, rowID: 2))
        #expect(playlist.songs.first?.title == "Journaled")
        store.close()
    }

    @Test func aDamagedJournalStopsTheOpenWithAnErrorThatSaysWhatToDo() throws {
        let directory = try TemporaryDirectory()
        let journalPath = directory.path + "/" + TokyoCabinetBackend.journalFileName
        try Data("CABINETJ garbage".utf8).write(to: URL(fileURLWithPath: journalPath))
        let error = expectCabinetError({ _ = try ObjectStore(path: directory.path) }) {
            guard $0.code == .malformedRecord, let location = $0.location, let reason = $0.reason else { return false }
            return location.file == journalPath && reason.contains("journal")
        }
        #expect(error != nil)
        try FileManager.default.removeItem(atPath: journalPath)
        let store = try ObjectStore(path: directory.path)   // the lock was released by the failed open
        store.close()
    }

    @Test func savesOfOneFileNeedNoJournalAndSavesOfSeveralLeaveNone() throws {
        let directory = try TemporaryDirectory()
        let (store, song, _) = try openStoreSavingSongAndPlaylist(directory.path)
        var favorites = DataBuffer(); favorites.writeReference(song)
        try store.setNamedBuffer(favorites, forName: "F")
        song.title = "changed"
        try store.save()
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(!names.contains { $0.hasPrefix(".cabinet-journal.") })
        #expect(try !TokyoCabinetBackend.hasPendingJournal(inDirectory: directory.path))
        store.close()
        let reopened = try ObjectStore(path: directory.path)
        try reopened.register(Song.self, Playlist.self)
        var buffer = try #require(try reopened.namedBuffer(forName: "F"))
        #expect(try buffer.readReference(to: Song.self)?.title == "changed")
        reopened.close()
    }
}
