@testable import Cabinet
import CabinetStorage
import Foundation
import Testing

/// An index file is answered from only while it holds what the class declares
/// now: words folded by this Cabinet's folding, values of the declared properties.
@Suite struct IndexIdentityTests {
    /// Replaces `row`'s words in `store`'s Track full-text index with `words` (at
    /// positions 0, 1, …) and writes the catalog as layout 3, as an earlier Cabinet did.
    private func makeEarlierFolding(_ store: ObjectStore, row: UInt32, words: [String]) throws {
        let indexes = try #require(store.entriesByName["Track"]?.indexes)
        let number = try #require(indexes.declared.first { $0.index.kind == .fullText }?.number)
        var entries = try #require(try indexes.recorded(row: row, in: indexes.table)).entries.filter { $0.index != number }
        for (position, word) in words.enumerated() {
            let entry = IndexEntry(key: FullTextIndexing.key(of: word), value: FullTextIndexing.encode([position]))
            entries.append(RowEntries.Entry(index: number, entry: entry))
        }
        let table = indexes.table
        try table.transaction {
            let write = IndexWrite(indexes, view: table)
            let sink: ClassIndexes.Sink = { key, value in try withRecordBytes(key, value) { try table.apply($1, forKey: $0) } }
            try write.row(row, entries: RowEntries(entries: entries), isNew: false, sink: sink)
            try write.finish(sink: sink)
            try writeCatalogOfLayout3(table, store)
        }
    }

    /// Writes `table`'s catalog again as layout 3 (without the folding byte), as Cabinet did before layout 4.
    private func writeCatalogOfLayout3(_ table: any OrderedStorageTable, _ store: ObjectStore) throws {
        var catalog = try #require(try IndexCatalog.read(from: table, format: store.recordFormat))
        catalog.layout = 3
        try IndexKeys.catalogKey.withUnsafeBytes { key in
            try catalog.encoded(format: store.recordFormat).withUnsafeBytes { try table.setValue($0, forKey: key) }
        }
    }

