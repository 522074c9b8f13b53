import Cabinet
import Foundation
import Testing

@Suite struct FullTextTests {
    private static let titles = [
        "Walking on Sunshine",           // 0
        "Sunshine of Your Love",         // 1
        "Walk on the Wild Side",         // 2
        "Here Comes the Sun",            // 3
        "Café del Mar",                  // 4
        "CAFE SOCIETY",                  // 5
        "東京タワーの夜",                   // 6
        "京都の東",                        // 7
        "Don't Stop Me Now",             // 8
        "on sunshine walking",           // 9
        "Straße der Sonne",              // 10
        "",                              // 11
        "Sunshine, sunshine — walking!", // 12
    ]

    private func seeded(_ kind: BackendKind) throws -> (StoreFixture, ObjectStore, [Track]) {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open(Track.self, Mix.self)
        let tracks = FullTextTests.titles.map { title in
            let track = Track(title, by: "x")
            store.insert(track)
            return track
        }
        try store.save()
        return (fixture, store, tracks)
    }

    private func found(_ store: ObjectStore, _ query: String) throws -> [Int] {
        try store.search(Track.self, matching: query).map { track in FullTextTests.titles.firstIndex(of: track.title)! }
    }

    @Test(arguments: BackendKind.allCases)
    func wordsPrefixesAndPhrasesFindWhatTheyShould(_ kind: BackendKind) throws {
        let (fixture, store, _) = try seeded(kind)
        defer { store.close(); withExtendedLifetime(fixture) {} }
        #expect(try found(store, "walking sunshine") == [0, 9, 12], "every word, any order")
        #expect(try found(store, "SUNSHINE") == [0, 1, 9, 12], "case does not count")
        #expect(try found(store, "walk") == [2], "a plain word is a whole word: no stemming")
        #expect(try found(store, "walk*") == [0, 2, 9, 12], "a prefix")
        #expect(try found(store, "sunsh*") == [0, 1, 9, 12])
        #expect(try found(store, "\"on sunshine\"") == [0, 9], "a phrase is words next to each other, in order")
        #expect(try found(store, "\"sunshine on\"").isEmpty)
        #expect(try found(store, "\"sunshine walking\"") == [9, 12], "punctuation between words does not part a phrase")
        #expect(try found(store, "the") == [2, 3], "no stop words")
        #expect(try found(store, "don't") == [8], "an apostrophe inside a word stays in it")
        #expect(try found(store, "nothing here").isEmpty)
        #expect(try found(store, "").isEmpty && found(store, "  — ").isEmpty, "a query of no words finds nothing")
        #expect(try store.search(Track.self, matching: "sunshine", limit: 2).count == 2)
    }

    @Test(arguments: BackendKind.allCases)
    func caseAndDiacriticsFoldBothWays(_ kind: BackendKind) throws {
        let (fixture, store, _) = try seeded(kind)
        defer { store.close(); withExtendedLifetime(fixture) {} }
        #expect(try found(store, "cafe") == [4, 5])
        #expect(try found(store, "CAFÉ") == [4, 5])
        #expect(try found(store, "strasse") == [10], "ß folds to ss")
        #expect(try found(store, "STRASSE sonne") == [10])
    }

    @Test(arguments: BackendKind.allCases)
    func chineseAndJapaneseAreFoundByTheirCharacters(_ kind: BackendKind) throws {
        let (fixture, store, _) = try seeded(kind)
        defer { store.close(); withExtendedLifetime(fixture) {} }
        #expect(try found(store, "東京") == [6])
        #expect(try found(store, "タワー") == [6])
        #expect(try found(store, "東京タワー") == [6], "characters next to each other")
        #expect(try found(store, "京都") == [7])
        #expect(try found(store, "東") == [6, 7], "one character: where it starts a pair, or ends a run")
        #expect(try found(store, "京タ夜").isEmpty, "characters not next to each other")
        #expect(try found(store, "\"タワーの夜\"") == [6])
    }

    @Test(arguments: BackendKind.allCases)
    func compatibilityFormsAndPlainLettersFindTheirPlainFormsBothWays(_ kind: BackendKind) throws {
        let pairs = [("ｶﾀｶﾅ", "カタカナ"), ("ＡＢＣ", "ABC"), ("Ǆ", "DŽ"), ("x²", "x2"), ("Ⅻ", "XII"),
                     ("bjørn", "bjorn"), ("œuvre", "oeuvre"), ("ﬁne", "fine")]
        let fixture = try StoreFixture(kind)
        let store = try fixture.open(Track.self, Mix.self)
        defer { store.close() }
        var rows: [String: UInt32] = [:]
        for (special, plain) in pairs {
            for title in [special, plain] {
                let track = Track(title, by: "x")
                store.insert(track)
                rows[title] = track.rowID
            }
        }
        try store.save()
        for (special, plain) in pairs {
            let both = [rows[special]!, rows[plain]!]
            #expect(try store.search(Track.self, matching: special).map(\.rowID) == both, "\(special) finds \(plain)")
            #expect(try store.search(Track.self, matching: plain).map(\.rowID) == both, "\(plain) finds \(special)")
        }
    }

    @Test(arguments: BackendKind.allCases)
    func editsAndDeletesKeepTheIndexRight(_ kind: BackendKind) throws {
        let (fixture, store, tracks) = try seeded(kind)
        defer { store.close(); withExtendedLifetime(fixture) {} }
        tracks[0].title = "Walking in the Rain"
        tracks[12].title = "walking walking sunshine"          // same words, other positions
        store.delete(tracks[1])
        try store.save()
        #expect(try store.search(Track.self, matching: "sunshine").map(\.rowID) == [tracks[9].rowID, tracks[12].rowID])
        #expect(try store.search(Track.self, matching: "rain").map(\.rowID) == [tracks[0].rowID])
        #expect(try store.search(Track.self, matching: "\"walking sunshine\"").map(\.rowID) == [tracks[12].rowID])
        #expect(try store.search(Track.self, matching: "\"sunshine walking\"").map(\.rowID) == [tracks[9].rowID], "row 12's old positions went")
    }

    @Test func aRareWordBesideACommonOneFindsTheRowsOfBoth() throws {
        let fixture = try StoreFixture(.tokyoCabinet)
        let store = try fixture.open(Track.self, Mix.self)
        defer { store.close() }
        var expected: [UInt32] = []
        for i in 0..<10_000 {
            let track = Track(i % 1_000 == 7 ? "love rare \(i)" : "love song \(i)", by: "x")
            store.insert(track)
            if i % 1_000 == 7 { expected.append(track.rowID) }
        }
        try store.save()
        // "love" has more entries than a search reads whole: rows of "rare" are checked against it one by one.
        #expect(try store.search(Track.self, matching: "love rare").map(\.rowID) == expected)
        #expect(try store.search(Track.self, matching: "rare love").map(\.rowID) == expected)
        #expect(try store.search(Track.self, matching: "love song").count == 10_000 - expected.count)
        #expect(try store.search(Track.self, matching: "\"love rare\"").map(\.rowID) == expected)
    }

    @Test func aClassWithoutAFullTextIndexSaysSo() throws {
        let fixture = try StoreFixture(.memory)
        let store = try fixture.open(Track.self, Mix.self)
        defer { store.close() }
        let error = try #require(throws: CabinetError.self) { try store.search(Mix.self, matching: "x") }
        #expect(error.code == .noSuchIndex && error.description.contains("fullText"))
    }
}
