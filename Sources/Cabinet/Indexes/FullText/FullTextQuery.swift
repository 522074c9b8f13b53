/// A full-text index's entries and queries (``StoredIndex/fullText(_:named:)``,
/// ``ObjectStore/search(_:matching:limit:)``).
///
/// An entry is one word of one object: its key the folded word's UTF-8 and a 0
/// byte (no word holds one, so no word's key is a prefix of another's), its
/// value the word's positions in the text (each the distance from the one
/// before, as a LEB128 varint).
enum FullTextIndexing {
    /// The entries of `text`: one per distinct word, in the words' byte order.
    static func entries(of text: String) -> [IndexEntry] {
        var positions: [String: [Int]] = [:]
        for token in FullTextTokenizer.tokens(of: text) { positions[token.text, default: []].append(token.position) }
        return positions.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }.map { word in
            IndexEntry(key: key(of: word), value: encode(positions[word]!))
        }
    }

    static func key(of word: String) -> [UInt8] { Array(word.utf8) + [0] }

    static func encode(_ positions: [Int]) -> [UInt8] {
        var bytes: [UInt8] = []
        var last = 0
        for position in positions {
            Varint.append(UInt64(position - last), to: &bytes)
            last = position
        }
        return bytes
    }

    /// No text has more words than this: a position past it is damage.
    static let largestPosition = Int(Int32.max)

    /// The positions in an entry's value; `nil` for bytes no encoding makes (a
    /// damaged entry: a varint too long or cut short, a position past ``largestPosition``).
    static func decode(_ bytes: UnsafeRawBufferPointer) -> [Int]? {
        var positions: [Int] = []
        var value = 0, shift = 0, last = 0
        for byte in bytes {
            guard shift < 35 else { return nil }
            value |= Int(byte & 0x7F) << shift
            if byte & 0x80 == 0 {
                last += value
                guard last <= largestPosition else { return nil }
                positions.append(last)
                value = 0
                shift = 0
            } else {
                shift += 7
            }
        }
        return shift == 0 ? positions : nil
    }
}

/// A search's terms: every one must match.
///
/// - `walking sunshine`: each word, anywhere (whole words: `walk` does not find `walking`);
/// - `sunsh*`: any word that starts so;
/// - `"on sunshine"`: the words next to each other, in that order;
/// - Chinese or Japanese without quotes: the characters next to each other.
struct FullTextQuery {
    enum Term: Equatable {
        case word(String)
        case prefix(String)
        /// Words at these distances from the first.
        case phrase([FullTextTokenizer.Token])
    }

    private(set) var terms: [Term]
    /// The terms' bytes, and whether each is a whole word (not a prefix), for
    /// ``isMatched(byASCII:)``; `nil` for a query with a phrase or more than 64 terms.
    private(set) var plainTerms: [(bytes: [UInt8], whole: Bool)]?

    init(_ text: String) {
        terms = []
        var rest = Substring(text)
        while let quote = rest.firstIndex(of: "\"") {
            terms += FullTextQuery.unquoted(rest[..<quote])
            let after = rest[rest.index(after: quote)...]
            let close = after.firstIndex(of: "\"") ?? after.endIndex
            terms += FullTextQuery.phrase(String(after[..<close]))
            rest = close == after.endIndex ? "" : after[after.index(after: close)...]
        }
        terms += FullTextQuery.unquoted(rest)
        plainTerms = terms.count > 64 ? nil : terms.reduce(into: []) { plain, term in
            switch term {
            case .word(let word): plain?.append((Array(word.utf8), true))
            case .prefix(let start): plain?.append((Array(start.utf8), false))
            case .phrase: plain = nil
            }
        }
    }

    private static func phrase(_ text: String) -> [Term] {
        let tokens = FullTextTokenizer.tokens(of: text, forQuery: true)
        guard let first = tokens.first else { return [] }
        if tokens.count == 1 { return [.word(first.text)] }
        return [.phrase(tokens.map { .init(text: $0.text, position: $0.position - first.position) })]
    }

    private static func unquoted(_ text: Substring) -> [Term] {
        var terms: [Term] = []
        for chunk in text.split(whereSeparator: \.isWhitespace) {
            let isPrefix = chunk.hasSuffix("*")
            var runs: [([Unicode.Scalar], Bool)] = []
            FullTextTokenizer.forEachRun(in: FullTextTokenizer.fold(String(isPrefix ? chunk.dropLast() : chunk))) { runs.append(($0, $1)) }
            for (offset, (run, isCJK)) in runs.enumerated() {
                let word = String(String.UnicodeScalarView(run))
                if !isCJK {
                    terms.append(isPrefix && offset == runs.count - 1 ? .prefix(word) : .word(word))
                } else if run.count == 1 {
                    terms.append(.prefix(word))
                } else {
                    terms += phrase(word)
                }
            }
        }
        return terms
    }
}

