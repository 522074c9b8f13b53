@testable import Cabinet
import Foundation
import Testing

/// Version 1 of a label: its name as typed.
final class LabelV1: StoredObject {
    override class var storedName: String { "Label" }
    @Stored var name = ""
    override class var indexes: [StoredIndex] { [.value(\LabelV1.name, named: "name")] }
    override func read(from buffer: inout DataBuffer) throws { name = try buffer.readString() }
    override func write(to buffer: inout DataBuffer) { buffer.writeString(name) }
}

/// Version 2 keeps names in capitals, and reads version 1's in capitals too.
final class LabelV2: StoredObject {
    override class var storedName: String { "Label" }
    override class var version: UInt8 { 2 }
    @Stored var name = ""
    override class var indexes: [StoredIndex] { [.value(\LabelV2.name, named: "name")] }
    override func read(from buffer: inout DataBuffer) throws {
        name = try buffer.readString()
        if buffer.version < 2 { name = name.uppercased() }
    }
    override func write(to buffer: inout DataBuffer) { buffer.writeString(name) }
}

/// Indexes where a store is used for real: across class versions, and in a StorePool's blocks.
@Suite struct IndexInUseTests {
    @Test(arguments: BackendKind.allCases)
    func aNewClassVersionRebuildsTheIndexesWithItsOwnReadingOfOldRecords(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        do {
            let store = try fixture.open(LabelV1.self)
            for name in ["queen", "abba", "queen"] { let label = LabelV1(); label.name = name; store.insert(label) }
            try store.save()
            #expect(try store.count(LabelV1.self, where: \.name, equals: "queen") == 2)
            store.close()
        }
        let options = ObjectStore.Options(perInstanceVersioning: true)
        let store = try fixture.open(LabelV2.self, options: options)
        defer { store.close() }
        #expect(try store.count(LabelV2.self, where: \.name, equals: "QUEEN") == 2, "built again by version 2's read(from:)")
        #expect(try store.count(LabelV2.self, where: \.name, equals: "queen") == 0)
        #expect(try store.upgradeAll(LabelV2.self) == 3)
        #expect(try store.fetch(LabelV2.self, where: \.name, equals: "ABBA").count == 1)
        #expect(try store.verifyIndexes().isEmpty)
    }

    @Test(arguments: BackendKind.allCases)
    func poolBlocksQueryWhatIsCommittedAndWhatTheirGroupStaged(_ kind: BackendKind) async throws {
        let directory = try TemporaryDirectory()
        let backend = try kind.newBackend(in: directory)
        let pool = try StorePool(backend: backend, classes: [Track.self, Mix.self])
        let first: UInt32 = try await pool.write { store in
            let track = Track("Walking on Sunshine", by: "Katrina", seconds: 240)
            store.insert(track)
            return track.rowID
        }
        // Writers queued together make one group: each sees the ones before it, in index order.
        async let second: [UInt32] = pool.write { store in
            let track = Track("Sunshine of Your Love", by: "Cream", seconds: 250)
            store.insert(track)
            try store.save()
            return try store.fetch(Track.self, where: \.seconds, in: 200...300).map(\.rowID)
        }
        async let third: [UInt32] = pool.write { store in
            let found = try store.search(Track.self, matching: "sunshine")
            let moved = try #require(try store.fetch(Track.self, rowID: first))
            moved.artist = "Katrina and the Waves"
            return found.map(\.rowID)
        }
        let (seenBySecond, seenByThird) = try await (second, third)
        #expect(seenBySecond.count == 2 && seenBySecond.first == first, "a block queries its own save, in value order")
        #expect(seenByThird.contains(first))
        let afterwards: ([UInt32], [UInt32], Int) = try await pool.read { store in
            (try store.fetch(Track.self, where: \.artist, equals: "Katrina and the Waves").map(\.rowID),
             try store.search(Track.self, matching: "sunshine").map(\.rowID),
             try store.count(Track.self, where: \.artist, equals: "Katrina"))
        }
        #expect(afterwards.0 == [first])
        #expect(afterwards.1.count == 2)
        #expect(afterwards.2 == 0, "the old entry went with the commit")
        let problems: Int = try await pool.read { store in try store.verifyIndexes().count }
        #expect(problems == 0)
        try await pool.close()
    }
}
