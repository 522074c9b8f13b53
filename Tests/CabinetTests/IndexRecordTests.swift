@testable import Cabinet
import CabinetStorage
import Testing

/// The bytes of an index file's row records and their varints: what goes in
/// comes out, and damage is an error, never a trap.
@Suite struct IndexRecordTests {
    private let location = RecordLocation(file: "test")

    @Test func varintsRoundTripAndRefuseWhatNoEncodingMakes() {
        for value: UInt64 in [0, 1, 127, 128, 300, 16_383, 16_384, UInt64(UInt32.max), .max] {
            var bytes: [UInt8] = []
            Varint.append(value, to: &bytes)
            var offset = 0
            #expect(bytes.withUnsafeBytes { Varint.read($0, at: &offset) } == value && offset == bytes.count)
        }
        let refused: [[UInt8]] = [[], [0x80], [0xFF, 0xFF], [UInt8](repeating: 0xFF, count: 10) + [0x01], [UInt8](repeating: 0x80, count: 11)]
        for bytes in refused {
            var offset = 0
            #expect(bytes.withUnsafeBytes { Varint.read($0, at: &offset) } == nil && offset == 0, "\(bytes)")
        }
        var offset = 0
        #expect([UInt8]([0xAC, 0x02]).withUnsafeBytes { Varint.read($0, at: &offset, limit: 299) } == nil, "300 is above the limit")
    }

    @Test(arguments: [RecordFormat.checksummed, .plain])
    func rowRecordsRoundTrip(_ format: RecordFormat) throws {
        let entries = RowEntries(entries: [
            .init(index: 2, entry: IndexEntry(key: [0x51, 0x75, 0x00, 0x00])),           // a string: ends in 0
            .init(index: 3, entry: IndexEntry(key: [0])),                                // nil
            .init(index: 4, entry: IndexEntry(key: [0x80, 0, 0, 7])),                    // a number, no 0 at the end
            .init(index: 5, entry: IndexEntry(key: Array(repeating: 0x61, count: 300) + [0], value: [3, 1, 200, 1])),
            .init(index: 5, entry: IndexEntry(key: [0x62, 0], value: [0])),
        ])
        let bytes = entries.encoded(format: format)
        #expect(try bytes.withUnsafeBytes { try RowEntries.decode($0, format: format, location: location) } == entries)
        #expect(try [UInt8]().withUnsafeBytes { try RowEntries.decode($0, format: .plain, location: location) } == RowEntries(entries: []))
    }

    @Test func damagedRowRecordsAreErrors() throws {
        let damaged: [[UInt8]] = [
            [1, 0],                    // an index number below the first
            [2],                       // cut short before the shape
            [2, 0x10],                 // a key of 4 bytes, none there
            [2, 0x05, 0x61],           // a value marked, none there
            [2, 0x05, 0x61, 0x00],     // a value marked, and empty
            [2, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01],   // a length past the record
        ]
        for bytes in damaged {
            #expect(throws: CabinetError.self, "\(bytes)") {
                try bytes.withUnsafeBytes { _ = try RowEntries.decode($0, format: .plain, location: location) }
            }
        }
        var good = RowEntries(entries: [.init(index: 2, entry: IndexEntry(key: [1, 2]))]).encoded(format: .checksummed)
        good[1] ^= 1
        #expect(throws: CabinetError.self) { try good.withUnsafeBytes { _ = try RowEntries.decode($0, format: .checksummed, location: location) } }
    }
}

/// The tokenizer's ASCII path finds what its Unicode path finds.
@Suite struct TokenizerPathTests {
    @Test func asciiTextTokenizesAsTheScalarPathDoes() throws {
        var random = SeededRandom(11)
        let alphabet = Array("aZ09 '.,-\t\n!x'yQ".utf8)
        var texts = ["", "'", "a'", "'a", "don't", "Don't Stop Me Now", "rock 'n' roll", "x''y", "A1 b2", "   ", "l'ete d'or"]
        for _ in 0..<2_000 {
            texts.append(String(decoding: (0..<Int(random.next() % 24)).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }, as: UTF8.self))
        }
        for text in texts {
            #expect(FullTextTokenizer.asciiTokens(of: text) == FullTextTokenizer.scalarTokens(of: text, forQuery: false), "\(text)")
        }
        #expect(FullTextTokenizer.asciiTokens(of: "Café") == nil)
    }
}
