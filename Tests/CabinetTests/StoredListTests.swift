@testable import Cabinet
import CabinetStorage
import Testing

/// A shelf of songs: two ordered to-many relationships kept as `StoredList`s.
final class Shelf: StoredObject {
    @Stored var name = ""
    @Stored var songs = StoredList<Song>()
    @Stored var extras = StoredList<Song>()

    override func read(from buffer: inout DataBuffer) throws {
        name = try buffer.readString()
        songs = try buffer.readList(of: Song.self)
        extras = try buffer.readList(of: Song.self)
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(name)
        buffer.writeList(songs)
        buffer.writeList(extras)
    }
    override func dissolveAllRelationships() {
        songs = []
        extras = []
    }
}

/// Damages one leaf of a list (not a root): flips a byte of its row IDs.
func damageOneLeaf(of lists: any StorageTable) throws {
    var leafKey: [UInt8]?
    try lists.forEach { key, value in
        if key.count == 22 && value.first == ListRecords.leafKind { leafKey = Array(key); return false }
        return true
    }
    let key = try #require(leafKey)
    var bytes = try #require(try key.withUnsafeBytes { k in try lists.withValue(forKey: k) { Array($0) } })
    bytes[7] ^= 0xFF
    try key.withUnsafeBytes { k in try bytes.withUnsafeBytes { try lists.setValue($0, forKey: k) } }
}

/// Records the size of every journal a save writes: everything a save of
/// several files writes goes through it first, so it is the save's byte count.
final class JournalMeasuringBackend: ForwardingBackend {
    final class Services: ForwardingServices {
        var journalSizes: [Int] = []
        override func writeJournal(_ bytes: [UInt8]) throws {
            journalSizes.append(bytes.count)
            try super.writeJournal(bytes)
        }
    }
    private lazy var measuring = Services(inner.services)
    override var services: any StoreServices { measuring }
    var journalSizes: [Int] { measuring.journalSizes }
}

@Suite struct StoredListTests {
    private func songs(_ count: Int, in store: ObjectStore) -> [Song] {
        (0..<count).map { i in let song = Song(); song.title = "S\(i)"; store.insert(song); return song }
    }

    private func rows(_ list: StoredList<Song>) -> [UInt32] { list.map(\.rowID) }

    @Test(arguments: BackendKind.allCases, [0, 3, 256, 257, 5_000])
    func aListReadsBackAsItWasSavedAtAnySize(_ kind: BackendKind, _ size: Int) throws {
        let fixture = try StoreFixture(kind)
        var expected: [UInt32] = []
        do {
            let store = try fixture.open(Song.self, Shelf.self)
            let shelf = Shelf()
            store.insert(shelf)
            shelf.songs = StoredList(songs(size, in: store))
            shelf.extras = StoredList(songs(3, in: store))
            try store.save()
            expected = rows(shelf.songs)
            store.close()
        }
        let store = try fixture.open(Song.self, Shelf.self)
        defer { store.close() }
        let shelf = try #require(try store.fetch(Shelf.self, rowID: 2))
        #expect(shelf.songs.count == size)
        #expect(rows(shelf.songs) == expected)
        #expect(shelf.songs.last?.title == (size == 0 ? nil : "S\(size - 1)"), "elements are the store's objects")
        #expect(shelf.extras.count == 3)
    }

    @Test func appendingToAHundredThousandWritesAFewKilobytesNotTheList() throws {
        let directory = try TemporaryDirectory()
        let backend = JournalMeasuringBackend(try TokyoCabinetBackend(directory: directory.path + "/store"))
        let store = try ObjectStore(backend: backend)
        defer { store.close() }
        try store.register(Song.self, Shelf.self)
        let shelf = Shelf()
        store.insert(shelf)
        shelf.songs = StoredList(songs(100_000, in: store))
        try store.save()
        let first = try #require(backend.journalSizes.last)
        #expect(first > 400_000, "the first save writes every row ID")
        for round in 0..<20 {
            let song = Song(); song.title = "new \(round)"
            store.insert(song)
            shelf.songs.append(song)
            try store.save()
            let size = try #require(backend.journalSizes.last)
            #expect(size < 12_000, "round \(round): an append wrote \(size) bytes")
        }
        #expect(shelf.songs.count == 100_020 && shelf.songs[100_019].title == "new 19")
        // Each append's save deleted the nodes it replaced (known from the read, not read again): no orphans.
        #expect(try StoreVerifier.verify(store.backend).isEmpty)
    }

