import Foundation
import Testing
@testable import Cabinet
@testable import CabinetStorage

/// `WriteBatch`: everything one save changes, committed by a backend all or nothing.
@Suite struct WriteBatchTests {
    private static func key(_ row: UInt32) -> [UInt8] { withUnsafeBytes(of: row.littleEndian, Array.init) }

    private static func contents(_ changes: TableChanges?) -> [String] {
        var seen: [String] = []
        changes?.forEachChange { key, value, isNew in
            seen.append("\(Array(key)) \(value.map { "\(Array($0))" } ?? "removed")\(isNew ? " new" : "")")
            return true
        }
        return seen
    }

    @Test func anIndexedTableKeepsEachKeyOnceWithItsLastChangeInItsFirstPlace() {
        var changes = TableChanges()
        let replaced = [changes.set(Self.key(2), to: [1]), changes.set(Self.key(3), to: [2]), changes.set(Self.key(2), to: nil),
                        changes.set(Array("a long key".utf8), to: [3]), changes.set(Array("a long key".utf8), to: [4])]
        #expect(replaced == [false, false, true, false, true])
        #expect(Self.contents(changes) == ["[2, 0, 0, 0] removed", "[3, 0, 0, 0] [2]", "\(Array("a long key".utf8)) [4]"])
        #expect(changes.count == 3)
        let found: [UInt8]?? = Self.key(3).withUnsafeBytes { key in changes.withChange(of: key) { $0.map(Array.init) } }
        #expect(found == .some([2]))
        #expect(Self.key(9).withUnsafeBytes { changes.contains($0) } == false)
    }

