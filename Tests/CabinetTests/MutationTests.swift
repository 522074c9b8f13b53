@testable import Cabinet
import CabinetStorage
import Foundation
import Testing

/// Deterministic fuzzing in `make test`: 100,000 mutated records, metadata rows
/// and journals go through the real decoders. Every outcome must be a value or a
/// thrown error: a crash fails the whole run.
@Suite struct MutationTests {
    /// xorshift64, seeded, so a failure can be replayed.
    struct Random {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return Int(state % UInt64(max(bound, 1)))
        }
    }

    /// Records of every test class, as a save writes them.
    private func sampleRecords(_ store: ObjectStore) throws -> [(StoredObject.Type, [UInt8])] {
        let song = Song(); song.title = "Žluťoučký 🐎"; song.seconds = 298
        let list = Playlist(); list.title = "Mix"; list.songs = [song, song]
        let node = Node(); node.label = "n"
        let album = Album(); album.name = "A"; album.opener = song; album.extras = [node, list, song]; album.rating = 4
        [song, list, node, album].forEach(store.insert)
        node.next = node
        return [song, list, node, album].map { object in
            var buffer = DataBuffer()
            buffer.writeUInt8(1)
            object.write(to: &buffer)
            return (type(of: object), buffer.allBytes)
        }
    }

    private func mutate(_ bytes: [UInt8], _ random: inout Random) -> [UInt8] {
        var result = bytes
        for _ in 0...random.next(3) {
            switch random.next(6) {
            case 0 where !result.isEmpty:     // flip a bit
                result[random.next(result.count)] ^= UInt8(1 << random.next(8))
            case 1 where !result.isEmpty:     // cut the end
                result.removeLast(random.next(result.count) + 1)
            case 2:                           // insert random bytes
                let at = random.next(result.count + 1)
                result.insert(contentsOf: (0..<(random.next(8) + 1)).map { _ in UInt8(random.next(256)) }, at: at)
            case 3 where !result.isEmpty:     // a huge or odd byte somewhere (lengths, counts, class IDs)
                result[random.next(result.count)] = [0xFF, 0x7F, 0x80, 0x00, 0x01][random.next(5)]
            case 4 where result.count >= 4:   // overwrite a 4-byte word
                let at = random.next(result.count - 3)
                for i in 0..<4 { result[at + i] = UInt8(random.next(256)) }
            default:                          // random bytes entirely
                result = (0..<random.next(40)).map { _ in UInt8(random.next(256)) }
            }
        }
        return result
    }

    @Test func oneHundredThousandMutatedRecordsNeverCrashTheDecoders() throws {
        // Plain records, so every mutation reaches the decoders (a checksum would stop nearly all).
        let store = try ObjectStore(backend: MemoryBackend(), options: .init(recordFormat: .plain))
        try store.register(Song.self, Playlist.self, Album.self, Node.self)
        store.undoManager.isEnabled = false
        let samples = try sampleRecords(store)
        var random = Random(state: 0x9E37_79B9_7F4A_7C15)
        var decoded = 0, refused = 0
        for round in 0..<100_000 {
            let (type, original) = samples[round % samples.count]
            let bytes = mutate(original, &random)
            guard let entry = store.entry(for: type) else { continue }
            let object = type.init()
            object.rowID = UInt32(10_000 + round)
            object.hasContent = false
            entry.adopt(object)
            var buffer = DataBuffer(bytes: bytes)
            do {
                try store.decode(&buffer, into: object, entry: entry)
                decoded += 1
            } catch is CabinetError {
                refused += 1
            }
            entry.release(object)
        }
        #expect(decoded + refused == 100_000)
        #expect(refused > 50_000, "most mutations must be caught")
        #expect(decoded > 1_000, "some mutations are still valid records")
        store.close()
    }

    @Test func mutatedMetadataRowsAndJournalsAreRefusedCleanly() throws {
        var random = Random(state: 42)
        let metadata = ClassMetadata.new(version: 1, classID: 3).bytes
        var journal = WriteBatch()
        RawTokyoCabinet.rowKey(2).withUnsafeBytes { k in [UInt8](repeating: 1, count: 30).withUnsafeBytes { journal.set($0, forKey: k, inTable: "Song") } }
        let journalBytes = journal.encoded()
        for _ in 0..<20_000 {
            let damaged = mutate(metadata, &random)
            _ = try? damaged.withUnsafeBytes { try ClassMetadata(bytes: $0, location: RecordLocation(file: "m")) }
            let cut = mutate(journalBytes, &random)
            var applied = 0
            if (try? WriteBatch.replay(cut, location: RecordLocation(file: "j")) { _, _, _ in applied += 1 }) == nil {
                #expect(applied == 0, "a damaged journal applies nothing")
            }
        }
    }

    @Test func inAChecksummedStoreEveryChangedRecordIsRefused() throws {
        let store = try ObjectStore(backend: MemoryBackend())
        #expect(store.recordFormat == .checksummed)
        try store.register(Song.self, Playlist.self, Album.self, Node.self)
        store.undoManager.isEnabled = false
        var random = Random(state: 7)
        for (type, plain) in try sampleRecords(store) {
            var sealed = DataBuffer(bytes: plain)
            sealed.appendTrailer(for: .checksummed)
            let original = sealed.allBytes
            for _ in 0..<5_000 {
                let bytes = mutate(original, &random)
                guard bytes != original, let entry = store.entry(for: type) else { continue }
                let object = type.init()
                object.rowID = 50_000
                object.hasContent = false
                entry.adopt(object)
                var buffer = DataBuffer(bytes: bytes)
                #expect(throws: CabinetError.self) { try store.decode(&buffer, into: object, entry: entry) }
                entry.release(object)
            }
        }
        store.close()
    }
}
