import Cabinet
import CabinetStorage
import Foundation
import Testing

@Suite struct IndexTests {
    private static let artists = ["Queen", "Queens", "Que", "", "a\u{0}b", "ABBA", "Björk", "Zappa", "queen", "Åge"]

    /// 300 tracks, artists in turn, seconds from a fixed scramble; saved.
    private func seeded(_ kind: BackendKind) throws -> (StoreFixture, ObjectStore, [Track]) {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open(Track.self, Mix.self)
        let tracks = (0..<300).map { i in
            let track = Track("T\(i)", by: IndexTests.artists[i % IndexTests.artists.count], seconds: UInt32((i * 7919) % 1000))
            store.insert(track)
            return track
        }
        try store.save()
        return (fixture, store, tracks)
    }

    @Test(arguments: BackendKind.allCases)
    func equalityFindsExactlyTheMatchingObjectsInRowOrder(_ kind: BackendKind) throws {
        let (fixture, store, tracks) = try seeded(kind)
        defer { store.close(); withExtendedLifetime(fixture) {} }
        for artist in IndexTests.artists {
            let expected = tracks.filter { $0.artist == artist }.map(\.rowID)
            let found = try store.fetch(Track.self, where: \.artist, equals: artist)
            #expect(found.map(\.rowID) == expected, "artist \(artist.debugDescription)")
            #expect(try store.count(Track.self, where: \.artist, equals: artist) == expected.count)
        }
        #expect(try store.fetch(Track.self, where: \.artist, equals: "Nobody").isEmpty)
        let firstThree = try store.fetch(Track.self, where: \.artist, equals: "Queen", limit: 3)
        #expect(firstThree.map(\.rowID) == Array(tracks.filter { $0.artist == "Queen" }.map(\.rowID).prefix(3)))
        #expect(firstThree.allSatisfy { found in tracks.contains { $0 === found } }, "live objects come back as themselves")
    }

    @Test(arguments: BackendKind.allCases)
    func rangesComeInValueOrderThenRowOrderEitherWay(_ kind: BackendKind) throws {
        let (fixture, store, tracks) = try seeded(kind)
        defer { store.close(); withExtendedLifetime(fixture) {} }
        let expected = tracks.filter { (300...600).contains($0.seconds) }
            .sorted { ($0.seconds, $0.rowID) < ($1.seconds, $1.rowID) }.map(\.rowID)
        #expect(!expected.isEmpty)
        #expect(try store.fetch(Track.self, where: \.seconds, in: 300...600).map(\.rowID) == expected)
        #expect(try store.fetch(Track.self, where: \.seconds, in: 300...600, descending: true).map(\.rowID) == expected.reversed())
        #expect(try store.fetch(Track.self, where: \.seconds, in: 300...600, limit: 5).map(\.rowID) == Array(expected.prefix(5)))
        let strings = try store.fetch(Track.self, where: \.artist, in: "Q"..."Queen").map(\.artist)
        #expect(Set(strings) == ["Que", "Queen"], "a string range is by Unicode scalar order, its ends included")
        let halfOpen = tracks.filter { (300..<600).contains($0.seconds) }.sorted { ($0.seconds, $0.rowID) < ($1.seconds, $1.rowID) }.map(\.rowID)
        #expect(try store.fetch(Track.self, where: \.seconds, in: 300..<600).map(\.rowID) == halfOpen, "a half-open range leaves its end out")
        let from = tracks.filter { $0.seconds >= 990 }.sorted { ($0.seconds, $0.rowID) < ($1.seconds, $1.rowID) }.map(\.rowID)
        #expect(try store.fetch(Track.self, where: \.seconds, in: 990...).map(\.rowID) == from)
        #expect(try store.fetch(Track.self, where: \.seconds, in: 300...600, limit: 0).isEmpty)
        #expect(try store.fetch(Track.self, where: \.artist, in: "Que"..<"Queen").map(\.artist) == Array(repeating: "Que", count: 30))
        var streamed: [UInt32] = []
        try store.enumerate(Track.self, where: \.seconds, in: 300...600) { track, stop in
            streamed.append(track.rowID)
            stop = streamed.count == 10
        }
        #expect(streamed == Array(expected.prefix(10)))
    }