    @Test(arguments: BackendKind.allCases)
    func insertsRemovalsAndReplacementsAnywhereSurviveAReopen(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        var model: [UInt32] = []
        do {
            let store = try fixture.open(Song.self, Shelf.self)
            let pool = songs(3_000, in: store)
            let shelf = Shelf()
            store.insert(shelf)
            shelf.songs = StoredList(pool[..<2_000])
            try store.save()
            model = pool[..<2_000].map(\.rowID)
            var generator = SystemRandomNumberGenerator()
            for step in 0..<600 {
                switch step % 3 {
                case 0:
                    let at = Int.random(in: 0...model.count, using: &generator)
                    let song = pool[2_000 + step]
                    shelf.songs.insert(song, at: at); model.insert(song.rowID, at: at)
                case 1:
                    let at = Int.random(in: 0..<model.count, using: &generator)
                    shelf.songs.remove(at: at); model.remove(at: at)
                default:
                    let at = Int.random(in: 0..<model.count, using: &generator)
                    shelf.songs[at] = pool[step]; model[at] = pool[step].rowID
                }
                if step % 50 == 0 { try store.save() }
            }
            try store.save()
            #expect(rows(shelf.songs) == model)
            store.close()
        }
        let store = try fixture.open(Song.self, Shelf.self)
        defer { store.close() }
        let shelf = try #require(try store.fetch(Shelf.self, rowID: 2))
        #expect(rows(shelf.songs) == model)
        #expect(try StoreVerifier.verify(store.backend).isEmpty)
    }

    @Test(arguments: BackendKind.allCases)
    func deletingTheOwnerOrShrinkingTheListLeavesNoNodesBehind(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open(Song.self, Shelf.self)
        defer { store.close() }
        let all = songs(2_000, in: store)
        try store.save()
        let lists = try #require(try store.listsTable(creating: false))
        #expect(try lists.recordCount == 0)
        let a = Shelf(), b = Shelf()
        store.insert(a); store.insert(b)
        a.songs = StoredList(all)
        try store.save()
        #expect(try lists.recordCount > 4, "a root and its nodes")
        b.extras = a.songs                                     // a copy into another owner: its own nodes
        try store.save()
        let both = try lists.recordCount
        store.delete(a)
        try store.save()
        #expect(try lists.recordCount == both / 2, "a's nodes went with it")
        #expect(rows(b.extras) == all.map(\.rowID))
        b.extras.removeSubrange(10...)                         // inline again: the tree goes
        try store.save()
        #expect(try lists.recordCount == 0)
        #expect(rows(b.extras) == all[..<10].map(\.rowID))
    }

    @Test func aCopyTakenBeforeTheListWasSavedAgainIsRefusedNotSavedHalf() throws {
        let fixture = try StoreFixture(.tokyoCabinet)
        do {
            let store = try fixture.open(Song.self, Shelf.self)
            let shelf = Shelf(); store.insert(shelf)
            shelf.songs = StoredList(songs(5_000, in: store))
            try store.save()
            store.close()
        }
        let store = try fixture.open(Song.self, Shelf.self)
        defer { store.close() }
        let shelf = try #require(try store.fetch(Shelf.self, rowID: 2))
        let old = shelf.songs                                  // only its root is loaded
        shelf.songs = StoredList(shelf.songs.reversed())      // every node replaced
        try store.save()
        shelf.songs = old
        #expect(errorCode(of: { try store.save() }) == .staleList)
        #expect(store.hasUnsavedChanges, "nothing written; the change is still pending")
        shelf.songs = StoredList(Array(shelf.songs.prefix(0)))
        try store.save()
    }

    @Test(arguments: BackendKind.allCases)
    func anElementInsertedAfterItWasAddedIsSavedAndANeverInsertedOneIsRefused(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open(Song.self, Shelf.self)
        defer { store.close() }
        let shelf = Shelf(); store.insert(shelf)
        shelf.songs = StoredList(songs(300, in: store))
        let late = Song(); late.title = "late"
        shelf.songs.append(late)
        store.insert(late)
        try store.save()
        #expect(shelf.songs.last === late)
        let never = Song()
        shelf.songs.insert(never, at: 5)
        #expect(errorCode(of: { try store.save() }) == .referenceToUninsertedObject)
        shelf.songs.remove(at: 5)
        try store.save()
        #expect(shelf.songs.count == 301)
    }

