@testable import Cabinet
@testable import CabinetStorage
import Foundation
import Testing

/// Files damaged at known places, read the ways an app and `cabinet` read them:
/// each read ends in a `CabinetError` naming the damaged file (never a dead
/// process: Tokyo Cabinet trusts the sizes it reads, so nothing Cabinet's own
/// bounds-checked readers refused may reach it), and never in an object under a
/// row it does not have.
@Suite struct DamagedFileTests {
    /// Whether `error` names the file at `path` (its location or its message).
    private func names(_ error: CabinetError, _ path: String) -> Bool {
        error.location?.file == path || "\(error)".contains(path)
    }

    /// A store of three songs whose record of `row` claims a key and a value of 1.9 GB each.
    private func songStoreWithHugeSizes(inRow row: UInt32) throws -> (TemporaryDirectory, String, HashFileRecord) {
        let store = try makeSongStore(songs: 3)
        let file = store.path + "/Song"
        let record = try #require(try hashFileRecords(file).first { $0.key == rowKeyBytes(row) })
        try overwrite(file, at: record.sizes, with: twoHugeSizes)
        return (store, file, record)
    }

    @Test func aRecordWhoseSizesClaimGigabytesIsAnErrorNamingTheFileAndOffset() throws {
        let (store, file, record) = try songStoreWithHugeSizes(inRow: 3)
        let opened = try ObjectStore(path: store.path)
        defer { opened.close() }
        try opened.register(Song.self, Playlist.self)
        let error = expectCabinetError({ _ = try opened.fetch(Song.self, rowID: 3) }) {
            names($0, file) && "\($0)".contains("offset \(record.offset)")
        }
        #expect(error != nil, "the lookup names the file and the record's offset")
        #expect(try opened.fetch(Song.self, rowID: 2)?.title == "s0", "the other records read")
        #expect(expectCabinetError({ _ = try opened.fetchAll(Song.self) }) { names($0, file) } != nil)
    }

    @Test func aWriteOrDeleteWhoseWalkMeetsADamagedRecordIsAnErrorNotTheEndOfTheProcess() throws {
        let (store, file, record) = try songStoreWithHugeSizes(inRow: 3)
        let backend = try TokyoCabinetBackend(directory: store.path)
        defer { backend.close() }
        let table = try backend.openTable(named: "Song")
        let write = expectCabinetError({ try table.transaction { try [UInt8](repeating: 1, count: 9).withUnsafeBytes { try table.setValue($0, forRow: 3) } } }) {
            names($0, file) && "\($0)".contains("offset \(record.offset)")
        }
        #expect(write != nil)
        let delete = expectCabinetError({ try table.transaction { _ = try rowKeyBytes(3).withUnsafeBytes { try table.removeValue(forKey: $0) } } }) { names($0, file) }
        #expect(delete != nil)
        try table.transaction { try [UInt8](repeating: 2, count: 9).withUnsafeBytes { try table.setValue($0, forRow: 99) } }
        #expect(try table.withValue(forRow: 99) { Array($0) } == [UInt8](repeating: 2, count: 9), "writes elsewhere go on")
    }

    @Test func aRecordBeyondTheMapIsReadWithTheSameChecks() throws {
        let directory = try TemporaryDirectory()
        var options = TokyoCabinetBackend.Options()
        options.mappedSize = 1   // the header and buckets only: every record is read with pread
        let backend = try TokyoCabinetBackend(directory: directory.path, options: options)
        let table = try #require(try backend.openTable(named: "Rows") as? TokyoCabinetTable)
        try table.transaction {
            for row in UInt32(1)...200 {
                try [UInt8](repeating: UInt8(row), count: Int(row)).withUnsafeBytes { try table.setValue($0, forRow: row) }
            }
        }
        for row in UInt32(1)...200 {
            #expect(try table.withValue(forRow: row) { Array($0) } == [UInt8](repeating: UInt8(row), count: Int(row)))
        }
        #expect(try table.withValue(forRow: 201) { _ in true } == nil)
        backend.close()
        let file = directory.path + "/Rows"
        let record = try #require(try hashFileRecords(file).first { $0.key == rowKeyBytes(77) })
        try overwrite(file, at: record.sizes, with: twoHugeSizes)
        let reopened = try TokyoCabinetBackend(directory: directory.path, options: options)
        defer { reopened.close() }
        let damaged = try reopened.openTable(named: "Rows")
        let error = expectCabinetError({ _ = try damaged.withValue(forRow: 77) { _ in true } }) {
            names($0, file) && "\($0)".contains("offset \(record.offset)")
        }
        #expect(error != nil)
        #expect(try damaged.withValue(forRow: 76) { $0.count } == 76)
    }