    @Test(arguments: BackendKind.allCases)
    func everyValueTypeOrdersAsItsValuesAtTheBoundaries(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open(Track.self, Mix.self)
        defer { store.close() }
        let offsets: [Int64] = [Int64.max, -1, 0, Int64.min, 1, -1_000_000]
        let scores: [Float64] = [3.5, -0.0, -2, .infinity, -.infinity, 0, 1e-300]
        let dates: [Date?] = [Date(timeIntervalSince1970: 100), nil, Date(timeIntervalSince1970: -5), Date(timeIntervalSinceReferenceDate: 1)]
        var made: [Track] = []
        for i in 0..<offsets.count * 2 {
            let track = Track("x\(i)", by: "a")
            track.offset = offsets[i % offsets.count]
            track.score = scores[i % scores.count]
            track.added = dates[i % dates.count]
            track.favourite = i % 3 == 0
            store.insert(track)
            made.append(track)
        }
        try store.save()
        let byOffset = try store.fetch(Track.self, where: \.offset, in: Int64.min...Int64.max)
        #expect(byOffset.map(\.rowID) == made.sorted { ($0.offset, $0.rowID) < ($1.offset, $1.rowID) }.map(\.rowID))
        let byScore = try store.fetch(Track.self, where: \.score, in: -.infinity ... .infinity)
        #expect(byScore.map(\.score) == made.map(\.score).sorted(), "-0 and 0 are one value, ordered with the rest")
        #expect(try store.count(Track.self, where: \.score, equals: 0) == made.filter { $0.score == 0 }.count)
        let dated = try store.fetch(Track.self, where: \.added, in: Date.distantPast...Date.distantFuture)
        #expect(dated.map(\.added) == made.compactMap(\.added).sorted(), "nil is no date in a range")
        #expect(try store.fetch(Track.self, where: \.added, equals: nil).count == made.filter { $0.added == nil }.count)
        #expect(try store.fetch(Track.self, where: \.favourite, equals: true).count == made.filter(\.favourite).count)
        #expect(try store.fetch(Track.self, where: \.favourite, in: 0...1).first?.favourite == false, "false sorts first")
    }

    @Test(arguments: BackendKind.allCases)
    func nanIsRefusedAtSaveWithNothingWrittenAndTheSaveCanBeRetried(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open(Track.self, Mix.self)
        defer { store.close() }
        let track = Track("nan", by: "x")
        track.score = .nan
        store.insert(track)
        let error = try #require(throws: CabinetError.self) { try store.save() }
        #expect(error.code == .unindexableValue)
        #expect(error.description.contains("NaN") && error.description.contains("Track"))
        #expect(try store.count(of: Track.self) == 0, "nothing of the save was written")
        track.score = 1
        try store.save()
        #expect(try store.fetch(Track.self, where: \.score, equals: 1).map(\.rowID) == [track.rowID])
        #expect(throws: CabinetError.self) { try store.fetch(Track.self, where: \.score, equals: .nan) }
    }

