@testable import Cabinet
@testable import CabinetStorage
import CTokyoCabinet
import Foundation
import Testing

/// Tokyo Cabinet hash files read without Tokyo Cabinet in either byte order
/// (`TokyoCabinetHashFileReader`), rewritten in the other (`TokyoCabinetByteSwap`),
/// and imported from damaged or odd sources: every record or a report naming it,
/// never a trap.
@Suite struct ForeignFileTests {
    typealias Records = [[UInt8]: [UInt8]]

    /// A hash file written by this machine's Tokyo Cabinet with the given tuning:
    /// records of many sizes, some removed (free blocks), some grown (moved).
    static func makeFile(_ path: String, alignmentPower: Int8, options: UInt8) -> Records {
        let hdb = tchdbnew()!
        defer { tchdbdel(hdb) }
        _ = tchdbtune(hdb, 61, alignmentPower, 4, options)
        precondition(tchdbopen(hdb, path, Int32(HDBOWRITER | HDBOCREAT)))
        for number in 0..<600 {
            let key = withUnsafeBytes(of: UInt32(number).littleEndian, Array.init)
            let value = [UInt8](repeating: UInt8(number % 251), count: (number * 37) % 700)
            precondition(tchdbput(hdb, key, Int32(key.count), value, Int32(value.count)))
        }
        for number in stride(from: 0, to: 600, by: 7) {
            let key = withUnsafeBytes(of: UInt32(number).littleEndian, Array.init)
            precondition(tchdbout(hdb, key, Int32(key.count)))
        }
        for number in stride(from: 1, to: 600, by: 11) {
            let key = withUnsafeBytes(of: UInt32(number).littleEndian, Array.init)
            let value = [UInt8](repeating: 0xAB, count: 900)
            precondition(tchdbput(hdb, key, Int32(key.count), value, Int32(value.count)))
        }
        precondition(tchdbclose(hdb))
        return RawTokyoCabinet.read(path)
    }

    /// Every record the reader finds in the file at `path`, and what it reports.
    static func read(_ path: String) throws -> (records: Records, damage: [TokyoCabinetHashFileReader.Damage], order: TokyoCabinetByteOrder) {
        let reader = try TokyoCabinetHashFileReader(path: path)
        var records: Records = [:]
        var damage: [TokyoCabinetHashFileReader.Damage] = []
        let survey = reader.survey { damage.append($0) }
        try reader.forEachRecord(in: survey) { records[Array($0)] = Array($1) }
        return (records, damage, reader.header.byteOrder)
    }

    /// Alignment powers and options (`HDBTLARGE`: 8-byte offsets) to write with.
    static let tunings: [Tuning] = [.init(alignmentPower: 0, options: 0), .init(alignmentPower: 2, options: 0),
                                    .init(alignmentPower: 4, options: 0), .init(alignmentPower: 4, options: UInt8(HDBTLARGE)),
                                    .init(alignmentPower: 8, options: UInt8(HDBTLARGE))]
    struct Tuning: Sendable, CustomStringConvertible {
        var alignmentPower: Int8
        var options: UInt8
        var description: String { "alignment power \(alignmentPower), options \(options)" }
    }

    @Test(arguments: tunings)
    func readsBothByteOrdersAsTokyoCabinetWroteThem(tuning: Tuning) throws {
        let directory = try TemporaryDirectory()
        let native = directory.path + "/native", swapped = directory.path + "/swapped", back = directory.path + "/back"
        let written = Self.makeFile(native, alignmentPower: tuning.alignmentPower, options: tuning.options)
        #expect(written.count > 500)
        let nativeOrder = try #require(TokyoCabinetByteOrder.native)
        let other: TokyoCabinetByteOrder = nativeOrder == .bigEndian ? .littleEndian : .bigEndian

        let first = try Self.read(native)
        #expect(first.records == written && first.damage.isEmpty && first.order == nativeOrder)

        try TokyoCabinetByteSwap.convertFile(native, to: swapped, as: other)
        let second = try Self.read(swapped)
        #expect(second.records == written && second.damage.isEmpty && second.order == other)
        // This machine's Tokyo Cabinet refuses the swapped file, and the error says why.
        let hdb = tchdbnew()!
        defer { tchdbdel(hdb) }
        #expect(!tchdbopen(hdb, swapped, Int32(HDBOREADER)))
        #expect(TokyoCabinetTable.openError(path: swapped, code: tchdbecode(hdb)).code == .foreignByteOrder)
        // Swapped back, it is a file Tokyo Cabinet reads again, with every record.
        try TokyoCabinetByteSwap.convertFile(swapped, to: back, as: nativeOrder)
        #expect(RawTokyoCabinet.read(back) == written)
    }

