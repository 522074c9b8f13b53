@testable import Cabinet
import CabinetStorage
import Foundation
import Testing

/// The bytes on disk: BNRPersistence's layout, readable by Tokyo Cabinet's own tools.
@Suite struct FormatTests {
    @Test func recordsAndMetadataHaveTheDocumentedLayout() throws {
        let directory = try TemporaryDirectory()
        let store = try ObjectStore(path: directory.path, options: .init(recordFormat: .plain))
        try store.register(Song.self, Playlist.self)
        let song = Song(); song.title = "Hi"; song.seconds = 0x0102_0304
        let list = Playlist(); list.title = "L"; list.songs = [song, song]
        store.insert(song); store.insert(list)
        try store.save()
        store.close()

        let songs = RawTokyoCabinet.read(directory.path + "/Song")
        #expect(songs.count == 2)
        // Record: version 1, "Hi" (count 2 LE), seconds LE.
        #expect(songs[RawTokyoCabinet.rowKey(2)] == [1, 2, 0, 0, 0, 0x48, 0x69, 4, 3, 2, 1])
        let metadata = try #require(songs[RawTokyoCabinet.rowKey(1)])
        #expect(metadata.count == 14)
        #expect(Array(metadata.prefix(5)) == [2, 0, 0, 0, 1], "last row ID 2, class version 1")
        let lists = RawTokyoCabinet.read(directory.path + "/Playlist")
        #expect(lists[RawTokyoCabinet.rowKey(2)] == [1, 1, 0, 0, 0, 0x4C, 2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0])
        let songClassID = metadata[5]
        let listClassID = try #require(lists[RawTokyoCabinet.rowKey(1)])[5]
        #expect(songClassID != listClassID)
        #expect(Set([songClassID, listClassID]) == [0, 1], "class IDs handed out from 0")
    }

    @Test func tchmgrReadsTheClassFilesAndAgreesWithTheStore() throws {
        let directory = try TemporaryDirectory()
        let store = try ObjectStore(path: directory.path, options: .init(recordFormat: .plain))
        try store.register(Song.self)
        for i in 0..<25 { let s = Song(); s.title = "t\(i)"; s.seconds = UInt32(i); store.insert(s) }
        try store.save()
        // While the store is open, Tokyo Cabinet's lock keeps other writers and readers out.
        let locked = try run("/usr/bin/tchmgr", ["inform", "-nb", directory.path + "/Song"])
        #expect(locked.status != 0)
        store.close()

        let inform = try run("/usr/bin/tchmgr", ["inform", directory.path + "/Song"])
        #expect(inform.status == 0)
        #expect(inform.output.contains("record number: 26"), "25 songs and the metadata row")
        let list = try run("/usr/bin/tchmgr", ["list", "-pv", "-px", directory.path + "/Song"])
        #expect(list.status == 0)
        let lines = list.output.split(separator: "\n")
        #expect(lines.count == 26)
        // Row 7 holds song 5: version 01, "t5", seconds 5.
        #expect(lines.contains("07 00 00 00\t01 02 00 00 00 74 35 05 00 00 00"))
    }

    @Test func aBNRPersistenceStoreOpensAndKeepsItsLayout() throws {
        let directory = try TemporaryDirectory()
        // As BNRPersistence wrote it: 6-byte metadata, version byte 0, class IDs from 0 in registration order.
        RawTokyoCabinet.write(directory.path + "/Song", [
            (RawTokyoCabinet.rowKey(1), [3, 0, 0, 0, 0, 0]),
            (RawTokyoCabinet.rowKey(2), [0, 3, 0, 0, 0, 0x4F, 0x6E, 0x65, 10, 0, 0, 0]),
            (RawTokyoCabinet.rowKey(3), [0, 3, 0, 0, 0, 0x54, 0x77, 0x6F, 20, 0, 0, 0]),
        ])
        RawTokyoCabinet.write(directory.path + "/Playlist", [
            (RawTokyoCabinet.rowKey(1), [2, 0, 0, 0, 0, 1]),
            (RawTokyoCabinet.rowKey(2), [0, 4, 0, 0, 0, 0x42, 0x4E, 0x52, 0x21, 2, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0]),
        ])
        RawTokyoCabinet.write(directory.path + "/NamedBuffers", [
            (Array("Favorite".utf8), [1, 0, 0, 0, 3, 0, 0, 0]),
        ])

        let store = try ObjectStore(path: directory.path)
        try store.register(Playlist.self, Song.self)
        let list = try #require(try store.fetchAll(Playlist.self).first)
        #expect(list.title == "BNR!")
        #expect(list.songs.map(\.title) == ["Two", "One"])
        #expect(list.songs.map(\.seconds) == [20, 10])
        var favorite = try #require(try store.namedBuffer(forName: "Favorite"))
        #expect(try favorite.readReferences(to: Song.self).first?.title == "Two")

        let added = Song(); added.title = "Three"
        store.insert(added)
        #expect(added.rowID == 4, "new row IDs continue BNRPersistence's sequence")
        try store.save()
        store.close()

        let songs = RawTokyoCabinet.read(directory.path + "/Song")
        #expect(songs[RawTokyoCabinet.rowKey(1)] == [4, 0, 0, 0, 0, 0], "an old 6-byte metadata row stays 6 bytes")
        #expect(songs[RawTokyoCabinet.rowKey(4)]?.first == 1)
        #expect(songs[RawTokyoCabinet.rowKey(2)] == [0, 3, 0, 0, 0, 0x4F, 0x6E, 0x65, 10, 0, 0, 0], "untouched rows are untouched")
    }