    @Test(arguments: BackendKind.allCases)
    func updatesMoveAnObjectBetweenKeysAndDeletesTakeItOut(_ kind: BackendKind) throws {
        let (fixture, store, tracks) = try seeded(kind)
        defer { store.close(); withExtendedLifetime(fixture) {} }
        let moved = try #require(tracks.first { $0.artist == "Queen" })
        moved.artist = "ABBA"
        let gone = try #require(tracks.first { $0.artist == "Zappa" })
        store.delete(gone)
        // Unsaved: queries see the saved state (a pending delete is left out).
        #expect(try store.fetch(Track.self, where: \.artist, equals: "Queen").contains { $0 === moved })
        #expect(!(try store.fetch(Track.self, where: \.artist, equals: "Zappa").contains { $0 === gone }))
        try store.save()
        #expect(!(try store.fetch(Track.self, where: \.artist, equals: "Queen").contains { $0 === moved }))
        #expect(try store.fetch(Track.self, where: \.artist, equals: "ABBA").contains { $0 === moved })
        #expect(try store.count(Track.self, where: \.artist, equals: "Zappa") == tracks.filter { $0.artist == "Zappa" }.count - 1)
        let unsaved = Track("new", by: "Queen")
        store.insert(unsaved)
        #expect(!(try store.fetch(Track.self, where: \.artist, equals: "Queen").contains { $0 === unsaved }), "an unsaved insert is not found")
    }

    @Test(arguments: BackendKind.allCases)
    func indexesSurviveAReopenAndUndoKeepsThemRight(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        var row: UInt32 = 0
        do {
            let store = try fixture.open(Track.self, Mix.self)
            let track = Track("a", by: "Queen")
            store.insert(track)
            try store.save()
            row = track.rowID
            store.undoManager.beginGroup(named: "Rename")
            track.artist = "ABBA"
            store.undoManager.endGroup()
            try store.save()
            #expect(try store.fetch(Track.self, where: \.artist, equals: "ABBA").map(\.rowID) == [row])
            try store.undoManager.undo()
            try store.save()
            #expect(try store.fetch(Track.self, where: \.artist, equals: "Queen").map(\.rowID) == [row])
            #expect(try store.fetch(Track.self, where: \.artist, equals: "ABBA").isEmpty)
            try store.undoManager.redo()
            try store.save()
            store.close()
        }
        let store = try fixture.open(Track.self, Mix.self)
        defer { store.close() }
        #expect(try store.fetch(Track.self, where: \.artist, equals: "ABBA").map(\.rowID) == [row])
        #expect(try store.fetch(Track.self, where: \.artist, equals: "Queen").isEmpty)
    }

    @Test(arguments: BackendKind.allCases)
    func anIndexAddedToAClassWithObjectsIsBuiltAtRegister(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        var queen: [UInt32] = []
        do {
            let store = try fixture.open(PlainTrack.self)
            for i in 0..<12_000 {
                let track = PlainTrack()
                track.artist = i % 100 == 0 ? "Queen" : "Other \(i % 7)"
                store.insert(track)
                if track.artist == "Queen" { queen.append(track.rowID) }
            }
            try store.save()
            store.close()
        }
        let store = try fixture.open(LabelV1.self)   // the fixture registers only the classes asked for
        defer { store.close() }
        var progress: [IndexBuildProgress] = []
        store.indexBuildProgress = { progress.append($0) }
        try store.register(Track.self)
        #expect(progress.map(\.rowsDone) == [5_000, 10_000, 12_000], "reported after each batch and at the end")
        #expect(progress.allSatisfy { $0.className == "Track" && $0.rowsTotal == 12_000 })
        #expect(try store.fetch(Track.self, where: \.artist, equals: "Queen").map(\.rowID) == queen)
        let others = (0..<12_000).filter { $0 % 100 != 0 && $0 % 7 == 3 }.count
        #expect(try store.count(Track.self, where: \.artist, equals: "Other 3") == others)
    }

    /// A build commits a batch every 5,000 rows: a word in every row has its
    /// posting blocks written by each batch over the ones the batch before
    /// committed, and finds every row after the build.
    @Test(arguments: BackendKind.allCases)
    func aFullTextIndexBuiltAcrossBatchesFindsEveryRow(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        do {
            let store = try fixture.open(PlainTrack.self)
            for i in 0..<12_000 {
                let track = PlainTrack()
                track.title = "common word\(i % 3) row\(i)"
                store.insert(track)
            }
            try store.save()
            store.close()
        }
        let store = try fixture.open(LabelV1.self)
        defer { store.close() }
        try store.register(Track.self)
        #expect(try store.search(Track.self, matching: "common").count == 12_000)
        let ones = try store.search(Track.self, matching: "word1")
        #expect(ones.count == 4_000 && ones.allSatisfy { $0.title.contains("word1 ") })
        #expect(try store.search(Track.self, matching: "row11999").map(\.title) == ["common word2 row11999"])
        #expect(try store.search(Track.self, matching: "row4999").map(\.title) == ["common word1 row4999"])
    }

