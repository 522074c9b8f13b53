@testable import Cabinet
import CabinetStorage
import Foundation
import Testing

/// Full-text posting blocks: their bytes, damage in them, and words common
/// enough to take many blocks, changed at random against a model.
@Suite struct PostingBlockTests {
    private func members(_ rows: [UInt32]) -> [PostingBlock.Member] {
        rows.map { PostingBlock.Member(row: $0, positions: FullTextIndexing.encode([$0 % 7, 9].sorted().map(Int.init))) }
    }

    @Test func aBlockReadsBackAsWritten() throws {
        let written = members([5, 6, 300, 70_000, UInt32.max])
        let bytes = PostingBlock.encode(written[...])
        let read = try bytes.withUnsafeBytes { try PostingBlock.members(of: $0, firstRow: 5) }
        #expect(read.map(\.row) == written.map(\.row) && read.map(\.positions) == written.map(\.positions))
    }

    @Test func damagedBlocksThrowInsteadOfTrapping() throws {
        let good = PostingBlock.encode(members([10, 11])[...])
        let damaged: [(String, [UInt8], UInt32)] = [
            ("empty", [], 10),
            ("a first row other than the key's", [1, 1, 0x09], 10),
            ("rows out of order (a gap of 0)", good + [0, 1, 0x09], 10),
            ("a gap past the largest row ID", [0, 1, 0x09, 0x80, 0x80, 0x80, 0x80, 0x10, 1, 0x09], 10),
            ("a varint cut short", [0, 1, 0x09, 0x80], 10),
            ("positions past the end", [0, 9, 0x09], 10),
            ("positions one byte past the end", [0, 2, 0x09], 10),
            ("no positions", [0, 0], 10),
            ("an eleven-byte varint", [0] + [UInt8](repeating: 0xFF, count: 10) + [0x01], 10),
        ]
        for (what, bytes, first) in damaged {
            #expect(throws: PostingBlock.Damage.self, "\(what)") {
                try bytes.withUnsafeBytes { _ = try PostingBlock.members(of: $0, firstRow: first) }
            }
            // The search's own loop (rows only) refuses the same bytes.
            #expect(throws: PostingBlock.Damage.self, "\(what), rows only") {
                var rows: [UInt32] = []
                try bytes.withUnsafeBytes { try PostingBlock.appendRows(of: $0, firstRow: first, to: &rows) }
            }
        }
        var rows: [UInt32] = []
        try good.withUnsafeBytes { try PostingBlock.appendRows(of: $0, firstRow: 10, to: &rows) }
        #expect(rows == [10, 11])
    }

    @Test func splitsKeepBlocksNearTheirTargetSize() {
        #expect(PostingBlock.split([]).isEmpty)
        let few = members(Array(1...50))
        #expect(PostingBlock.split(few).count == 1, "under the limit: one block")
        let many = members(Array(stride(from: 1, to: 60_000, by: 3)))
        let runs = PostingBlock.split(many)
        #expect(runs.count > 1 && runs.flatMap { $0.map(\.row) } == many.map(\.row))
        #expect(runs.allSatisfy { PostingBlock.encode($0).count <= PostingBlock.targetSize })
        let huge = [PostingBlock.Member(row: 1, positions: FullTextIndexing.encode(Array(0..<3_000)))]
        #expect(PostingBlock.split(huge).count == 1, "one row bigger than a block is a block of its own")
    }

    /// The posting blocks of `word` in `store`'s Track index: first rows and sizes.
    private func blocks(of word: String, in store: ObjectStore) throws -> [(UInt32, Int)] {
        let indexes = try #require(store.entriesByName["Track"]?.indexes)
        let number = try #require(indexes.declared.first { $0.index.kind == .fullText }?.number)
        let prefix = [number] + FullTextIndexing.key(of: word)
        var found: [(UInt32, Int)] = []
        try prefix.withUnsafeBytes { lower in
            try IndexKeys.keyAfterPrefix(prefix)!.withUnsafeBytes { upper in
                try indexes.table.forEach(from: lower, to: upper, descending: false) { key, value in
                    found.append((IndexKeys.row(ofEntry: key)!, value.count))
                    return true
                }
            }
        }
        return found
    }

    @Test(arguments: BackendKind.allCases, [UInt64(7), 8])
    func commonWordsInManyBlocksStayRightThroughRandomChanges(_ kind: BackendKind, _ seed: UInt64) throws {
        var random = SeededRandom(seed)
        let vocabulary = ["love", "song", "rain", "sun"]
        let fixture = try StoreFixture(kind)
        var store = try fixture.open(Track.self, Mix.self)
        defer { store.close() }
        func title() -> String {
            (0..<(1 + Int(random.next() % 3))).map { _ in vocabulary[Int(random.next() % 4)] }.joined(separator: " ") + " love"
        }
        for _ in 0..<2_000 { store.insert(Track(title(), by: "x")) }
        try store.save()
        #expect(try blocks(of: "love", in: store).count > 2, "a word in every title takes several blocks")
        for round in 0..<12 {
            var live = try store.fetchAll(Track.self)
            for _ in 0..<(1 + Int(random.next() % 200)) {
                switch random.next() % 4 {
                case 0:
                    let track = Track(title(), by: "x")
                    store.insert(track)
                    live.append(track)
                case 1 where !live.isEmpty:
                    live[Int(random.next() % UInt64(live.count))].title = title()
                case 2 where !live.isEmpty:
                    // Low rows too: a block's first row goes, and the block is keyed anew.
                    store.delete(live.remove(at: Int(random.next() % UInt64(min(live.count, 50 + round * 40)))))
                case 3 where !live.isEmpty:
                    live[Int(random.next() % UInt64(live.count))].title = "rain"   // "love" leaves the row
                default:
                    break
                }
            }
            try store.save()
            if round % 4 == 3 {
                store.close()
                store = try fixture.open(Track.self, Mix.self)
                live = try store.fetchAll(Track.self)
            }
            let words = live.map { (row: $0.rowID, words: Set($0.title.split(separator: " ").map(String.init)), title: $0.title) }
            for word in vocabulary {
                let expected = words.filter { $0.words.contains(word) }.map(\.row).sorted()
                #expect(try store.search(Track.self, matching: word).map(\.rowID) == expected, "\(word), round \(round)")
            }
            let pair = words.filter { $0.words.isSuperset(of: ["rain", "sun"]) }.map(\.row).sorted()
            #expect(try store.search(Track.self, matching: "sun rain").map(\.rowID) == pair)
            let phrase = words.filter { $0.title.contains("rain sun") }.map(\.row).sorted()
            #expect(try store.search(Track.self, matching: "\"rain sun\"").map(\.rowID) == phrase)
            #expect(try store.verifyIndexes().isEmpty, "round \(round)")
            let sizes = try blocks(of: "love", in: store)
            #expect(sizes.allSatisfy { $0.1 <= PostingBlock.sizeLimit })
            #expect(zip(sizes, sizes.dropFirst()).allSatisfy { $0.0 < $1.0 })
        }
        #expect(try StoreVerifier.verify(store.backend).isEmpty)
    }

    @Test(arguments: BackendKind.allCases)
    func anIndexFileOfTheFormerLayoutIsBuiltAgainAndANewerOneRefused(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        var store = try fixture.open(Track.self, Mix.self)
        defer { store.close() }
        let tracks = (0..<30).map { Track("song \($0)", by: "x") }
        tracks.forEach(store.insert)
        try store.save()
        func setCatalogLayout(_ layout: UInt8) throws {
            let table = try #require(store.entriesByName["Track"]?.indexes?.table)
            var catalog = try #require(try IndexCatalog.read(from: table, format: store.recordFormat))
            catalog.layout = layout
            try table.transaction {
                try IndexKeys.catalogKey.withUnsafeBytes { key in
                    try catalog.encoded(format: store.recordFormat).withUnsafeBytes { try table.setValue($0, forKey: key) }
                }
            }
        }
        try setCatalogLayout(1)
        store.close()
        store = try fixture.open(Track.self, Mix.self)
        let table = try #require(store.entriesByName["Track"]?.indexes?.table)
        #expect(try IndexCatalog.read(from: table, format: store.recordFormat)?.layout == IndexCatalog.format, "built again")
        #expect(try store.search(Track.self, matching: "song").count == 30)
        try setCatalogLayout(IndexCatalog.format + 1)
        store.close()
        // `cabinet verify` does not take a newer layout for damage either.
        let error = try #require(throws: CabinetError.self) { store = try fixture.open(Track.self, Mix.self) }
        #expect(error.code == .unsupportedFormat && error.description.contains("newer Cabinet") && error.description.contains("cabinet reindex"))
    }

    @Test(arguments: BackendKind.allCases)
    func overlappingBlocksAreDamageNotWrongAnswers(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open(Track.self, Mix.self)
        defer { store.close() }
        let tracks = (0..<40).map { Track("love \($0 % 2 == 0 ? "song" : "rain")", by: "x") }
        tracks.forEach(store.insert)
        try store.save()
        let indexes = try #require(store.entriesByName["Track"]?.indexes)
        let number = try #require(indexes.declared.first { $0.index.kind == .fullText }?.number)
        // A second block of "love" that starts inside the first one's rows.
        let inside = tracks[5].rowID
        let block = PostingBlock.encode([PostingBlock.Member(row: inside, positions: [0])][...])
        try indexes.table.transaction {
            try IndexKeys.entryKey(index: number, value: FullTextIndexing.key(of: "love"), row: inside).withUnsafeBytes { key in
                try block.withUnsafeBytes { try indexes.table.setValue($0, forKey: key) }
            }
        }
        let error = try #require(throws: CabinetError.self) { try store.search(Track.self, matching: "love song") }
        #expect(error.code == .malformedRecord && error.description.contains("overlap") && error.description.contains("reindex"))
        // A save whose rows fall on both sides of the damaged block's first row reads both blocks.
        tracks[3].title = "sun"
        tracks[7].title = "sun"
        let saving = try #require(throws: CabinetError.self, "a save that rewrites the damaged blocks says so") { try store.save() }
        #expect(saving.description.contains("past the next block's first row"))
        try store.reindex(Track.self)
        #expect(try store.search(Track.self, matching: "love song").count == 20)
    }

    @Test func verifyLeavesAnIndexFileOfAnEarlierLayoutToTheNextOpen() throws {
        let fixture = try StoreFixture(.tokyoCabinet)
        let store = try fixture.open(Track.self, Mix.self)
        store.insert(Track("song", by: "x"))
        try store.save()
        let table = try #require(store.entriesByName["Track"]?.indexes?.table)
        var catalog = try #require(try IndexCatalog.read(from: table, format: store.recordFormat))
        catalog.layout = 1
        try table.transaction {
            try IndexKeys.catalogKey.withUnsafeBytes { key in
                try catalog.encoded(format: store.recordFormat).withUnsafeBytes { try table.setValue($0, forKey: key) }
            }
        }
        // An old file's row records would not read in this layout: not damage, just older.
        try table.transaction {
            try IndexKeys.rowKey(2).withUnsafeBytes { key in
                try [UInt8](repeating: 0xEE, count: 9).withUnsafeBytes { try table.setValue($0, forKey: key) }
            }
        }
        store.close()
        #expect(try StoreVerifier.verify(path: fixture.storePath).isEmpty)
    }
}
