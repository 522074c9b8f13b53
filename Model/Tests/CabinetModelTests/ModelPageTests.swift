import Cabinet
import CabinetModel
import Foundation
import Testing

/// docs/MODEL.md's samples (ModelPageModels.swift) compile and do what the page says.
@Suite struct ModelPageTests {
    /// The repository's root, found from this file's path.
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// Every Swift sample of the page is kept, line for line (in order, ignoring
    /// indentation), in a file the macro's package or its example app compiles.
    @Test func everySampleOfThePageIsCompiled() throws {
        let page = try String(contentsOfFile: Self.root + "/docs/MODEL.md", encoding: .utf8)
        let blocks = page.components(separatedBy: "```swift\n").dropFirst().compactMap { $0.components(separatedBy: "```").first }
        #expect(blocks.count >= 5)
        var files: [[String]] = []
        for folder in ["Model/Tests", "Model/Examples", "Examples/DependingOnCabinetModel"] {
            let enumerator = FileManager.default.enumerator(atPath: Self.root + "/" + folder)
            while let name = enumerator?.nextObject() as? String {
                // An example's own build folder holds its dependencies' sources, not this project's.
                if name.split(separator: "/").contains(where: { $0.hasPrefix(".") }) {
                    enumerator?.skipDescendants()
                    continue
                }
                guard name.hasSuffix(".swift") else { continue }
                let text = try String(contentsOfFile: Self.root + "/" + folder + "/" + name, encoding: .utf8)
                files.append(text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) })
            }
        }
        for block in blocks {
            let lines = block.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            let found = files.contains { file in
                var index = 0
                for line in file where index < lines.count && line == lines[index] { index += 1 }
                return index == lines.count
            }
            #expect(found, "docs/MODEL.md's sample is compiled nowhere:\n\(block)")
        }
    }

    @Test(arguments: BackendKind.allCases)
    func theSampleStoresEveryPropertyAndAnswersItsIndexes(_ kind: BackendKind) throws {
        #expect(ModelPage.Song.indexes.map(\.kind) == [.value, .value, .fullText] && ModelPage.Album.indexes.isEmpty)
        let directory = try TemporaryDirectory()
        let backend = try kind.newBackend(in: directory)
        try withStore(backend, ModelPage.Song.self, ModelPage.Album.self) { store in
            let album = ModelPage.Album(); album.name = "Blue"; album.year = 1959
            let car = ModelPage.Song(); car.title = "Car"; car.artist = "Ana"; car.seconds = 200; car.lyrics = "drive all night"
            car.added = Date(timeIntervalSinceReferenceDate: 1_000.25); car.album = album; car.tags = ["road", "night"]; car.playCount = 5
            let sky = ModelPage.Song(); sky.title = "Sky"; sky.artist = "Ben"; sky.seconds = 90
            for object in [album, car, sky] as [StoredObject] { store.insert(object) }
            album.songs = [car, sky]
            try store.save()
        }
        try withStore(kind.reopen(backend), ModelPage.Song.self, ModelPage.Album.self) { store in
            let songs = try store.fetchAll(ModelPage.Song.self).sorted { $0.rowID < $1.rowID }
            let album = try #require(try store.fetchAll(ModelPage.Album.self).first)
            let car = songs[0], sky = songs[1]
            #expect(car.title == "Car" && car.artist == "Ana" && car.seconds == 200 && car.lyrics == "drive all night")
            #expect(car.added == Date(timeIntervalSinceReferenceDate: 1_000.25) && car.tags == ["road", "night"])
            #expect(car.playCount == 0, "@Transient: not stored")
            #expect(car.album === album && sky.album == nil && sky.lyrics == nil && sky.added == nil && sky.tags.isEmpty)
            #expect(album.name == "Blue" && album.year == 1959 && album.songs.count == 2 && album.songs[0] === car)
            #expect(try store.fetch(ModelPage.Song.self, where: \.artist, equals: "Ben").map(\.title) == ["Sky"])
            #expect(try store.fetch(ModelPage.Song.self, where: \.seconds, in: 100...300).map(\.title) == ["Car"])
            #expect(try store.search(ModelPage.Song.self, matching: "night").map(\.title) == ["Car"])
        }
    }

    /// The page's "the macro writes" is what the macro writes: the same bytes,
    /// version and fingerprints, and each reads the other's records.
    @Test(arguments: BackendKind.allCases)
    func theAlbumWrittenByHandAsThePageSaysIsTheMacrosAlbum(_ kind: BackendKind) throws {
        #expect(ModelPage.HandAlbum.version == ModelPage.Album.version)
        #expect(ModelPage.HandAlbum.layoutFingerprints == ModelPage.Album.layoutFingerprints)
        #expect(ModelPageDeclared.Album.layoutFingerprints == ModelPage.Album.layoutFingerprints)
        let directory = try TemporaryDirectory()
        let backend = try kind.newBackend(in: directory)
        try withStore(backend, ModelPage.Song.self, ModelPage.Album.self) { store in
            let song = ModelPage.Song()
            let album = ModelPage.Album(); album.name = "Blue"; album.year = 1959
            let hand = ModelPage.HandAlbum(); hand.name = "Blue"; hand.year = 1959
            store.insert(song); store.insert(album)
            album.songs = [song]; hand.songs = [song]
            var macroBytes = DataBuffer(), handBytes = DataBuffer()
            album.write(to: &macroBytes)
            hand.write(to: &handBytes)
            #expect(macroBytes == handBytes)
            try store.save()
        }
        try withStore(kind.reopen(backend), ModelPage.Song.self, ModelPage.HandAlbum.self) { store in
            let album = try #require(try store.fetchAll(ModelPage.HandAlbum.self).first)
            #expect(album.name == "Blue" && album.year == 1959 && album.songs.count == 1)
            album.year = 1960
            try store.save()
        }
        try withStore(kind.reopen(backend), ModelPage.Song.self, ModelPage.Album.self) { store in
            let album = try #require(try store.fetchAll(ModelPage.Album.self).first)
            #expect(album.name == "Blue" && album.year == 1960 && album.songs.count == 1)
        }
    }

    /// A version-1 store, read and upgraded by the page's version-2 Album.
    @Test(arguments: BackendKind.allCases)
    func aVersionOneStoreIsReadAndUpgradedByTheSamplesAlbum(_ kind: BackendKind) throws {
        let directory = try TemporaryDirectory()
        let backend = try kind.newBackend(in: directory)
        try withStore(backend, ModelPageVersion1.Song.self, ModelPageVersion1.Album.self) { store in
            let album = ModelPageVersion1.Album(); album.name = "Kind of Blue"
            let song = ModelPageVersion1.Song(); song.title = "So What"
            store.insert(album); store.insert(song)
            album.songs = [song]
            try store.save()
        }
        try withStore(kind.reopen(backend), ModelPage.Song.self, ModelPage.Album.self) { store in
            #expect(try store.needsUpgrade(ModelPage.Album.self))
            let album = try #require(try store.fetchAll(ModelPage.Album.self).first)
            #expect(album.name == "Kind of Blue" && album.year == 0 && album.songs.map(\.title) == ["So What"])
            #expect(try store.upgradeAll(ModelPage.Album.self) == 1)
            album.year = 1959
            try store.save()
        }
        try withStore(kind.reopen(backend), ModelPage.Song.self, ModelPage.Album.self) { store in
            #expect(try !store.needsUpgrade(ModelPage.Album.self))
            let album = try #require(try store.fetchAll(ModelPage.Album.self).first)
            #expect(album.name == "Kind of Blue" && album.year == 1959 && album.songs.map(\.title) == ["So What"])
        }
    }

    /// The page's version 3 carries the removed year over from version-2 records.
    /// (No songs: the page's Song refers to the version-2 Album, which a store
    /// cannot register beside version 3, so its records could not be read here.)
    @Test(arguments: BackendKind.allCases)
    func theSamplesVersionThreeReadsTheRemovedYearAndUpgrades(_ kind: BackendKind) throws {
        let directory = try TemporaryDirectory()
        let backend = try kind.newBackend(in: directory)
        try withStore(backend, ModelPage.Song.self, ModelPage.Album.self) { store in
            let album = ModelPage.Album(); album.name = "Blue Train"; album.year = 1957
            store.insert(album)
            try store.save()
        }
        try withStore(kind.reopen(backend), ModelPage.Song.self, ModelPageVersion3.Album.self) { store in
            #expect(try store.needsUpgrade(ModelPageVersion3.Album.self))
            let album = try #require(try store.fetchAll(ModelPageVersion3.Album.self).first)
            #expect(album.name == "Blue Train" && album.fullYear == 1957 && album.songs.isEmpty)
            #expect(try store.upgradeAll(ModelPageVersion3.Album.self) == 1)
        }
        try withStore(kind.reopen(backend), ModelPage.Song.self, ModelPageVersion3.Album.self) { store in
            #expect(try !store.needsUpgrade(ModelPageVersion3.Album.self))
            let album = try #require(try store.fetchAll(ModelPageVersion3.Album.self).first)
            #expect(album.name == "Blue Train" && album.fullYear == 1957 && album.year == 0)
        }
    }

    private func withStore(_ backend: any StorageBackend, _ types: StoredObject.Type..., body: (ObjectStore) throws -> Void) throws {
        let store = try ObjectStore(backend: backend)
        defer { store.close() }
        for type in types { try store.register(type) }
        try body(store)
    }
}