    @Test(arguments: BackendKind.allCases)
    func referencesFindTheListsHoldingAnObject(_ kind: BackendKind) throws {
        let (fixture, store, tracks) = try seeded(kind)
        defer { store.close(); withExtendedLifetime(fixture) {} }
        let mixes = (0..<20).map { i in
            let mix = Mix()
            mix.title = "M\(i)"
            mix.tracks = (0..<15).map { tracks[(i * 13 + $0 * 3) % tracks.count] } + [tracks[0], tracks[0]]
            store.insert(mix)
            return mix
        }
        try store.save()
        for track in tracks.prefix(40) {
            let expected = mixes.filter { $0.tracks.contains { $0 === track } }.map(\.rowID)
            #expect(try store.fetch(Mix.self, where: \.tracks, contains: track).map(\.rowID) == expected)
        }
        mixes[0].tracks.removeAll { $0 === tracks[0] }
        store.delete(mixes[1])
        try store.save()
        #expect(try store.fetch(Mix.self, where: \.tracks, contains: tracks[0]).map(\.rowID) == mixes[2...].map(\.rowID))
        #expect(try store.fetch(Mix.self, where: \.tracks, contains: Track()).isEmpty, "an object never inserted is in no saved list")
    }

    @Test func aPlainStoreKeepsItsClassFilesAsBNRPersistenceWritesThemBesideItsIndexFiles() throws {
        let fixture = try StoreFixture(.tokyoCabinet)
        let options = ObjectStore.Options(perInstanceVersioning: false, recordFormat: .plain)
        let store = try fixture.open(Track.self, Mix.self, options: options)
        let track = Track("Walking on Sunshine", by: "Katrina", seconds: 238)
        store.insert(track)
        try store.save()
        #expect(try store.fetch(Track.self, where: \.artist, equals: "Katrina").first === track)
        #expect(try store.search(Track.self, matching: "sunshine").first === track)
        store.close()
        // The class file holds the record alone, no version byte and no checksum, as BNRPersistence writes it.
        let raw = RawTokyoCabinet.read(fixture.storePath + "/Track")[RawTokyoCabinet.rowKey(track.rowID)]
        var expected = DataBuffer()
        track.write(to: &expected)
        #expect(raw == expected.allBytes)
        #expect(FileManager.default.fileExists(atPath: fixture.storePath + "/Track.index"))
        #expect(try StoreVerifier.verify(path: fixture.storePath).isEmpty)
    }

    @Test func aQueryOnAPropertyWithNoIndexSaysWhatToDeclare() throws {
        let fixture = try StoreFixture(.memory)
        let store = try fixture.open(Track.self, Mix.self)
        defer { store.close() }
        let error = try #require(throws: CabinetError.self) { try store.fetch(Track.self, where: \.title, equals: "x") }
        #expect(error.code == .noSuchIndex)
        #expect(error.description.contains("Track") && error.description.contains("indexes"))
        #expect(throws: CabinetError.self) { try store.fetch(Mix.self, where: \.title, equals: "x") }
    }

    @Test func aStoredNameEndingLikeAnIndexFileIsRefused() throws {
        final class Clash: StoredObject { override class var storedName: String { "Track.index" } }
        let fixture = try StoreFixture(.memory)
        let store = try fixture.open(Track.self)
        defer { store.close() }
        let error = try #require(throws: CabinetError.self) { try store.register(Clash.self) }
        #expect(error.code == .invalidStoredName)
    }
}