    @Test func aStoreWithoutPerInstanceVersionsReadsAndWritesPlainRecords() throws {
        let directory = try TemporaryDirectory()
        let options = ObjectStore.Options(perInstanceVersioning: false, recordFormat: .plain)
        do {
            let store = try ObjectStore(path: directory.path, options: options)
            try store.register(Song.self)
            let song = Song(); song.title = "v"; song.seconds = 9
            store.insert(song)
            try store.save()
            store.close()
        }
        #expect(RawTokyoCabinet.read(directory.path + "/Song")[RawTokyoCabinet.rowKey(2)] == [1, 0, 0, 0, 0x76, 9, 0, 0, 0])
        let store = try ObjectStore(path: directory.path, options: options)
        try store.register(Song.self)
        #expect(try store.fetchAll(Song.self).first?.title == "v")
        store.close()
    }

    /// The marker decides how every record is read: an open reads it once, for
    /// a new store and for one that has it, and the answer is the one it holds.
    @Test(arguments: BackendKind.allCases)
    func anOpenReadsTheFormatMarkerOnce(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let (created, counting) = try fixture.openCounting()
        #expect(counting.markerReads == 1, "a new store")
        #expect(created.recordFormat == .checksummed)
        created.close()
        let (reopened, again) = try fixture.openCounting()
        defer { reopened.close() }
        #expect(again.markerReads == 1, "a store with its marker")
        #expect(reopened.recordFormat == .checksummed)
    }

    @Test func newClassesGetIDsThatNoOtherFileInTheStoreUses() throws {
        let directory = try TemporaryDirectory()
        do {
            let store = try ObjectStore(path: directory.path)
            try store.register(Song.self, Playlist.self)   // IDs 0 and 1
            store.close()
        }
        let store = try ObjectStore(path: directory.path)
        try store.register(Node.self)                      // Song and Playlist are not registered now
        store.close()
        let nodeID = try #require(RawTokyoCabinet.read(directory.path + "/Node")[RawTokyoCabinet.rowKey(1)])[5]
        #expect(nodeID == 2)
    }

    @Test func checksummedRecordsAreThePlainBytesFollowedByTheirCRC32() throws {
        let directory = try TemporaryDirectory()
        let store = try ObjectStore(path: directory.path)
        try store.register(Song.self)
        let song = Song(); song.title = "Hi"; song.seconds = 0x0102_0304
        store.insert(song)
        var favorites = DataBuffer(); favorites.writeUInt32(7)
        try store.setNamedBuffer(favorites, forName: "F")
        try store.save()
        store.close()
        let plain: [UInt8] = [1, 2, 0, 0, 0, 0x48, 0x69, 4, 3, 2, 1]
        let crc = plain.withUnsafeBytes { CRC32.checksum($0) }
        let expected = plain + withUnsafeBytes(of: crc.littleEndian) { Array($0) }
        #expect(RawTokyoCabinet.read(directory.path + "/Song")[RawTokyoCabinet.rowKey(2)] == expected)
        // The metadata row is protected too: its 14 bytes, then their CRC-32.
        let metadata = try #require(RawTokyoCabinet.read(directory.path + "/Song")[RawTokyoCabinet.rowKey(1)])
        #expect(metadata.count == 18)
        let metadataCRC = metadata.prefix(14).withUnsafeBytes { CRC32.checksum($0) }
        #expect(Array(metadata.suffix(4)) == withUnsafeBytes(of: metadataCRC.littleEndian) { Array($0) })
        let buffer: [UInt8] = [7, 0, 0, 0]
        let bufferCRC = buffer.withUnsafeBytes { CRC32.checksum($0) }
        #expect(RawTokyoCabinet.read(directory.path + "/NamedBuffers")[Array("F".utf8)] == buffer + withUnsafeBytes(of: bufferCRC.littleEndian) { Array($0) })
        let marker = try String(contentsOfFile: directory.path + "/" + TokyoCabinetBackend.formatFileName, encoding: .utf8)
        #expect(marker == "cabinet-record-format checksummed\n")
        #expect(Array("123456789".utf8).withUnsafeBytes { CRC32.checksum($0) } == 0xCBF4_3926, "the standard CRC-32 check value")
    }

    @Test func theTableDrivenCRC32MatchesTheBitwiseDefinitionAtEveryLength() {
        // The fast path takes 8 bytes, then 4, then single bytes: every length
        // from 0 to 40 and every start offset mixes them differently.
        func bitwise(_ bytes: ArraySlice<UInt8>) -> UInt32 {
            var crc: UInt32 = 0xFFFF_FFFF
            for byte in bytes {
                crc ^= UInt32(byte)
                for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
            }
            return ~crc
        }
        let bytes = (0..<48).map { UInt8(truncatingIfNeeded: $0 &* 151 &+ 7) }
        for start in 0..<4 {
            for length in 0...40 {
                let slice = bytes[start..<(start + length)]
                #expect(slice.withUnsafeBytes { CRC32.checksum($0) } == bitwise(slice), "\(length) bytes from offset \(start)")
            }
        }
    }
}
