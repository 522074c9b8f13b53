@testable import Cabinet
import Testing

/// Version 1 of a bookcase: a name and one long list.
final class BookcaseV1: StoredObject {
    override class var storedName: String { "Bookcase" }
    override class var version: UInt8 { 1 }
    @Stored var name = ""
    @Stored var songs = StoredList<Song>()
    override func read(from buffer: inout DataBuffer) throws {
        name = try buffer.readString()
        songs = try buffer.readList(of: Song.self)
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(name)
        buffer.writeList(songs)
    }
}

/// Version 2: a label, and a new list written before the old one, so the old
/// list moves from slot 0 to slot 1 when it is long and the new one too.
final class BookcaseV2: StoredObject {
    override class var storedName: String { "Bookcase" }
    override class var version: UInt8 { 2 }
    @Stored var name = ""
    @Stored var label = ""
    @Stored var front = StoredList<Song>()
    @Stored var songs = StoredList<Song>()
    override func read(from buffer: inout DataBuffer) throws {
        name = try buffer.readString()
        if buffer.version >= 2 {
            label = try buffer.readString()
            front = try buffer.readList(of: Song.self)
        }
        songs = try buffer.readList(of: Song.self)
        // The upgrade's change: the first 300 songs are also kept in front (out of line too).
        if buffer.version < 2 { front = StoredList(songs.prefix(300)) }
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(name)
        buffer.writeString(label)
        buffer.writeList(front)
        buffer.writeList(songs)
    }
}

/// Version 2 that only adds a label: its list stays where it is.
final class BookcaseLabelled: StoredObject {
    override class var storedName: String { "Bookcase" }
    override class var version: UInt8 { 2 }
    @Stored var name = ""
    @Stored var label = ""
    @Stored var songs = StoredList<Song>()
    override func read(from buffer: inout DataBuffer) throws {
        name = try buffer.readString()
        if buffer.version >= 2 { label = try buffer.readString() }
        songs = try buffer.readList(of: Song.self)
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(name)
        buffer.writeString(label)
        buffer.writeList(songs)
    }
}

@Suite struct StoredListUpgradeTests {
    /// A store with two version-1 bookcases of 1,000 songs each; returns their songs' row IDs.
    private func versionOneStore(_ fixture: StoreFixture, options: ObjectStore.Options) throws -> [[UInt32]] {
        let store = try fixture.open(Song.self, BookcaseV1.self, options: options)
        defer { store.close() }
        var expected: [[UInt32]] = []
        for _ in 0..<2 {
            let bookcase = BookcaseV1()
            store.insert(bookcase)
            let songs = (0..<1_000).map { i in let song = Song(); song.title = "S\(i)"; store.insert(song); return song }
            bookcase.songs = StoredList(songs)
            try store.save()
            expected.append(bookcase.songs.map(\.rowID))
        }
        return expected
    }

    private func listRecords(_ store: ObjectStore) throws -> Int {
        try #require(try store.listsTable(creating: false)).recordCount
    }

    /// Whether row `row` of `type`'s file keeps a list out of line (holds the marker).
    private func keepsListOutOfLine(_ store: ObjectStore, _ type: StoredObject.Type, row: UInt32) throws -> Bool {
        let record = try #require(try store.entry(for: type)!.table.withValue(forRow: row) { Array($0) })
        return record.indices.dropLast(3).contains { record[$0...($0 + 3)].allSatisfy { $0 == 0xFF } }
    }

    @Test(arguments: BackendKind.allCases, [true, false])
    func anUpgradeKeepsAnOutOfLineListOutOfLineAndOrphansNothing(_ kind: BackendKind, _ versioned: Bool) throws {
        let fixture = try StoreFixture(kind)
        let options = ObjectStore.Options(perInstanceVersioning: versioned)
        let expected = try versionOneStore(fixture, options: options)
        let store = try fixture.open(Song.self, BookcaseLabelled.self, options: options)
        defer { store.close() }
        let before = try listRecords(store)
        #expect(before == 2 * 4, "per list: a root record, an inner node and two leaves")
        #expect(try store.upgradeAll(BookcaseLabelled.self, batchSize: 1) == 2)
        #expect(try !store.needsUpgrade(BookcaseLabelled.self))
        #expect(try listRecords(store) == before, "the trees are kept as they were, nothing left over")
        #expect(try keepsListOutOfLine(store, BookcaseLabelled.self, row: 2))
        #expect(try StoreVerifier.verify(store.backend).isEmpty)
        let bookcases = try store.fetchAll(BookcaseLabelled.self).sorted { $0.rowID < $1.rowID }
        #expect(bookcases.map { $0.songs.map(\.rowID) } == expected)
        #expect(bookcases[0].songs[999].title == "S999")
        // Saving after the upgrade changes only what changed.
        bookcases[0].label = "saved"
        try store.save()
        #expect(try listRecords(store) == before)
        #expect(try StoreVerifier.verify(store.backend).isEmpty)
    }

    @Test(arguments: BackendKind.allCases)
    func anUpgradeThatMovesAListToAnotherSlotMovesItsTreeWithIt(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let expected = try versionOneStore(fixture, options: .init())
        do {
            let store = try fixture.open(Song.self, BookcaseV2.self)
            #expect(try store.upgradeAll(BookcaseV2.self) == 2)
            // Two lists per owner now: 1,000 songs (4 records) and 300 (root record and one leaf).
            #expect(try listRecords(store) == 2 * (4 + 2))
            #expect(try StoreVerifier.verify(store.backend).isEmpty)
            store.close()
        }
        let store = try fixture.open(Song.self, BookcaseV2.self)
        defer { store.close() }
        let bookcases = try store.fetchAll(BookcaseV2.self).sorted { $0.rowID < $1.rowID }
        #expect(bookcases.map { $0.songs.map(\.rowID) } == expected)
        #expect(bookcases.map { $0.front.map(\.rowID) } == expected.map { Array($0.prefix(300)) })
        let classID = try #require(store.entry(for: BookcaseV2.self)).metadata.classID
        let lists = try #require(try store.listsTable(creating: false))
        let root = try ListWriter.readRoot(ListScope(classID: classID, row: 2, slot: 1), in: lists, format: store.recordFormat,
                                           owner: RecordLocation(file: "test"))
        #expect(root?.count == 1_000, "the old list is in slot 1 now")
        // Upgrading again finds nothing to do and writes nothing.
        #expect(try store.upgradeAll(BookcaseV2.self) == 0)
        #expect(try listRecords(store) == 2 * (4 + 2))
    }
}
