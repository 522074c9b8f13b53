import Foundation

/// Splits text into the words a full-text index keeps, with their positions.
///
/// - Folded first (``fold(_:)``): compatibility forms become their plain ones
///   (`ｶﾀｶﾅ` is `カタカナ`, `ＡＢＣ` is `abc`, `x²` is `x2`, `Ⅻ` is `xii`), then
///   case and diacritics go (`Café` is `cafe`, `Straße` is `strasse`), and the
///   letters Unicode does not decompose are spelled plainly (`ø` is `o`, `œ` is `oe`).
/// - A word is a run of letters, digits and combining marks (an apostrophe
///   between two letters stays in it: `don't`, not between Chinese or Japanese
///   characters); everything else separates words.
/// - Chinese and Japanese (Han, Hiragana, Katakana), written without spaces, are
///   cut into overlapping pairs of characters (bigrams), as q-gram indexes do,
///   plus the run's last character alone: `東京タワー` is `東京 京タ タワ ワー ー`.
///   So any run of two or more characters is found as a phrase of its bigrams,
///   and a single character as the start of one.
///
/// Positions count words (and CJK characters) from 0, so a phrase is words at
/// consecutive positions.
enum FullTextTokenizer {
    struct Token: Equatable {
        var text: String
        var position: Int
    }

    /// The tokens of `text`, in order. A query's (`forQuery`) leave out the last
    /// character of a CJK run of two or more: its bigrams say it all, and the text
    /// has that character alone only where its own run ends.
    static func tokens(of text: String, forQuery: Bool = false) -> [Token] {
        if let ascii = asciiTokens(of: text) { return ascii }
        return scalarTokens(of: text, forQuery: forQuery)
    }

    /// ``tokens(of:forQuery:)`` by Unicode scalars: any text.
    static func scalarTokens(of text: String, forQuery: Bool) -> [Token] {
        var tokens: [Token] = []
        var position = 0
        forEachRun(in: fold(text)) { run, isCJK in
            if !isCJK {
                tokens.append(Token(text: String(String.UnicodeScalarView(run)), position: position))
                position += 1
                return
            }
            for offset in 0..<run.count {
                if forQuery && run.count > 1 && offset == run.count - 1 {
                    position += 1
                    continue
                }
                let end = min(offset + 2, run.count)
                tokens.append(Token(text: String(String.UnicodeScalarView(run[offset..<end])), position: position))
                position += 1
            }
        }
        return tokens
    }

    /// The tokens of an ASCII `text` (most titles and notes), read byte by byte:
    /// the same words ``scalarTokens(of:forQuery:)`` finds (ASCII has no CJK and
    /// nothing to fold but case), without a scalar array or Foundation; `nil` if
    /// `text` is not ASCII.
    static func asciiTokens(of text: String) -> [Token]? {
        var text = text
        return text.withUTF8 { bytes -> [Token]? in
            var tokens: [Token] = []
            let ascii = forEachASCIIWord(in: bytes) { word in
                let text = String(unsafeUninitializedCapacity: word.count) { out in
                    for i in word { out[i - word.lowerBound] = folded(bytes[i]) }
                    return word.count
                }
                tokens.append(Token(text: text, position: tokens.count))
                return true
            }
            return ascii ? tokens : nil
        }
    }