extension FullTextQuery {
    /// Whether an object whose entries in the index are `entries`
    /// (``FullTextIndexing/entries(of:)``) matches every term, as
    /// ``FullTextSearch`` finds it in the index: a word by its bytes, a prefix by
    /// any word whose bytes start so, a phrase by positions at its distances.
    /// The definition a search's faster check, ``isMatched(byText:)``, is tested
    /// against (`FullTextVouchTests`).
    func isMatched(by entries: [IndexEntry]) -> Bool {
        var positions: [[UInt8]: [Int]] = [:]
        for entry in entries {
            positions[Array(entry.key.dropLast())] = entry.value.withUnsafeBytes(FullTextIndexing.decode) ?? []
        }
        return terms.allSatisfy { term in
            switch term {
            case .word(let word):
                return positions[Array(word.utf8)] != nil
            case .prefix(let start):
                return positions.keys.contains { $0.starts(with: start.utf8) }
            case .phrase(let tokens):
                var starts: Set<Int>?
                for token in tokens {
                    let here = Set((positions[Array(token.text.utf8)] ?? []).map { $0 - token.position })
                    starts = starts.map { $0.intersection(here) } ?? here
                }
                return starts.map { !$0.isEmpty } ?? false
            }
        }
    }
}

extension FullTextQuery {
    /// ``isMatched(by:)`` of `text`'s entries, from its words alone: the same
    /// answer without making the entries (their keys, encoded positions and the
    /// lookup of them), which a search pays for every row it hands over.
    /// Words compare by their bytes, as the index's keys do.
    func isMatched(byText text: String) -> Bool {
        if let matched = isMatched(byASCII: text) { return matched }
        let tokens = FullTextTokenizer.tokens(of: text)
        func same(_ token: FullTextTokenizer.Token, _ word: String) -> Bool { token.text.utf8.elementsEqual(word.utf8) }
        return terms.allSatisfy { term in
            switch term {
            case .word(let word):
                return tokens.contains { same($0, word) }
            case .prefix(let start):
                return tokens.contains { $0.text.utf8.starts(with: start.utf8) }
            case .phrase(let phrase):
                guard let first = phrase.first else { return false }
                // Each phrase word's positions, one pass each: a long text with a common first word stays linear.
                let positions = phrase.map { word in Set(tokens.lazy.filter { same($0, word.text) }.map(\.position)) }
                return positions[0].contains { found in
                    let start = found - first.position
                    return zip(phrase, positions).allSatisfy { word, at in at.contains(start + word.position) }
                }
            }
        }
    }
}

extension FullTextQuery {
    /// ``isMatched(byText:)`` of an ASCII `text` (most titles and notes) for a
    /// query of words and prefixes, read byte by byte: the words
    /// ``FullTextTokenizer/forEachASCIIWord(in:_:)`` finds, as the index has them,
    /// compared in place instead of made into strings first. `nil` where it can't
    /// answer: a text that is not ASCII, a phrase, more than 64 terms.
    func isMatched(byASCII text: String) -> Bool? {
        guard let plainTerms else { return nil }
        var text = text
        return text.withUTF8 { bytes -> Bool? in
            let all: UInt64 = plainTerms.count == 64 ? ~0 : (1 << UInt64(plainTerms.count)) - 1
            var found: UInt64 = 0
            // Whether the folded word at `word` begins with `term` (and is no longer, for a whole word).
            func begins(_ word: Range<Int>, with term: [UInt8], whole: Bool) -> Bool {
                guard whole ? word.count == term.count : word.count >= term.count else { return false }
                for (offset, byte) in term.enumerated() where FullTextTokenizer.folded(bytes[word.lowerBound + offset]) != byte {
                    return false
                }
                return true
            }
            let ascii = FullTextTokenizer.forEachASCIIWord(in: bytes) { word in
                for (number, term) in plainTerms.enumerated() where found & (1 << UInt64(number)) == 0 {
                    if begins(word, with: term.bytes, whole: term.whole) { found |= 1 << UInt64(number) }
                }
                return found != all
            }
            return ascii ? found == all : nil
        }
    }
}
