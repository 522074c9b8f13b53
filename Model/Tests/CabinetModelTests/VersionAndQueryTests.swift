import Cabinet
import CabinetModel
import Foundation
import Testing

/// Versions declared with @Since and @Removed, and indexes declared with
/// @Indexed and @FullText, on every backend.
@Suite struct VersionAndQueryTests {
    @Test(arguments: BackendKind.allCases)
    func aVersionOneStoreIsReadAndUpgradedByTheVersionTwoClass(_ kind: BackendKind) throws {
        let directory = try TemporaryDirectory()
        let backend = try kind.newBackend(in: directory)
        try withStore(backend, Track.self, DiscVersion1.self) { store in
            let disc = DiscVersion1()
            disc.name = "Kind of Blue"
            let track = Track()
            track.title = "So What"
            store.insert(disc)
            store.insert(track)
            disc.tracks = [track]
            try store.save()
        }
        try withStore(kind.reopen(backend), Track.self, Disc.self) { store in
            #expect(try store.needsUpgrade(Disc.self))
            let disc = try #require(try store.fetchAll(Disc.self).first)
            #expect(disc.name == "Kind of Blue" && disc.year == 0 && disc.tracks.map(\.title) == ["So What"])
            #expect(try store.upgradeAll(Disc.self) == 1)
            disc.year = 1959
            try store.save()
        }
        try withStore(kind.reopen(backend), Track.self, Disc.self) { store in
            #expect(try !store.needsUpgrade(Disc.self))
            let disc = try #require(try store.fetchAll(Disc.self).first)
            #expect(disc.name == "Kind of Blue" && disc.year == 1959 && disc.tracks.map(\.title) == ["So What"])
        }
    }

    @Test(arguments: BackendKind.allCases)
    func aRemovedPropertyIsReadFromOlderRecordsAndCarriedOverByTheClassesOwnRead(_ kind: BackendKind) throws {
        let directory = try TemporaryDirectory()
        let backend = try kind.newBackend(in: directory)
        try withStore(backend, Track.self, Disc.self) { store in
            let disc = Disc()
            disc.name = "Blue Train"
            disc.year = 1957
            store.insert(disc)
            try store.save()
        }
        try withStore(kind.reopen(backend), Track.self, DiscVersion3.self) { store in
            let disc = try #require(try store.fetchAll(DiscVersion3.self).first)
            #expect(disc.name == "Blue Train" && disc.year == 1957 && disc.fullYear == 1957)
            #expect(try store.upgradeAll(DiscVersion3.self) == 1)
        }
        try withStore(kind.reopen(backend), Track.self, DiscVersion3.self) { store in
            let disc = try #require(try store.fetchAll(DiscVersion3.self).first)
            #expect(disc.name == "Blue Train" && disc.year == 0 && disc.fullYear == 1957)
        }
    }

    @Test(arguments: BackendKind.allCases)
    func indexesDeclaredByAttributesAnswerQueries(_ kind: BackendKind) throws {
        #expect(Song.indexes.map(\.kind) == [.value, .value, .fullText])
        #expect(Album.indexes.map(\.kind) == [.references])
        let directory = try TemporaryDirectory()
        try withStore(try kind.newBackend(in: directory), Song.self, Album.self) { store in
            let songs = [("Car", "Ana", 200, "drive all night"), ("Sea", "Ben", 300, nil), ("Sky", "Ana", 90, "blue night")]
                .map { title, artist, seconds, lyrics -> Song in
                    let song = Song()
                    song.title = title
                    song.artist = artist
                    song.seconds = UInt32(seconds)
                    song.lyrics = lyrics
                    store.insert(song)
                    return song
                }
            let album = Album()
            store.insert(album)
            album.songs = [songs[0], songs[1]]
            try store.save()
            #expect(try store.fetch(Song.self, where: \.artist, equals: "Ana").map(\.title).sorted() == ["Car", "Sky"])
            #expect(try store.fetch(Song.self, where: \.seconds, in: 100...250).map(\.title) == ["Car"])
            #expect(try store.search(Song.self, matching: "night").map(\.title).sorted() == ["Car", "Sky"])
            #expect(try store.fetch(Album.self, where: \.songs, contains: songs[1]).count == 1)
            #expect(try store.fetch(Album.self, where: \.songs, contains: songs[2]).isEmpty)
        }
    }

    @Test(arguments: BackendKind.allCases)
    func aReferenceFetchedFromAMacroClassIsAFaultUntilRead(_ kind: BackendKind) throws {
        let directory = try TemporaryDirectory()
        let backend = try kind.newBackend(in: directory)
        try withStore(backend, Song.self, Album.self) { store in
            let song = Song()
            let album = Album()
            album.name = "Blue"
            store.insert(song)
            store.insert(album)
            song.album = album
            try store.save()
        }
        try withStore(kind.reopen(backend), Song.self, Album.self) { store in
            let song = try #require(try store.fetchAll(Song.self).first)
            let album = try #require(song.album)
            #expect(!album.hasContent)
            #expect(album.name == "Blue" && album.hasContent)
            #expect(try store.fetch(Album.self, rowID: album.rowID) === album)
        }
    }

    @Test(arguments: BackendKind.allCases)
    func undoRestoresAMacroClassesPropertiesAndRedoReappliesThem(_ kind: BackendKind) throws {
        let directory = try TemporaryDirectory()
        try withStore(try kind.newBackend(in: directory), Song.self, Album.self) { store in
            let song = Song()
            song.title = "Car"
            song.tags = ["road"]
            store.insert(song)
            try store.save()
            store.undoManager.beginGroup(named: "Rename")
            song.title = "Road trip"
            song.tags.append("night")
            song.playCount = 3            // @Transient: neither recorded nor restored
            store.undoManager.endGroup()
            try store.undoManager.undo()
            #expect(song.title == "Car" && song.tags == ["road"] && song.playCount == 3)
            try store.undoManager.redo()
            #expect(song.title == "Road trip" && song.tags == ["road", "night"])
        }
    }

    private func withStore(_ backend: any StorageBackend, _ types: StoredObject.Type..., body: (ObjectStore) throws -> Void) throws {
        let store = try ObjectStore(backend: backend)
        defer { store.close() }
        for type in types { try store.register(type) }
        try body(store)
    }
}
