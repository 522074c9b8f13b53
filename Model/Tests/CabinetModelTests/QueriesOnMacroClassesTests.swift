import Cabinet
import CabinetModel
import Foundation
import Testing

// The queries sample (docs/GUIDE.md, Examples/Queries) with its classes written
// by the macro: the same properties in the same order, the same indexes, each
// declared by an attribute instead of `indexes`.

@StoredModel
final class QuerySong: StoredObject {
    @FullText var title = ""
    @Indexed var artist = ""
    @Indexed var seconds: UInt32 = 0
    @Indexed var added: Date? = nil
}

@StoredModel
final class QueryPlaylist: StoredObject {
    var title = ""
    @Indexed var songs: [QuerySong] = []
}

@Suite struct QueriesOnMacroClassesTests {
    @Test func theAttributesDeclareTheSamplesIndexes() {
        #expect(QuerySong.indexes.map(\.kind) == [.fullText, .value, .value, .value])
        let paths: [AnyKeyPath] = [\QuerySong.title, \QuerySong.artist, \QuerySong.seconds, \QuerySong.added]
        #expect(QuerySong.indexes.map(\.keyPath) == paths)
        #expect(QueryPlaylist.indexes.map(\.kind) == [.references])
        #expect(QueryPlaylist.indexes.map(\.keyPath) == [\QueryPlaylist.songs as AnyKeyPath])
    }

    @Test(arguments: BackendKind.allCases)
    func everyQueryOfTheSampleAnswersOnMacroClasses(_ kind: BackendKind) throws {
        let directory = try TemporaryDirectory()
        let store = try ObjectStore(backend: try kind.newBackend(in: directory))
        defer { store.close() }
        try store.register(QuerySong.self, QueryPlaylist.self)
        let now = Date(timeIntervalSinceReferenceDate: 800_000_000)
        let lastWeek = now.addingTimeInterval(-7 * 86_400)
        let catalog: [(String, String, UInt32)] = [
            ("Walking on Sunshine", "Katrina and the Waves", 238), ("Don't Stop Me Now", "Queen", 209),
            ("Bohemian Rhapsody", "Queen", 354), ("Sunshine of Your Love", "Cream", 250),
            ("Here Comes the Sun", "The Beatles", 185), ("Innuendo", "Queen", 391), ("東京タワー", "Unknown", 300),
        ]
        var songs: [QuerySong] = []
        for (offset, (title, artist, seconds)) in catalog.enumerated() {
            let song = QuerySong()
            song.title = title; song.artist = artist; song.seconds = seconds
            song.added = offset == 4 ? nil : now.addingTimeInterval(Double(-offset) * 2 * 86_400)
            store.insert(song)
            songs.append(song)
        }
        let car = QueryPlaylist()
        car.title = "Car"; car.songs = [songs[0], songs[1], songs[3]]
        store.insert(car)
        try store.save()

        let queen = try store.fetch(QuerySong.self, where: \.artist, equals: "Queen")
        #expect(queen.map(\.title) == ["Don't Stop Me Now", "Bohemian Rhapsody", "Innuendo"] && queen[0] === songs[1])
        let long = try store.fetch(QuerySong.self, where: \.seconds, in: 300...600, limit: 50)
        #expect(long.map(\.seconds) == [300, 354, 391], "ascending by seconds")
        #expect(try store.fetch(QuerySong.self, where: \.seconds, in: 0...1_000, limit: 2).map(\.seconds) == [185, 209])
        let recent = try store.fetch(QuerySong.self, where: \.added, in: lastWeek...now, descending: true)
        #expect(recent.map(\.title) == ["Walking on Sunshine", "Don't Stop Me Now", "Bohemian Rhapsody", "Sunshine of Your Love"])
        #expect(try store.search(QuerySong.self, matching: "walking sunshine").map(\.title) == ["Walking on Sunshine"])
        #expect(try store.search(QuerySong.self, matching: "sunsh*").map(\.title).sorted() == ["Sunshine of Your Love", "Walking on Sunshine"])
        #expect(try store.search(QuerySong.self, matching: "\"on sunshine\"").map(\.title) == ["Walking on Sunshine"])
        #expect(try store.search(QuerySong.self, matching: "東京").map(\.title) == ["東京タワー"])
        #expect(try store.count(QuerySong.self, where: \.artist, equals: "Queen") == 3)
        #expect(try store.fetch(QueryPlaylist.self, where: \.songs, contains: songs[1]).map(\.title) == ["Car"])
        #expect(try store.fetch(QueryPlaylist.self, where: \.songs, contains: songs[2]).isEmpty)

        // An update moves the object between index keys, and undo moves it back.
        store.undoManager.beginGroup(named: "Retitle")
        songs[1].artist = "Freddie"
        store.undoManager.endGroup()
        try store.save()
        #expect(try store.count(QuerySong.self, where: \.artist, equals: "Queen") == 2)
        try store.undoManager.undo()
        try store.save()
        #expect(try store.fetch(QuerySong.self, where: \.artist, equals: "Queen").map(\.title).count == 3)
    }
}
