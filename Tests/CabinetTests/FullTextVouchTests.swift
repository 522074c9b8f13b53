@testable import Cabinet
import Testing

/// A search vouches for each row it hands over by matching the object's saved
/// text (`FullTextQuery.isMatched(byText:)`): it must answer exactly as the
/// match of the text's index entries does, or a true hit would be refused as
/// damage (or a damaged one let through).
@Suite struct FullTextVouchTests {
    private static let texts = [
        "Walking on Sunshine", "Sunshine of Your Love", "Walk on the Wild Side", "Café del Mar", "CAFE SOCIETY",
        "the the the end of the road", "on on on sunshine on", "", "   ", "don’t stop me now", "Ｆｕｌｌ ｗｉｄｔｈ",
        "東京タワーの夜景", "カタカナとｶﾀｶﾅ", "音楽 music 音", "a b c d e f a b c", "x",
        String(repeating: "word ", count: 300) + "needle in the haystack",
        "Don't Stop Me Now", "it's 4 O'Clock", "rock'n'roll 99 Luftballons", "'quoted' words' end'", "A1B2 x2 ZZ",
    ]
    private static let queries = [
        "walking", "walk", "walk*", "sun*", "sunshine walking", "\"on sunshine\"", "\"sunshine on\"", "\"the end\"",
        "\"the the\"", "\"on on sunshine\"", "cafe", "café", "CAFÉ del", "\"del mar\"", "don't", "full", "ｗｉｄｔｈ",
        "東京", "タワー", "夜景", "京タ", "カタカナ", "ｶﾀｶﾅ", "音", "音楽", "music 音楽", "\"a b c\"", "\"c a\"",
        "\"a b c d e f a\"", "x*", "needle", "\"in the haystack\"", "\"word needle\"", "\"haystack word\"", "nothing",
        "o*", "\"walking on\" sun*",
        "dont", "4", "o'clock", "o'c*", "rock'n'roll", "rock", "99*", "LUFT*", "quoted", "words", "a1b2", "zz x2", "end",
    ]

    @Test func theTextsMatchExactlyAsTheirIndexEntriesDo() {
        var matches = 0
        for text in Self.texts {
            let entries = FullTextIndexing.entries(of: text)
            for query in Self.queries {
                let parsed = FullTextQuery(query)
                let expected = parsed.isMatched(by: entries)
                #expect(parsed.isMatched(byText: text) == expected, "\(query) in \(text)")
                if expected { matches += 1 }
            }
        }
        // Enough of both answers for the comparison to mean something.
        #expect(matches > 40 && matches < Self.texts.count * Self.queries.count / 2)
    }

    /// The byte-by-byte reading answers the common case itself (so the comparison
    /// above tests it) and declines what it can't read.
    @Test func asciiTextsOfWordsAndPrefixesAreMatchedInPlace() {
        #expect(FullTextQuery("sun* walking").isMatched(byASCII: "Walking on Sunshine") == true)
        #expect(FullTextQuery("walk").isMatched(byASCII: "Walking on Sunshine") == false)
        #expect(FullTextQuery("don't").isMatched(byASCII: "Don't Stop Me Now") == true)
        #expect(FullTextQuery("\"on sunshine\"").isMatched(byASCII: "Walking on Sunshine") == nil)
        #expect(FullTextQuery("cafe").isMatched(byASCII: "Café del Mar") == nil)
        // Every term found before the first byte that is not ASCII: still declined.
        #expect(FullTextQuery("walking").isMatched(byASCII: "Walking on Café") == nil)
        #expect(FullTextQuery("walking").isMatched(byText: "Walking on Café") == true)
    }

    /// A query of up to 64 words and prefixes is matched in place; more are left to the tokens.
    @Test func aQueryOfMoreThan64TermsIsMatchedAsTheEntriesAre() {
        let words = (0..<65).map { "w\($0)" }
        let text = words.joined(separator: " ")
        let sixtyFour = FullTextQuery(words.prefix(64).joined(separator: " "))
        let sixtyFive = FullTextQuery(words.joined(separator: " "))
        #expect(sixtyFour.isMatched(byASCII: text) == true)
        #expect(sixtyFour.isMatched(byASCII: words.prefix(63).joined(separator: " ")) == false)
        #expect(sixtyFive.isMatched(byASCII: text) == nil)
        #expect(sixtyFive.isMatched(byText: text) == sixtyFive.isMatched(by: FullTextIndexing.entries(of: text)))
        #expect(sixtyFive.isMatched(byText: text))
    }
}