    @Test(arguments: BackendKind.allCases)
    func aFullTextIndexOfTheEarlierFoldingIsBuiltAgainBeforeItAnswers(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        var store = try fixture.open(Track.self, Mix.self)
        defer { store.close() }
        let katakana = Track("ｶﾀｶﾅ", by: "x"), plain = Track("plain", by: "x")
        store.insert(katakana)
        store.insert(plain)
        try store.save()
        // The earlier folding kept half-width katakana as it is: its pairs of characters.
        try makeEarlierFolding(store, row: katakana.rowID, words: ["ｶﾀ", "ﾀｶ", "ｶﾅ", "ﾅ"])
        #expect(try store.search(Track.self, matching: "カタカナ").isEmpty, "the earlier entries, as this open sees them")
        store.close()

        if kind == .tokyoCabinet {
            let reader = try ObjectStore(path: fixture.storePath, readOnly: true)
            defer { reader.close() }
            try reader.register(Track.self, Mix.self)
            let error = try #require(throws: CabinetError.self, "a reader does not answer from the earlier words") {
                try reader.search(Track.self, matching: "カタカナ")
            }
            #expect(error.code == .noSuchIndex && error.description.contains("folded by an earlier Cabinet")
                && error.description.contains("without readOnly"))
        }

        store = try fixture.open(Track.self, Mix.self)
        #expect(try store.search(Track.self, matching: "カタカナ").map(\.rowID) == [katakana.rowID], "built again at a writer's open")
        #expect(try store.search(Track.self, matching: "ｶﾀｶﾅ").map(\.rowID) == [katakana.rowID])
        let table = try #require(store.entriesByName["Track"]?.indexes?.table)
        let catalog = try #require(try IndexCatalog.read(from: table, format: store.recordFormat))
        #expect(catalog.layout == IndexCatalog.format && catalog.folding == FullTextTokenizer.foldingVersion)
        #expect(try store.verifyIndexes().isEmpty)
    }

    @Test(arguments: BackendKind.allCases)
    func anIndexFileWithoutFullTextOfTheEarlierCatalogLayoutIsKept(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        var store = try fixture.open(Song.self, Playlist.self, Album.self, Node.self, ArtistOnly.self)
        defer { store.close() }
        store.insert(ArtistOnly(artist: "Queen"))
        try store.save()
        let table = try #require(store.entriesByName["ArtistOnly"]?.indexes?.table)
        try table.transaction { try writeCatalogOfLayout3(table, store) }
        store.close()
        var built: [IndexBuildProgress] = []
        store = try fixture.open()
        store.indexBuildProgress = { built.append($0) }
        try store.register(ArtistOnly.self)
        #expect(built.isEmpty, "no words to fold again: the file stays as it is")
        #expect(try store.count(ArtistOnly.self, where: \.artist, equals: "Queen") == 1)
    }

    /// Tunes by two artists, and one whose title is an artist's name.
    private func seededTunes(_ fixture: StoreFixture) throws -> (queenTitle: UInt32, byQueen: [UInt32]) {
        let store = try fixture.open(TuneByArtist.self)
        defer { store.close() }
        var byQueen: [UInt32] = []
        for i in 0..<40 {
            let tune = TuneByArtist(title: "song \(i)", artist: i % 2 == 0 ? "Queen" : "Abba")
            store.insert(tune)
            if i % 2 == 0 { byQueen.append(tune.rowID) }
        }
        let queenTitle = TuneByArtist(title: "Queen", artist: "Abba")
        store.insert(queenTitle)
        try store.save()
        return (queenTitle.rowID, byQueen)
    }

    @Test(arguments: BackendKind.allCases)
    func anIndexReplacedAtTheSamePlaceIsBuiltAgainNotReadAsTheNewOne(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let (queenTitle, byQueen) = try seededTunes(fixture)
        var built: [IndexBuildProgress] = []
        var store = try fixture.open()
        store.indexBuildProgress = { built.append($0) }
        try store.register(TuneByTitle.self)
        #expect(try store.fetch(TuneByTitle.self, where: \.title, equals: "Queen").map(\.rowID) == [queenTitle], "title matches, never artist ones")
        #expect(try store.fetch(TuneByTitle.self, where: \.title, in: "song 0"..."song 1").map(\.title) == ["song 0", "song 1"])
        #expect(!built.isEmpty)
        #expect(try store.verifyIndexes().isEmpty)
        store.close()

        built = []
        store = try fixture.open()
        store.indexBuildProgress = { built.append($0) }
        try store.register(TuneByTitle.self)
        #expect(built.isEmpty, "the same index again: nothing to build")
        store.close()
        store = try fixture.open(TuneByArtist.self)
        defer { store.close() }
        #expect(try store.fetch(TuneByArtist.self, where: \.artist, equals: "Queen").map(\.rowID) == byQueen, "and back")
    }

    @Test func aReaderRefusesAnIndexReplacedAtTheSamePlaceAndSaysToOpenAsAWriter() throws {
        let fixture = try StoreFixture(.tokyoCabinet)
        _ = try seededTunes(fixture)
        let reader = try ObjectStore(path: fixture.storePath, readOnly: true)
        defer { reader.close() }
        try reader.register(TuneByTitle.self)
        let error = try #require(throws: CabinetError.self) { try reader.fetch(TuneByTitle.self, where: \.title, equals: "Queen") }
        #expect(error.code == .noSuchIndex && error.description.contains("other values") && error.description.contains("without readOnly"))
    }

    /// A store of tracks, mixes that list them and bins that hold them, with
    /// the index files of Mix and Bin removed (as `cabinet reindex STORE Mix` does).
    private func storeWithoutIndexFiles(_ kind: BackendKind) throws -> (StoreFixture, track: Track, mix: Mix, bin: Bin) {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open(Track.self, Mix.self, Bin.self)
        defer { store.close() }
        let track = Track("song", by: "Queen"), mix = Mix(), bin = Bin()
        mix.tracks = [track]
        bin.name = "vinyl"
        bin.items = [track]
        [track, mix, bin].forEach(store.insert)
        try store.save()
        try store.dropIndexes(ofClass: "Mix")
        try store.dropIndexes(ofClass: "Bin")
        return (fixture, track, mix, bin)
    }

    @Test(arguments: BackendKind.allCases)
    func anIndexIsBuiltOnlyOnceTheClassesItsRecordsReferToAreRegistered(_ kind: BackendKind) throws {
        let (fixture, track, mix, bin) = try storeWithoutIndexFiles(kind)
        var store = try fixture.open(Mix.self, Bin.self)
        defer { store.close() }
        // Their records refer to Track (Mix by type, Bin by class ID): not read yet, so not built yet.
        let waiting = try #require(throws: CabinetError.self) { try store.fetch(Bin.self, where: \.name, equals: "vinyl") }
        #expect(waiting.code == .noSuchIndex && waiting.description.contains("Track") && waiting.description.contains("register"))
        try store.register(Track.self)
        #expect(try store.fetch(Mix.self, where: \.tracks, contains: track).map(\.rowID) == [mix.rowID])
        #expect(try store.fetch(Bin.self, where: \.name, equals: "vinyl").map(\.rowID) == [bin.rowID])
        store.close()
        store = try fixture.open(Track.self, Mix.self, Bin.self)
        #expect(try store.fetch(Mix.self, where: \.tracks, contains: track).map(\.rowID) == [mix.rowID], "and kept")
        #expect(try store.verifyIndexes().isEmpty)
    }

    @Test func theToolsReindexThenAnOpenThatRegistersTheReferencedClassLastFindsEveryRow() throws {
        let (fixture, track, mix, bin) = try storeWithoutIndexFiles(.tokyoCabinet)
        do {
            let store = try fixture.open(Track.self, Mix.self, Bin.self)
            store.close()
        }
        let reindex = try run(cabinetToolPath, ["reindex", fixture.storePath, "Bin"])
        #expect(reindex.status == 0)
        let store = try fixture.open(Bin.self, Mix.self, Track.self)
        defer { store.close() }
        #expect(try store.fetch(Bin.self, where: \.name, equals: "vinyl").map(\.rowID) == [bin.rowID])
        #expect(try store.fetch(Mix.self, where: \.tracks, contains: track).map(\.rowID) == [mix.rowID])
        #expect(try StoreVerifier.verify(store.backend).isEmpty && store.verifyIndexes().isEmpty)
    }

    @Test func reindexSaysWhichClassItNeedsRatherThanBuildFromAPartialRead() throws {
        let (fixture, _, _, _) = try storeWithoutIndexFiles(.tokyoCabinet)
        let store = try fixture.open(Track.self, Mix.self, Bin.self)
        store.close()
        let partial = try fixture.open(Bin.self)
        defer { partial.close() }
        let error = try #require(throws: CabinetError.self) { try partial.reindex(Bin.self) }
        #expect(error.code == .classNotRegistered && error.description.contains("Track"))
        let query = try #require(throws: CabinetError.self, "the file the failed build emptied is not answered from") {
            try partial.fetch(Bin.self, where: \.name, equals: "vinyl")
        }
        #expect(query.code == .noSuchIndex && query.description.contains("Track"))
        try partial.register(Track.self)
        #expect(try partial.fetch(Bin.self, where: \.name, equals: "vinyl").count == 1)
    }
}

