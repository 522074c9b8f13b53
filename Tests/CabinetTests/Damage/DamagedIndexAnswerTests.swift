@testable import Cabinet
import CabinetStorage
import Foundation
import Testing

/// An index entry damaged to name another row (issue 41, item 9c): a search or
/// a references query hands over no object whose saved record does not match,
/// it throws a `CabinetError` that says to reindex, as equality and range
/// queries do.
@Suite struct DamagedIndexAnswerTests {
    /// Two tracks ("alpha", "zebra"), each in a mix of its own, saved; the store closed.
    private func saved(_ kind: BackendKind) throws -> (StoreFixture, alpha: UInt32, zebra: UInt32, mixes: [UInt32]) {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open(Track.self, Mix.self)
        defer { store.close() }
        let alpha = Track("alpha", by: "Queen"), zebra = Track("zebra", by: "ABBA")
        let first = Mix(), second = Mix()
        first.tracks = [alpha]
        second.tracks = [zebra]
        for object in [alpha, zebra, first, second] as [StoredObject] { store.insert(object) }
        try store.save()
        return (fixture, alpha.rowID, zebra.rowID, [first.rowID, second.rowID])
    }

    /// Runs `change` on the index file of `className` in a transaction, below the store.
    private func damage(_ fixture: StoreFixture, _ className: String, _ change: (any OrderedStorageTable) throws -> Void) throws {
        let backend = try fixture.backend()
        defer { if fixture.kind != .memory { backend.close() } }   // the memory store lives on in its backend
        let index = try backend.openOrderedTable(named: className + ClassIndexes.suffix)
        try index.transaction { try change(index) }
    }

    private func indexNumber(_ store: ObjectStore, _ className: String, _ kind: StoredIndex.Kind) throws -> UInt8 {
        try #require(store.entriesByName[className]?.indexes?.declared.first { $0.index.kind == kind }?.number)
    }

    @Test(arguments: BackendKind.allCases)
    func aPostingBlockThatNamesAnotherRowIsAnErrorNotAMatch(_ kind: BackendKind) throws {
        let (fixture, alpha, zebra, _) = try saved(kind)
        var store = try fixture.open(Track.self, Mix.self)
        let number = try indexNumber(store, "Track", .fullText)
        #expect(try store.search(Track.self, matching: "zebra").map(\.rowID) == [zebra])
        store.close()
        // "zebra"'s block now names alpha's row (with alpha's positions, which decode).
        try damage(fixture, "Track") { index in
            let alphaBlock = IndexKeys.entryKey(index: number, value: FullTextIndexing.key(of: "alpha"), row: alpha)
            let block = try #require(try alphaBlock.withUnsafeBytes { key in try index.withValue(forKey: key) { Array($0) } })
            let zebraBlock = IndexKeys.entryKey(index: number, value: FullTextIndexing.key(of: "zebra"), row: zebra)
            #expect(try zebraBlock.withUnsafeBytes { try index.removeValue(forKey: $0) })
            let forged = IndexKeys.entryKey(index: number, value: FullTextIndexing.key(of: "zebra"), row: alpha)
            try forged.withUnsafeBytes { key in try block.withUnsafeBytes { try index.setValue($0, forKey: key) } }
        }
        store = try fixture.open(Track.self, Mix.self)
        defer { store.close() }
        let error = try #require(throws: CabinetError.self) { try store.search(Track.self, matching: "zebra") }
        #expect(error.code == .malformedRecord && error.description.contains("reindex"), "\(error)")
        #expect(try store.search(Track.self, matching: "alpha").map(\.rowID) == [alpha], "what the damage did not touch still answers")
        try store.reindex(Track.self)
        #expect(try store.search(Track.self, matching: "zebra").map(\.rowID) == [zebra])
    }

    @Test(arguments: BackendKind.allCases)
    func aReferencesEntryThatNamesAnotherRowIsAnErrorNotAMatch(_ kind: BackendKind) throws {
        let (fixture, alpha, _, mixes) = try saved(kind)
        var store = try fixture.open(Track.self, Mix.self)
        let number = try indexNumber(store, "Mix", .references)
        store.close()
        // An entry saying the second mix holds alpha, which its record does not.
        try damage(fixture, "Mix") { index in
            let forged = IndexKeys.entryKey(index: number, value: IndexKeys.rowBytes(alpha), row: mixes[1])
            try forged.withUnsafeBytes { key in try [UInt8]().withUnsafeBytes { try index.setValue($0, forKey: key) } }
        }
        store = try fixture.open(Track.self, Mix.self)
        defer { store.close() }
        let track = try #require(try store.fetch(Track.self, rowID: alpha))
        let error = try #require(throws: CabinetError.self) { try store.fetch(Mix.self, where: \.tracks, contains: track) }
        #expect(error.code == .malformedRecord && error.description.contains("reindex"), "\(error)")
        try store.reindex(Mix.self)
        #expect(try store.fetch(Mix.self, where: \.tracks, contains: track).map(\.rowID) == [mixes[0]])
    }
}
