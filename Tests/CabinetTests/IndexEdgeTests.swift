@testable import Cabinet
import CabinetStorage
import Foundation
import Testing

/// A class whose index names another class's property: a copy-paste slip.
final class Misindexed: StoredObject {
    @Stored var name = ""
    override class var indexes: [StoredIndex] { [.value(\Track.artist)] }
    override func read(from buffer: inout DataBuffer) throws { name = try buffer.readString() }
    override func write(to buffer: inout DataBuffer) { buffer.writeString(name) }
}

/// The edges a review of the indexes found: damaged positions, values a class's
/// own encoding changes, pending changes during a rebuild, damaged records, and
/// a randomized run against a model.
@Suite struct IndexEdgeTests {
    private func seeded(_ kind: BackendKind, _ count: Int = 20) throws -> (StoreFixture, ObjectStore, [Track]) {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open(Track.self, Mix.self)
        let tracks = (0..<count).map { i in
            let track = Track("song \(i) walking", by: i % 2 == 0 ? "Queen" : "ABBA", seconds: UInt32(i))
            store.insert(track)
            return track
        }
        try store.save()
        return (fixture, store, tracks)
    }

    @Test(arguments: BackendKind.allCases)
    func damagedWordPositionsAreAClearErrorAndVerifyFindsThem(_ kind: BackendKind) throws {
        let (fixture, store, tracks) = try seeded(kind)
        defer { store.close(); withExtendedLifetime(fixture) {} }
        let number = try #require(store.entriesByName["Track"]?.indexes?.declared.first { $0.index.kind == .fullText }?.number)
        let index = try store.backend.openOrderedTable(named: "Track.index")
        let key = IndexKeys.entryKey(index: number, value: FullTextIndexing.key(of: "song"), row: tracks[7].rowID)
        // Varints that add up past any Int: a sum checked for overflow, not a trap.
        let damaged = (0..<200).flatMap { _ in [UInt8](repeating: 0xFF, count: 4) + [0x7F] }
        try index.transaction {
            try key.withUnsafeBytes { k in try damaged.withUnsafeBytes { try index.setValue($0, forKey: k) } }
        }
        let error = try #require(throws: CabinetError.self) { try store.search(Track.self, matching: "\"song 7\"") }
        #expect(error.code == .malformedRecord && error.description.contains("reindex"))
        #expect(!(try StoreVerifier.verify(store.backend)).isEmpty, "the row record's positions differ from the entry's")
        try store.reindex(Track.self)
        #expect(try store.search(Track.self, matching: "\"song 7\"").map(\.rowID) == [tracks[7].rowID])
    }

    @Test(arguments: BackendKind.allCases)
    func anObjectIsIndexedAsItsRecordReadsBackNotAsItWasInMemory(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open(Track.self, Mix.self)
        defer { store.close() }
        let track = Track("t", by: "a")
        track.added = Date(timeIntervalSinceReferenceDate: 0)   // writeDate stores this instant as "no date"
        store.insert(track)
        try store.save()
        #expect(try store.fetch(Track.self, where: \.added, equals: nil).map(\.rowID) == [track.rowID], "the record says nil")
        #expect(try store.verifyIndexes().isEmpty)
    }

    @Test func anIndexOnAnotherClassesPropertyIsRefusedAtRegister() throws {
        let fixture = try StoreFixture(.memory)
        let store = try fixture.open(Track.self)
        defer { store.close() }
        let error = try #require(throws: CabinetError.self) { try store.register(Misindexed.self) }
        #expect(error.code == .classConflict && error.description.contains("another class"))
    }

    @Test(arguments: BackendKind.allCases)
    func aRebuildIndexesTheSavedRecordsNotThePendingChanges(_ kind: BackendKind) throws {
        let (fixture, store, tracks) = try seeded(kind)
        defer { store.close(); withExtendedLifetime(fixture) {} }
        tracks[0].artist = "Pending"
        store.delete(tracks[1])
        store.insert(Track("new", by: "Pending"))
        try store.reindex(Track.self)
        #expect(try store.verifyIndexes().isEmpty)
        #expect(try store.count(Track.self, where: \.artist, equals: "Pending") == 0)
        #expect(try store.fetch(Track.self, where: \.artist, equals: "Queen").contains { $0 === tracks[0] }, "by its saved value")
        #expect(try store.count(Track.self, where: \.artist, equals: "ABBA") == 9, "a pending delete is not counted")
        try store.save()
        #expect(try store.count(Track.self, where: \.artist, equals: "Pending") == 2)
        #expect(try store.verifyIndexes().isEmpty)
    }