    /// Calls `body` with the byte range of each word of ASCII `bytes`, in order,
    /// until it returns false: a run of letters and digits, an apostrophe between
    /// two of them included. False if `bytes` are not all ASCII (`body` may have
    /// been called for the words before the first byte that is not).
    static func forEachASCIIWord(in bytes: UnsafeBufferPointer<UInt8>, _ body: (Range<Int>) -> Bool) -> Bool {
        func isWord(_ byte: UInt8) -> Bool {
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A)
        }
        var start = -1
        for i in 0..<bytes.count {
            let byte = bytes[i]
            guard byte < 0x80 else { return false }
            // An apostrophe between two word characters stays in the word.
            let inner = byte == 0x27 && i > 0 && i + 1 < bytes.count && isWord(bytes[i - 1]) && isWord(bytes[i + 1])
            if isWord(byte) || inner {
                if start < 0 { start = i }
            } else if start >= 0 {
                guard body(start..<i) else { return bytes[i...].allSatisfy { $0 < 0x80 } }
                start = -1
            }
        }
        if start >= 0 { _ = body(start..<bytes.count) }
        return true
    }

    /// An ASCII byte without case (the only folding ASCII needs).
    static func folded(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte }

    /// Which folding made an index's words (``IndexCatalog/folding``): a folding
    /// that changes makes other words of the same text, so an index built by
    /// another is built again. 1 was case and diacritics only; 2 adds the
    /// compatibility mapping and ``plainLetters``.
    static let foldingVersion: UInt8 = 2

    /// `text` in compatibility form (NFKC), without case or diacritics, a
    /// typographic apostrophe (’) as a plain one, and ``plainLetters`` spelled
    /// out; ASCII (most text) without Foundation's help.
    static func fold(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return text.lowercased() }
        let composed = text.precomposedStringWithCompatibilityMapping
        // Looked for first: a replacement costs more than the folding, and most text has no ’.
        let quotes = composed.unicodeScalars.contains("\u{2019}") ? composed.replacingOccurrences(of: "\u{2019}", with: "'") : composed
        let folded = quotes.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil).lowercased()
        guard folded.unicodeScalars.contains(where: { plainSpelling(of: $0) != nil }) else { return folded }
        var plain = String.UnicodeScalarView()
        for scalar in folded.unicodeScalars {
            if let spelled = plainSpelling(of: scalar) { plain.append(contentsOf: spelled.unicodeScalars) } else { plain.append(scalar) }
        }
        return String(plain)
    }

    /// Letters with a stroke, and ligatures, that have no decomposition for the
    /// diacritic folding to take apart (their capitals are folded to these first).
    static let plainLetters: [Unicode.Scalar: String] = [
        "æ": "ae", "œ": "oe", "ø": "o", "đ": "d", "ħ": "h", "ı": "i", "ł": "l", "ŧ": "t",
    ]

    /// `scalar` spelled plainly, if it is one of ``plainLetters`` (they lie in
    /// this range: most text is passed over without a lookup).
    private static func plainSpelling(of scalar: Unicode.Scalar) -> String? {
        (0xE6...0x167).contains(scalar.value) ? plainLetters[scalar] : nil
    }

    /// Calls `body` with each run of word characters (and whether it is CJK) in folded `text`.
    static func forEachRun(in text: String, _ body: ([Unicode.Scalar], Bool) -> Void) {
        let scalars = Array(text.unicodeScalars)
        var run: [Unicode.Scalar] = []
        var runIsCJK = false
        func flush() {
            if !run.isEmpty { body(run, runIsCJK) }
            run.removeAll(keepingCapacity: true)
        }
        for (offset, scalar) in scalars.enumerated() {
            let cjk = isCJK(scalar)
            if cjk || isWordScalar(scalar) || isInnerApostrophe(scalars, offset) {
                if !run.isEmpty && cjk != runIsCJK { flush() }
                runIsCJK = cjk
                run.append(scalar)
            } else {
                flush()
            }
        }
        flush()
    }

    private static func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.value < 0x80 {
            let byte = UInt8(scalar.value)
            return (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A)
        }
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .decimalNumber, .letterNumber, .otherNumber, .nonspacingMark, .spacingMark, .enclosingMark:
            return true
        default:
            return false
        }
    }

    /// An apostrophe with a word character on each side (`don't`, `l'été`; `’` is
    /// folded to `'`), neither Chinese nor Japanese: those runs are cut into
    /// pairs of characters, where an apostrophe would be a word of its own.
    private static func isInnerApostrophe(_ scalars: [Unicode.Scalar], _ offset: Int) -> Bool {
        guard scalars[offset] == "'", offset > 0, offset + 1 < scalars.count else { return false }
        let before = scalars[offset - 1], after = scalars[offset + 1]
        return isWordScalar(before) && isWordScalar(after) && !isCJK(before) && !isCJK(after)
    }

    /// Han, Hiragana and Katakana: scripts written without spaces between words.
    static func isCJK(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x3040...0x30FF, 0x31F0...0x31FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF,
             0xFF66...0xFF9F, 0x20000...0x3134F:
            return true
        default:
            return false
        }
    }
}
