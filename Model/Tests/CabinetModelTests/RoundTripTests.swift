import Cabinet
import CabinetModel
import Foundation
import Testing

/// A @StoredModel class and its hand-written twin write the same bytes, and
/// each reads what the other wrote, on every backend.
@Suite struct RoundTripTests {
    @Test(arguments: BackendKind.allCases)
    func macroAndHandWrittenClassesWriteTheSameRecords(_ kind: BackendKind) throws {
        let directory = try TemporaryDirectory()
        let macro = try kind.newBackend(in: directory, name: "macro")
        let hand = try kind.newBackend(in: directory, name: "hand")
        let expected = try save(MacroEverything.self, into: macro)
        #expect(try save(HandEverything.self, into: hand) == expected)
        for table in ["Everything", "Tag"] {
            let macroRecords = try objectRecords(table, in: kind.reopen(macro))
            #expect(macroRecords.count == (table == "Tag" ? 3 : 2))
            #expect(macroRecords == (try objectRecords(table, in: kind.reopen(hand))))
        }
    }

    @Test(arguments: BackendKind.allCases)
    func eachReadsWhatTheOtherWrote(_ kind: BackendKind) throws {
        let directory = try TemporaryDirectory()
        let macro = try kind.newBackend(in: directory, name: "macro")
        let hand = try kind.newBackend(in: directory, name: "hand")
        let written = try save(MacroEverything.self, into: macro)
        #expect(try save(HandEverything.self, into: hand) == written)
        #expect(try summaries(HandEverything.self, in: kind.reopen(macro)) == written)
        #expect(try summaries(MacroEverything.self, in: kind.reopen(hand)) == written)
    }

    @Test func aTransientPropertyIsNeitherWrittenNorTracked() throws {
        let object = MacroEverything()
        var before = DataBuffer()
        object.write(to: &before)
        object.scratch = 7
        var after = DataBuffer()
        object.write(to: &after)
        #expect(before == after)
    }

    /// Saves three tags and two objects, a default one and a filled one; returns their summaries.
    private func save<E: EverythingModel>(_ type: E.Type, into backend: any StorageBackend) throws -> [String] {
        let store = try ObjectStore(backend: backend)
        defer { store.close() }
        try store.register(E.Tag.self, E.self)
        let tags = (0..<3).map { index -> E.Tag in
            let tag = E.Tag()
            tag.label = "tag \(index)"
            store.insert(tag)
            return tag
        }
        let plain = E()
        let full = E()
        store.insert(plain)
        store.insert(full)
        full.fill(tags: tags, other: plain)
        try store.save()
        return [plain.summary, full.summary]
    }

    private func summaries<E: EverythingModel>(_ type: E.Type, in backend: any StorageBackend) throws -> [String] {
        let store = try ObjectStore(backend: backend)
        defer { store.close() }
        try store.register(E.Tag.self, E.self)
        return try store.fetchAll(E.self).sorted { $0.rowID < $1.rowID }.map(\.summary)
    }

    /// The records of a class's objects by row (row 1, the class's metadata, holds a random salt).
    private func objectRecords(_ table: String, in backend: any StorageBackend) throws -> [UInt32: [UInt8]] {
        defer { backend.close() }
        var records: [UInt32: [UInt8]] = [:]
        try backend.openTable(named: table).forEach { key, value in
            let row = key.loadUnaligned(as: UInt32.self)
            if UInt32(littleEndian: row) > 1 { records[UInt32(littleEndian: row)] = Array(value) }
            return true
        }
        return records
    }
}