    /// Its key index starts small and grows as keys come: every size on the way
    /// finds each key's last change, as a dictionary of the same changes does.
    @Test func anIndexedTableFindsEveryKeyAsItGrowsFromEmpty() {
        var generator = SystemRandomNumberGenerator()
        var changes = TableChanges(), model: [[UInt8]: [UInt8]?] = [:], order: [[UInt8]] = []
        for step in 0..<5_000 {
            // Row keys mostly, some of 0 to 7 bytes, some long; about one in six seen before.
            let length = [4, 4, 4, 0, 1, 3, 7, 9][Int.random(in: 0..<8, using: &generator)]
            let key = step % 6 == 5 && !order.isEmpty ? order[Int.random(in: 0..<order.count, using: &generator)]
                : (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let value: [UInt8]? = step % 7 == 0 ? nil : [UInt8(truncatingIfNeeded: step)]
            let replaced = changes.set(key, to: value)
            #expect(replaced == (model[key] != nil), "step \(step)")
            if model[key] == nil { order.append(key) }
            model[key] = .some(value)
            if step.nonzeroBitCount == 1 || step == 4_999 {
                #expect(changes.count == model.count, "step \(step)")
                for (known, last) in model {
                    let found: [UInt8]?? = known.withUnsafeBytes { key in changes.withChange(of: key) { $0.map(Array.init) } }
                    #expect(found == .some(last), "step \(step), key \(known)")
                }
            }
        }
        #expect(changes.keys == order, "each key once, in the order first changed")
    }

    @Test func anUnindexedTableIsALogWhoseLookupsFindTheLastChange() {
        var changes = TableChanges(indexed: false)
        changes.set(Self.key(2), to: [1])
        changes.set(Self.key(2), to: [5])
        #expect(changes.count == 2, "a log keeps both")
        let found: [UInt8]?? = Self.key(2).withUnsafeBytes { key in changes.withChange(of: key) { $0.map(Array.init) } }
        #expect(found == .some([5]))
        #expect(Self.key(7).withUnsafeBytes { changes.contains($0) } == false)
    }

    @Test func aBatchKeepsItsTablesInTheOrderFirstChangedAndRoundTripsAsAJournal() throws {
        var batch = WriteBatch()
        var songs = TableChanges(indexed: false)
        Self.key(2).withUnsafeBytes { key in [UInt8]([7, 7]).withUnsafeBytes { _ = songs.set(key, to: $0, isNew: true) } }
        Self.key(3).withUnsafeBytes { _ = songs.set($0, to: nil) }
        batch.set([9], forKey: Array("Mix".utf8), inTable: "NamedBuffers")
        batch.add(songs, toTable: "Song")
        #expect(batch.tableNames == ["NamedBuffers", "Song"])
        #expect(batch.count == 3)
        #expect(Self.contents(batch.changes(ofTable: "Song")) == ["[2, 0, 0, 0] [7, 7] new", "[3, 0, 0, 0] removed"])
        #expect(batch.changes(ofTable: "Playlist") == nil)

        let decoded = try WriteBatch(decoding: batch.encoded(), location: RecordLocation(file: "batch"))
        #expect(decoded.tableNames == batch.tableNames)
        // The journal's format says put or remove, not whether a row is new.
        #expect(Self.contents(decoded.changes(ofTable: "Song")) == ["[2, 0, 0, 0] [7, 7]", "[3, 0, 0, 0] removed"])
        #expect(Self.contents(decoded.changes(ofTable: "NamedBuffers")) == ["\(Array("Mix".utf8)) [9]"])
    }

    @Test func addingChangesToATableThatHasSomeAppendsThem() {
        var batch = WriteBatch()
        batch.set([1], forKey: Self.key(2), inTable: "Song")
        var more = TableChanges()
        more.set(Self.key(2), to: [2])
        more.set(Self.key(4), to: [4])
        batch.add(more, toTable: "Song")
        #expect(Self.contents(batch.changes(ofTable: "Song")) == ["[2, 0, 0, 0] [2]", "[4, 0, 0, 0] [4]"])
    }

    @Test func aDamagedBatchIsAClearErrorNotATrap() {
        var batch = WriteBatch()
        batch.set([1, 2, 3], forKey: Self.key(2), inTable: "Song")
        let bytes = batch.encoded()
        for damaged in [Array(bytes.dropLast(1)), Array(bytes.prefix(12)), [UInt8](), bytes.map { $0 ^ 0x40 }] {
            #expect(throws: CabinetError.self) { _ = try WriteBatch(decoding: damaged, location: RecordLocation(file: "batch")) }
        }
    }

    /// What a batch adds to the catalog travels in its bytes (journal version
    /// 2); a batch that adds nothing keeps version 1, the layout every Cabinet reads.
    @Test func catalogAdditionsRoundTripAndOnlyThenRaiseTheVersion() throws {
        var plain = WriteBatch()
        plain.set([1], forKey: Self.key(2), inTable: "Song")
        #expect(plain.encoded()[WriteBatch.magic.count] == 1)
        var batch = plain
        batch.addToCatalog(table: "Song", tag: 4)
        batch.addToCatalog(table: "NamedBuffers", tag: nil)
        let bytes = batch.encoded()
        #expect(bytes[WriteBatch.magic.count] == 2)
        let decoded = try WriteBatch(decoding: bytes, location: RecordLocation(file: "batch"))
        #expect(decoded.catalogAdditions == ["Song": 4, "NamedBuffers": nil])
        #expect(Self.contents(decoded.changes(ofTable: "Song")) == ["[2, 0, 0, 0] [1]"])
        // A batch that only catalogs a table is not empty: it must be committed.
        var onlyCatalog = WriteBatch()
        onlyCatalog.addToCatalog(table: "Album", tag: 1)
        #expect(!onlyCatalog.isEmpty && onlyCatalog.changesNoTable)
        var merged = WriteBatch()
        merged.append(contentsOf: onlyCatalog)
        #expect(merged.catalogAdditions == ["Album": 1])
    }

    /// A catalog entry with a bad tag flag, or a name that cannot be a table,
    /// makes the batch damaged, with its checksum intact.
    @Test func aDamagedCatalogEntryIsAClearError() throws {
        func resealed(_ bytes: [UInt8]) -> [UInt8] {
            var body = Array(bytes.dropLast(4))
            let crc = body.withUnsafeBytes { CRC32.checksum($0) }
            withUnsafeBytes(of: crc.littleEndian) { body += $0 }
            return body
        }
        var batch = WriteBatch()
        batch.addToCatalog(table: "Song", tag: 4)
        let bytes = batch.encoded()
        // magic, version, table count (0), catalog count, then "Song" counted, flag, tag.
        let flag = WriteBatch.magic.count + 1 + 2 + 2 + 4 + 4
        #expect(bytes[flag] == 1 && bytes[flag + 1] == 4)
        var badFlag = bytes
        badFlag[flag] = 7
        var badName = bytes
        badName[flag - 4] = UInt8(ascii: ".")
        for damaged in [badFlag, badName].map(resealed) {
            let error = expectCabinetError({ _ = try WriteBatch(decoding: damaged, location: RecordLocation(file: "batch")) }) {
                $0.code == .malformedRecord && "\($0)".contains("journal is damaged")
            }
            #expect(error != nil)
        }
    }

    /// Every backend commits a batch across several tables, and leaves no
    /// commit unfinished.
    @Test(arguments: BackendKind.allCases)
    func everyBackendCommitsABatchAcrossTablesWhole(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let backend = try fixture.backend()
        defer { if kind != .memory { backend.close() } }
        var batch = WriteBatch()
        batch.set([1], forKey: Self.key(2), inTable: "Left")
        batch.set([2], forKey: Self.key(2), inTable: "Right")
        try backend.commit(batch)
        for name in ["Left", "Right"] {
            let value = try backend.openTable(named: name).withValue(forRow: 2) { Array($0) }
            #expect(value == (name == "Left" ? [1] : [2]))
        }
        #expect(!backend.hasUnfinishedCommit)
        #expect(try backend.finishUnfinishedCommit() == nil)
    }
}