    @Test func aDamagedIndexPageIsAnErrorNamingTheIndexFile() throws {
        let directory = try TemporaryDirectory()
        let store = try ObjectStore(path: directory.path)
        try store.register(Track.self)
        for i in 0..<400 { store.insert(Track("title \(i) word\(i % 7)", by: "artist \(i % 13)", seconds: UInt32(i))) }
        try store.save()
        store.close()
        let file = directory.path + "/Track.index"
        // The leaf that ends the tree (next link 0) holds the highest keys: not the catalog, which register reads.
        let leaves = try hashFileRecords(file).filter { $0.key.first != UInt8(ascii: "#") }
        let last = try #require(leaves.first { leaf in
            leaf.value.withUnsafeBytes { page in
                withUnsafeTemporaryAllocation(of: TokyoCabinetTreeScan.Entry.self, capacity: page.count) {
                    TokyoCabinetTreeScan.parseLeaf(page, into: $0)?.next == 0
                }
            }
        })
        #expect(leaves.count > 2, "several leaves")
        try overwrite(file, at: last.sizes, with: twoHugeSizes)
        let opened = try ObjectStore(path: directory.path)
        defer { opened.close() }
        try opened.register(Track.self)
        var errors = 0
        let reads: [() throws -> Void] = [
            { _ = try opened.search(Track.self, matching: "word3") },
            { _ = try opened.fetch(Track.self, where: \.seconds, in: 0...1_000) },
            { _ = try opened.fetch(Track.self, where: \.seconds, in: 0...1_000, descending: true) },
            { _ = try opened.count(Track.self, where: \.favourite, equals: false) },
        ]
        for read in reads {
            do { try read() } catch let error as CabinetError {
                #expect(names(error, file), "\(error)")
                errors += 1
            }
        }
        #expect(errors > 0, "the damaged leaf was read, and refused")
        #expect(expectCabinetError({ try opened.compact() }) { names($0, file) } != nil, "nor handed to Tokyo Cabinet's optimize")
    }

    @Test func anIndexEntryDamagedToNameAnotherRowIsAnErrorNotAMatch() throws {
        let directory = try TemporaryDirectory()
        let store = try ObjectStore(path: directory.path)
        try store.register(Track.self)
        for i in 0..<40 { store.insert(Track("title \(i)", by: "artist \(i % 4)", seconds: UInt32(i))) }   // rows 2…41
        try store.save()
        store.close()
        // The last entry of "artist 2" (row 40) made to name row 41 (artist 3's): still in key order.
        let file = directory.path + "/Track.index"
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
        let entry: [UInt8] = [2] + Array("artist 2".utf8) + [0, 0] + withUnsafeBytes(of: UInt32(40).bigEndian, Array.init)
        let at = try #require(bytes.indices.first { bytes[$0..<min($0 + entry.count, bytes.count)].elementsEqual(entry) })
        try overwrite(file, at: at + entry.count - 4, with: withUnsafeBytes(of: UInt32(41).bigEndian, Array.init))
        let opened = try ObjectStore(path: directory.path)
        defer { opened.close() }
        try opened.register(Track.self)
        let error = expectCabinetError({ _ = try opened.fetch(Track.self, where: \.artist, equals: "artist 2") }) {
            $0.code == .malformedRecord && $0.location?.rowID == 41 && $0.reason?.contains("reindex") == true
        }
        #expect(error != nil, "row 41 holds artist 3")
        #expect(try opened.fetch(Track.self, where: \.artist, equals: "artist 1").count == 10, "the other values read")
    }

    @Test func aRowKeyDamagedPastTheLastRowIDIsAnErrorNotAnObjectUnderAnotherRow() throws {
        let store = try makeSongStore(songs: 3)
        let file = store.path + "/Song"
        let record = try #require(try hashFileRecords(file).first { $0.key == rowKeyBytes(3) })
        try overwrite(file, at: record.keyStart, with: [0xFF, 0xFF, 0xFF, 0xFF])
        let opened = try ObjectStore(path: store.path)
        defer { opened.close() }
        try opened.register(Song.self, Playlist.self)
        // Tokyo Cabinet's hash byte of the key catches it first; a key whose byte
        // happens to match is caught as a row past the last row ID.
        let caught: (CabinetError) -> Bool = {
            names($0, file) && (($0.code == .malformedRecord && $0.location?.rowID == .max) || "\($0)".contains("its key is damaged"))
        }
        #expect(expectCabinetError({ _ = try opened.fetchAll(Song.self) }, where: caught) != nil)
        #expect(expectCabinetError({ try opened.enumerate(Song.self) { _, _ in } }, where: caught) != nil)
    }

    /// A key damaged onto a free row below the last row ID: the checksum covers
    /// the value only, so Tokyo Cabinet's hash byte of the key is what catches it.
    @Test func aRowKeyDamagedOntoAFreeRowIsAnErrorNotAnObjectUnderThatRow() throws {
        let store = try makeSongStore(songs: 3)      // rows 2, 3, 4
        do {
            let opened = try ObjectStore(path: store.path)
            try opened.register(Song.self, Playlist.self)
            let list = try #require(try opened.fetchAll(Playlist.self).first)
            let middle = try #require(try opened.fetch(Song.self, rowID: 3))
            list.songs.removeAll { $0 === middle }
            opened.delete(middle)                    // row 3 is free now
            try opened.save()
            opened.close()
        }
        let file = store.path + "/Song"
        let record = try #require(try hashFileRecords(file).first { $0.key == rowKeyBytes(4) })
        try overwrite(file, at: record.keyStart, with: rowKeyBytes(3))
        let opened = try ObjectStore(path: store.path)
        defer { opened.close() }
        try opened.register(Song.self, Playlist.self)
        let error = expectCabinetError({ _ = try opened.fetchAll(Song.self) }) {
            names($0, file) && "\($0)".contains("its key is damaged")
        }
        #expect(error != nil, "the song of row 4 was handed out as row 3")
        #expect(expectCabinetError({ try opened.enumerate(Song.self) { _, _ in } }) { names($0, file) } != nil)
    }

    @Test func aHeaderCountingTwoToTheSixtyThirdRecordsIsReportedNotATrap() throws {
        let store = try makeSongStore(songs: 3)
        let file = store.path + "/Song"
        let original = try Data(contentsOf: URL(fileURLWithPath: file))
        let header = try #require(original.withUnsafeBytes { head in
            TokyoCabinetHashHeader(head: head, order: .bigEndian, fileSize: head.count)
                ?? TokyoCabinetHashHeader(head: head, order: .littleEndian, fileSize: head.count)
        })
        let huge = UInt64(1) << 63 | 5
        let bytes = header.byteOrder == .bigEndian ? withUnsafeBytes(of: huge.bigEndian, Array.init) : withUnsafeBytes(of: huge.littleEndian, Array.init)
        try overwrite(file, at: TokyoCabinetHashHeader.recordCountOffset, with: bytes)
        let opened = try ObjectStore(path: store.path)
        try opened.register(Song.self, Playlist.self)
        #expect(try opened.fetchAll(Song.self).count == 3, "no reservation of the header's count")
        #expect(try opened.count(of: Song.self) < original.count, "at most what the file can hold")
        opened.close()
        #expect(try StoreInfo(path: store.path).tables.first { $0.name == "Song" } != nil)
        let problems = try StoreVerifier.verify(path: store.path)
        #expect(problems.contains { $0.location.file == file && $0.reason.contains("holds 4") }, "\(problems)")
    }

    @Test func aNamedBufferItsHashIndexLostIsAnErrorNotNil() throws {
        let store = try makeSongStore(songs: 3)
        let file = store.path + "/NamedBuffers"
        try zeroBucket(of: Array("Favorite".utf8), in: file)
        let opened = try ObjectStore(path: store.path)
        defer { opened.close() }
        try opened.register(Song.self, Playlist.self)
        let error = expectCabinetError({ _ = try opened.namedBuffer(forName: "Favorite") }) {
            $0.code == .malformedRecord && names($0, file) && $0.reason?.contains("hash index") == true
        }
        #expect(error != nil)
        #expect(try opened.namedBuffer(forName: "Absent") == nil, "a name that is not there is still nil")
    }

    @Test func aCompressedHashFileIsRefusedAtOpen() throws {
        let store = try makeSongStore(songs: 1)
        // Tokyo Cabinet's deflate option (HDBTDEFLATE) set in the header's options byte.
        let file = store.path + "/Song"
        let options = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))[TokyoCabinetHashHeader.optionsOffset]
        try overwrite(file, at: TokyoCabinetHashHeader.optionsOffset, with: [options | 0b10])
        let error = expectCabinetError({
            let opened = try ObjectStore(path: store.path)
            defer { opened.close() }
            try opened.register(Song.self, Playlist.self)
        }) { $0.code == .notADatabase && names($0, file) && $0.reason?.contains("compressed") == true }
        #expect(error != nil)
    }
}