    /// The offset of the fixture's record whose key and value start with `bytes`.
    static func offset(of bytes: [UInt8], in file: [UInt8]) -> Int? {
        guard bytes.count <= file.count else { return nil }
        for start in 0...(file.count - bytes.count) where file[start] == bytes[0] && Array(file[start..<(start + bytes.count)]) == bytes {
            return start
        }
        return nil
    }

    @Test func damagedRecordsAreReportedOneByOneAndTheRestImported() throws {
        let directory = try TemporaryDirectory()
        let (store, _) = try MacStoreTests.unpackFixture(into: directory)
        let songPath = store + "/Song"
        var file = [UInt8](try Data(contentsOf: URL(fileURLWithPath: songPath)))
        // Song row 2 ("Track 1", 7 s): key size 4, value size 16, then key and value;
        // its record starts 12 bytes before (magic, hash, two 4-byte offsets, padding size).
        let track1 = try #require(Self.offset(of: [4, 16, 2, 0, 0, 0, 0, 7, 0, 0, 0] + Array("Track 1".utf8), in: file)) - 12
        let track2 = try #require(Self.offset(of: [4, 16, 3, 0, 0, 0, 0, 7, 0, 0, 0] + Array("Track 2".utf8), in: file)) - 12
        #expect(file[track1] == 0xC8 && file[track2] == 0xC8)
        file[track1] = 0x00                 // no longer a block at all: the walk resumes from the index
        file[track2 + 14] = 0x7F            // its key's first byte: the hash byte no longer matches
        try Data(file).write(to: URL(fileURLWithPath: songPath))

        let report = try ObjectStore.importStore(from: store, to: directory.path + "/imported")
        let songProblems = report.problems.filter { $0.location.className == "Song" && $0.reason.hasSuffix("not imported") }
        #expect(songProblems.count == 2, "\(report.problems)")
        #expect(songProblems.contains { $0.reason.contains("offset \(track1)") && $0.location.rowID == nil })
        #expect(songProblems.contains { $0.reason.contains("offset \(track2)") && $0.reason.contains("hash") })
        #expect(report.tables.first { $0.name == "Song" }?.records == 1003)
        let imported = try ObjectStore(path: directory.path + "/imported", readOnly: true)
        defer { imported.close() }
        try imported.register(Song.self, Playlist.self)
        #expect(try imported.fetch(Song.self, rowID: 2) == nil && imported.fetch(Song.self, rowID: 3) == nil)
        #expect(try imported.fetch(Song.self, rowID: 4)?.title == "Track 3")
        #expect(try imported.fetchAll(Song.self).count == 1002)
    }

    @Test func aFileCutShortKeepsTheRecordsBeforeTheCut() throws {
        let directory = try TemporaryDirectory()
        let (store, _) = try MacStoreTests.unpackFixture(into: directory)
        #expect(truncate(store + "/Song", 560_000) == 0)
        let report = try ObjectStore.importStore(from: store, to: directory.path + "/imported")
        #expect(report.problems.contains { $0.location.className == "Song" && $0.reason.contains("cut short") }, "\(report.problems)")
        let songs = try #require(report.tables.first { $0.name == "Song" }).records
        #expect(songs > 100 && songs < 1005, "\(songs)")
        #expect(report.tables.first { $0.name == "Playlist" }?.records == 21)
    }