/// A bin of objects of any class, indexed by its name.
final class Bin: StoredObject {
    @Stored var name = ""
    @Stored var items: [StoredObject] = []
    override class var indexes: [StoredIndex] { [.value(\Bin.name)] }

    override func read(from buffer: inout DataBuffer) throws {
        name = try buffer.readString()
        items = try buffer.readAnyReferences()
    }

    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(name)
        buffer.writeAnyReferences(items)
    }
}

/// A tune; its class's first version indexes its artist (``TuneByArtist``),
/// the next its title at the same place (``TuneByTitle``), so under the same default name.
class Tune: StoredObject {
    @Stored var title = ""
    @Stored var artist = ""
    override class var storedName: String { "Tune" }

    convenience init(title: String, artist: String) {
        self.init()
        self.title = title
        self.artist = artist
    }

    override func read(from buffer: inout DataBuffer) throws {
        title = try buffer.readString()
        artist = try buffer.readString()
    }

    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(title)
        buffer.writeString(artist)
    }
}

final class TuneByArtist: Tune {
    override class var indexes: [StoredIndex] { [.value(\TuneByArtist.artist)] }
}

final class TuneByTitle: Tune {
    override class var indexes: [StoredIndex] { [.value(\TuneByTitle.title)] }
}

/// A class with one value index and no full-text one.
final class ArtistOnly: StoredObject {
    @Stored var artist = ""
    override class var indexes: [StoredIndex] { [.value(\ArtistOnly.artist)] }

    convenience init(artist: String) {
        self.init()
        self.artist = artist
    }

    override func read(from buffer: inout DataBuffer) throws { artist = try buffer.readString() }
    override func write(to buffer: inout DataBuffer) { buffer.writeString(artist) }
}