    @Test func aDamagedNodeIsReportedNeverGuessedAndTheOwnerIsNotSaved() throws {
        let fixture = try StoreFixture(.tokyoCabinet)
        do {
            let store = try fixture.open(Song.self, Shelf.self)
            let shelf = Shelf(); store.insert(shelf)
            shelf.songs = StoredList(songs(3_000, in: store))
            try store.save()
            try damageOneLeaf(of: try #require(try store.listsTable(creating: false)))
            store.close()
        }
        let store = try fixture.open(Song.self, Shelf.self)
        defer { store.close() }
        var reported: [CabinetError] = []
        store.faultErrorHandler = { reported.append($0) }
        let shelf = try #require(try store.fetch(Shelf.self, rowID: 2))
        #expect(shelf.songs.count == 3_000, "the count comes from the record")
        let titles = shelf.songs.map(\.title)
        #expect(reported.count == 1 && reported[0].code == .checksumMismatch)
        let placeholders = titles.filter(\.isEmpty).count
        #expect(placeholders > 0 && placeholders <= ListNode.leafCapacity, "one leaf's elements are empty placeholders")
        #expect(titles.enumerated().allSatisfy { $1.isEmpty || $1 == "S\($0)" }, "every other element is the right one")
        var copy = shelf.songs
        #expect(errorCode(of: { try copy.loadAll() }) == .checksumMismatch)
        shelf.name = "renamed"
        #expect(errorCode(of: { try store.save() }) == .checksumMismatch)
    }

    @Test func aNodeThatNamesItselfEndsInAnErrorNotAnEndlessRead() throws {
        let fixture = try StoreFixture(.tokyoCabinet)
        do {
            let store = try fixture.open(Song.self, Shelf.self)
            let shelf = Shelf(); store.insert(shelf)
            shelf.songs = StoredList(songs(3_000, in: store))
            try store.save()
            // The root node becomes an inner node whose one child is itself.
            let lists = try #require(try store.listsTable(creating: false))
            let scope = ListScope(classID: store.entry(for: Shelf.self)!.metadata.classID, row: 2, slot: 0)
            let root = try #require(try ListWriter.readRoot(scope, in: lists, format: store.recordFormat, owner: RecordLocation(file: "test")))
            let looping = ListNode(children: [ListChild(count: 3_000, id: root.root)])
            let bytes = ListRecords.encode(looping, rowIDs: [], childIDs: [root.root], format: store.recordFormat)
            try withRecordBytes(scope.nodeKey(root.root), bytes) { key, value in try lists.setValue(value!, forKey: key) }
            store.close()
        }
        let store = try fixture.open(Song.self, Shelf.self)
        defer { store.close() }
        var reported: [CabinetError] = []
        store.faultErrorHandler = { reported.append($0) }
        let shelf = try #require(try store.fetch(Shelf.self, rowID: 2))
        #expect(shelf.songs[10].title == "", "a placeholder, not a hang or a crash")
        #expect(reported.map(\.code) == [.malformedRecord])
        shelf.songs = []
        #expect(errorCode(of: { try store.save() }) == .malformedRecord, "deleting the looping tree stops too")
    }

    @Test func undoTakesAnAppendBack() throws {
        let fixture = try StoreFixture(.tokyoCabinet)
        let store = try fixture.open(Song.self, Shelf.self)
        defer { store.close() }
        store.undoManager.isEnabled = true
        let shelf = Shelf(); store.insert(shelf)
        shelf.songs = StoredList(songs(1_000, in: store))
        try store.save()
        let before = rows(shelf.songs)
        store.undoManager.beginGroup()
        let song = Song(); store.insert(song)
        shelf.songs.append(song)
        store.undoManager.endGroup()
        try store.save()
        try store.undoManager.undo()
        try store.save()
        #expect(rows(shelf.songs) == before)
        #expect(try StoreVerifier.verify(store.backend).isEmpty)
    }

    @Test func aPlainStoreKeepsEveryListInItsRecordReadableAsReferences() throws {
        let fixture = try StoreFixture(.tokyoCabinet)
        let store = try fixture.open(Song.self, Shelf.self, options: .init(recordFormat: .plain))
        defer { store.close() }
        let shelf = Shelf(); store.insert(shelf)
        shelf.songs = StoredList(songs(1_000, in: store))
        try store.save()
        #expect(try store.listsTable(creating: false) == nil)
        var record = try #require(try store.entry(for: Shelf.self)!.table.withValue(forRow: 2) { DataBuffer(bytes: $0) })
        record.context = RecordContext(resolver: store.resolver, location: RecordLocation(file: "test"))
        _ = try record.readUInt8()   // the version byte
        _ = try record.readString()
        #expect(try record.readReferences(to: Song.self).map(\.rowID) == rows(shelf.songs), "BNRPersistence's layout")
    }

    @Test func aPlaylistWrittenAsReferencesReadsAsAStoredList() throws {
        var bytes = DataBuffer()
        bytes.writeString("old")
        bytes.writeUInt32(3); bytes.writeUInt32(3); bytes.writeUInt32(0); bytes.writeUInt32(4)
        let fixture = try StoreFixture(.memory)
        let store = try fixture.open(Song.self, Shelf.self)
        defer { store.close() }
        _ = songs(3, in: store)
        try store.save()
        var record = bytes
        record.context = RecordContext(resolver: store.resolver, location: RecordLocation(file: "test"))
        _ = try record.readString()
        let list = try record.readList(of: Song.self)
        #expect(list.map(\.rowID) == [3, 4], "nil entries left out, as readReferences does")
    }
}