    @Test func aFileWithADamagedHeaderIsReportedAndTheOthersImported() throws {
        let directory = try TemporaryDirectory()
        let (store, _) = try MacStoreTests.unpackFixture(into: directory)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: store + "/Playlist"))
        try handle.seek(toOffset: 64)                   // the first record's offset, now past the end in both orders
        try handle.write(contentsOf: [UInt8](repeating: 0xFF, count: 8))
        try handle.close()
        let report = try ObjectStore.importStore(from: store, to: directory.path + "/imported")
        #expect(report.tables.map(\.name) == ["NamedBuffers", "Song"])
        #expect(report.problems.contains { $0.location.className == "Playlist" && $0.reason.contains("whole file") }, "\(report.problems)")
    }

    /// Patches `bytes` into the fixture's `name` at `offset`.
    static func patch(_ store: String, _ name: String, at offset: UInt64, _ bytes: [UInt8]) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: store + "/" + name))
        try handle.seek(toOffset: offset)
        try handle.write(contentsOf: bytes)
        try handle.close()
    }

    /// The fixture's Song record of row 757 (key f5020000): found by its key and value start.
    static func row757(in store: String) throws -> Int {
        let file = [UInt8](try Data(contentsOf: URL(fileURLWithPath: store + "/Song")))
        let offset = try #require(Self.offset(of: [4, 18, 0xF5, 0x02, 0, 0, 0, 9, 0, 0, 0] + Array("Track 756".utf8), in: file)) - 12
        #expect(file[offset] == 0xC8)
        return offset
    }

    /// A damaged size in a record's header (its padding or its value) once hid the
    /// records it jumped over, or imported a value holding its neighbours; the
    /// file's hash index now finds them, and the record with the bad size is named.
    @Test(arguments: [(11, UInt8(1)), (13, UInt8(114)), (13, UInt8(60))])
    func aDamagedSizeLosesOnlyItsOwnRecord(field: Int, value: UInt8) throws {
        let directory = try TemporaryDirectory()
        let (store, _) = try MacStoreTests.unpackFixture(into: directory)
        let record = try Self.row757(in: store)
        try Self.patch(store, "Song", at: UInt64(record + field), [value])
        let report = try ObjectStore.importStore(from: store, to: directory.path + "/imported")
        let lost = report.problems.filter { $0.reason.hasSuffix("not imported") }
        #expect(lost.count == 1 && lost[0].location.rowID == 757, "\(report.problems)")
        #expect(report.tables.first { $0.name == "Song" }?.records == 1004)
        let imported = try ObjectStore(path: directory.path + "/imported", readOnly: true)
        defer { imported.close() }
        try imported.register(Song.self, Playlist.self)
        #expect(try imported.fetch(Song.self, rowID: 757) == nil)
        #expect(try imported.fetchAll(Song.self).count == 1003)
    }

    /// A flipped bit in the header's record count once made the import reserve
    /// buckets for billions of records (gigabytes of zeros on the disk).
    @Test func aDamagedRecordCountReservesForTheRecordsFound() throws {
        let directory = try TemporaryDirectory()
        let (store, _) = try MacStoreTests.unpackFixture(into: directory)
        try Self.patch(store, "Song", at: 52, [0x01])           // the count's fifth byte: 2^32 + 1005
        let report = try ObjectStore.importStore(from: store, to: directory.path + "/imported")
        #expect(report.tables.first { $0.name == "Song" }?.records == 1005)
        #expect(report.problems.contains { $0.reason.contains("header counts 4294968301") }, "\(report.problems)")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: directory.path + "/imported/Song")[.size] as? Int)
        #expect(size < 4_000_000, "\(size) bytes for 1,005 records")
    }

    /// A class file whose type byte is damaged is a problem, not an index file left out.
    @Test func aClassFileWithADamagedTypeIsReportedNotSkipped() throws {
        let directory = try TemporaryDirectory()
        let (store, _) = try MacStoreTests.unpackFixture(into: directory)
        try Self.patch(store, "Song", at: 32, [0x01])
        let report = try ObjectStore.importStore(from: store, to: directory.path + "/imported")
        #expect(report.skipped.isEmpty)
        #expect(report.problems.contains { $0.location.className == "Song" && $0.reason.contains("whole file") }, "\(report.problems)")
    }

    /// A copy of a store its app had open: Tokyo Cabinet grows the file in zero-filled
    /// steps and sets the open flag. The zeros past the stated end are no damage.
    @Test func zerosPastTheEndOfAnOpenFileAreNoDamage() throws {
        let directory = try TemporaryDirectory()
        let (store, _) = try MacStoreTests.unpackFixture(into: directory)
        try Self.patch(store, "Song", at: 33, [0x01])
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: store + "/Song"))
        try handle.seekToEnd()
        try handle.write(contentsOf: [UInt8](repeating: 0, count: 32_768))
        try handle.close()
        let report = try ObjectStore.importStore(from: store, to: directory.path + "/imported")
        #expect(report.problems.isEmpty, "\(report.problems)")
        #expect(report.tables.first { $0.name == "Song" }?.records == 1005)
    }

    /// A file whose indexed records are damaged by the thousand: its reports stop at the limit,
    /// and one more line counts the rest.
    @Test func damageReportsStopAtTheLimit() throws {
        let directory = try TemporaryDirectory()
        let buckets = 3_000
        let first = 256 + buckets * 4
        var file = [UInt8](repeating: 0, count: first + buckets * 16)
        file.replaceSubrange(0..<TokyoCabinetDirectory.magic.count, with: TokyoCabinetDirectory.magic)
        file[34] = 4
        for (offset, value) in [(40, buckets), (48, buckets), (56, file.count), (64, first)] {
            withUnsafeBytes(of: UInt64(value).littleEndian) { file.replaceSubrange(offset..<(offset + 8), with: $0) }
        }
        for bucket in 0..<buckets {
            withUnsafeBytes(of: UInt32((first + bucket * 16) >> 4).littleEndian) { file.replaceSubrange((256 + bucket * 4)..<(260 + bucket * 4), with: $0) }
            // A record (magic, hash byte, two chain offsets, padding 2, key 1 byte, value 0)
            // whose hash byte is not its key's, but for about one in 256.
            file.replaceSubrange((first + bucket * 16)..<(first + bucket * 16 + 16),
                                 with: [0xC8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 0, UInt8(bucket % 256), 0])
        }
        let path = directory.path + "/Hostile"
        try Data(file).write(to: URL(fileURLWithPath: path))
        let reader = try TokyoCabinetHashFileReader(path: path)
        var damage: [TokyoCabinetHashFileReader.Damage] = []
        let survey = reader.survey { damage.append($0) }
        #expect(survey.count < 50, "\(survey.count)")
        #expect(damage.count == TokyoCabinetHashFileReader.damageReportLimit + 1)
        #expect(damage.last?.reason.contains("more damaged places") == true, "\(String(describing: damage.last))")
    }

    @Test func aFreeBlockTooSmallToHoldItsOwnSizeIsDamage() throws {
        let bytes: [UInt8] = [0xB0, 2, 0, 0, 0, 0, 0, 0]
        bytes.withUnsafeBytes { file in
            let reader = BlockReader(file: file, bigEndian: false, wideOffsets: false, path: "tiny")
            #expect(throws: CabinetError.self) { try reader.block(at: 0) }
        }
    }

    @Test func sourcesThatAreNotWholeStoresAreRefusedBeforeAnythingIsWritten() throws {
        let directory = try TemporaryDirectory()
        let (store, _) = try MacStoreTests.unpackFixture(into: directory)
        let target = directory.path + "/imported"
        func refusal(adding name: String, contents: [UInt8]) throws -> CabinetError? {
            let path = store + "/" + name
            try Data(contents).write(to: URL(fileURLWithPath: path))
            defer { try? FileManager.default.removeItem(atPath: path) }
            let error = #expect(throws: CabinetError.self) { try ObjectStore.importStore(from: store, to: target) }
            #expect(!FileManager.default.fileExists(atPath: target), "a refused import wrote \(target)")
            return error
        }
        let log = try refusal(adding: "Song.wal", contents: [UInt8](repeating: 1, count: 300))
        #expect(log?.code == .unsupportedFormat && log?.reason?.contains("transaction") == true, "\(String(describing: log))")
        let journal = try refusal(adding: ".cabinet-journal", contents: [1, 2, 3])
        #expect(journal?.code == .unsupportedFormat && journal?.reason?.contains("did not finish") == true)
        let stranger = try refusal(adding: "notes.txt", contents: Array("hello".utf8))
        #expect(stranger?.code == .unsupportedFormat && stranger?.reason?.contains("notes.txt") == true)

        let empty = directory.path + "/empty"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: false)
        #expect(throws: CabinetError.self) { try ObjectStore.importStore(from: empty, to: target) }
        #expect(throws: CabinetError.self) { try ObjectStore.importStore(from: directory.path + "/missing", to: target) }

        // A Mac's own leftovers are left out, and say so.
        try Data([0]).write(to: URL(fileURLWithPath: store + "/.DS_Store"))
        try Data([0]).write(to: URL(fileURLWithPath: store + "/._Song"))
        let report = try ObjectStore.importStore(from: store, to: target)
        #expect(report.skipped.count == 2 && report.problems.isEmpty, "\(report.skipped)")
        let again = #expect(throws: CabinetError.self) { try ObjectStore.importStore(from: store, to: target) }
        #expect(again?.code == .cannotAccessDirectory, "an import never writes into a store that is there")
    }

    /// Random damage anywhere in a Mac file: the reader ends in records and
    /// reports, never a trap or a read out of bounds (ASan runs this too).
    @Test func randomDamageNeverTraps() throws {
        let directory = try TemporaryDirectory()
        let (store, _) = try MacStoreTests.unpackFixture(into: directory)
        let original = [UInt8](try Data(contentsOf: URL(fileURLWithPath: store + "/NamedBuffers")))
        var generator = SeededRandom(0xCAB1)
        var damagedRuns = 0
        for _ in 0..<400 {
            var file = original
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                // Mostly inside the records and the buckets that point at them, sometimes the header.
                let position = Int.random(in: 0..<10, using: &generator) == 0 ? Int.random(in: 32..<72, using: &generator)
                                                                             : Int.random(in: 256..<file.count, using: &generator)
                file[position] = UInt8.random(in: 0...255, using: &generator)
            }
            if Bool.random(using: &generator) { file.removeLast(Int.random(in: 0..<300, using: &generator)) }
            try file.withUnsafeBytes { whole in
                guard let header = TokyoCabinetHashHeader(head: whole, fileSize: whole.count) else { return }
                var damage = 0
                let records = try TokyoCabinetHashFileReader.forEachRecord(in: whole, header: header, path: "fuzz",
                                                                           { _, _ in }, damaged: { _ in damage += 1 })
                #expect(records <= 7 + damage)
                if damage > 0 { damagedRuns += 1 }
            }
        }
        #expect(damagedRuns > 50, "the damage reached the records in \(damagedRuns) runs only")
    }

    @Test func theCommandImportsAndNamesWhatItLeftOut() throws {
        let directory = try TemporaryDirectory()
        let (store, _) = try MacStoreTests.unpackFixture(into: directory)
        let good = try run(cabinetToolPath, ["import", store, directory.path + "/imported"])
        #expect(good.status == 0, "\(good.output)")
        #expect(good.output.contains("Song: 1005 records (little-endian in the source)") && good.output.contains("checked against the source"), "\(good.output)")
        let refused = try run(cabinetToolPath, ["info", store])
        #expect(refused.status == 1 && refused.output.contains("cabinet import"), "\(refused.output)")

        #expect(truncate(store + "/Song", 560_000) == 0)
        let damaged = try run(cabinetToolPath, ["import", store, directory.path + "/damaged"])
        #expect(damaged.status == 1 && damaged.output.contains("cut short") && damaged.output.contains("problem"), "\(damaged.output)")

        let exported = try run(cabinetToolPath, ["export", directory.path + "/imported", directory.path + "/for-mac"])
        #expect(exported.status == 0 && exported.output.contains("little-endian"), "\(exported.output)")
        #expect(TokyoCabinetHashHeader.read(path: directory.path + "/for-mac/Song")?.byteOrder == .littleEndian)
    }
}