    @Test func aDamagedRecordIsLeftOutOfABuildNotAReasonToRefuseTheClass() throws {
        let fixture = try StoreFixture(.memory)
        do {
            let plain = try fixture.open(PlainTrack.self)
            for i in 0..<3 { let track = PlainTrack(); track.artist = "a\(i)"; plain.insert(track) }
            try plain.save()
            let table = try plain.backend.openTable(named: "Track")
            try table.transaction { try [UInt8](repeating: 0xEE, count: 3).withUnsafeBytes { try table.setValue($0, forRow: 3) } }
            plain.close()
        }
        let store = try fixture.open(Track.self)
        defer { store.close() }
        #expect(try store.fetch(Track.self, where: \.artist, equals: "a0").count == 1)
        #expect(try store.fetch(Track.self, where: \.artist, equals: "a2").count == 1)
    }

    @Test func typographicApostrophesFoldToPlainOnes() throws {
        #expect(FullTextTokenizer.tokens(of: "Don’t Stop").map(\.text) == ["don't", "stop"])
        #expect(FullTextQuery("don't").terms == FullTextQuery("DON’T").terms)
        #expect(FullTextQuery("*").terms.isEmpty && FullTextQuery("\"").terms.isEmpty && FullTextQuery("\"\"").terms.isEmpty)
    }

    @Test func anApostropheBetweenChineseOrJapaneseCharactersIsNoWord() throws {
        #expect(FullTextTokenizer.tokens(of: "東'京").map(\.text) == ["東", "京"])
        #expect(FullTextTokenizer.tokens(of: "東’京 a'東 東'a").map(\.text) == ["東", "京", "a", "東", "東", "a"])
        #expect(FullTextTokenizer.tokens(of: "l'été don't").map(\.text) == ["l'ete", "don't"], "between letters it stays")
    }

    @Test(arguments: BackendKind.allCases, [UInt64(1), 2, 3])
    func randomChangesKeepEveryIndexInAgreementWithAModel(_ kind: BackendKind, _ seed: UInt64) throws {
        var random = SeededRandom(seed)
        let artists = ["", "\0", "a", "a\0", "a\0b", "ab", "é", "e\u{301}", "Queen"]
        let offsets: [Int64] = [.min, -1, 0, 1, .max]
        let titles = ["", "a b c", "b a", "東京タワー", "walk walking", "x y x y x"]
        let fixture = try StoreFixture(kind)
        var store = try fixture.open(Track.self, Mix.self)
        defer { store.close() }
        for round in 0..<20 {
            var live = try store.fetchAll(Track.self)
            for _ in 0..<Int(random.next() % 8) {
                switch random.next() % 5 {
                case 0, 1:
                    let track = Track(titles[Int(random.next() % 6)], by: artists[Int(random.next() % 9)])
                    track.offset = offsets[Int(random.next() % 5)]
                    store.insert(track)
                    live.append(track)
                case 2 where !live.isEmpty:
                    live[Int(random.next() % UInt64(live.count))].artist = artists[Int(random.next() % 9)]
                case 3 where !live.isEmpty:
                    live[Int(random.next() % UInt64(live.count))].offset = offsets[Int(random.next() % 5)]
                case 4 where !live.isEmpty:
                    store.delete(live.remove(at: Int(random.next() % UInt64(live.count))))
                default:
                    break
                }
            }
            try store.save()
            if round % 6 == 5 {
                store.close()
                store = try fixture.open(Track.self, Mix.self)
            }
            let all = try store.fetchAll(Track.self)
            for artist in artists {
                let found = try store.fetch(Track.self, where: \.artist, equals: artist).map(\.rowID)
                #expect(found == all.filter { Array($0.artist.utf8) == Array(artist.utf8) }.map(\.rowID).sorted(), "round \(round), artist \(Array(artist.utf8))")
            }
            let byOffset = try store.fetch(Track.self, where: \.offset, in: Int64.min...Int64.max).map(\.rowID)
            #expect(byOffset == all.sorted { ($0.offset, $0.rowID) < ($1.offset, $1.rowID) }.map(\.rowID), "round \(round)")
            let walk = try store.search(Track.self, matching: "walk").map(\.rowID)
            #expect(walk == all.filter { $0.title == "walk walking" }.map(\.rowID).sorted())
            #expect(try store.verifyIndexes().isEmpty, "round \(round)")
        }
    }
}

/// A small deterministic generator (SplitMix64), so a failing seed can be run again.
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64
    init(_ seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
