import Cabinet
import CabinetModel
import Foundation
import Testing

/// The README's classes (the macro tests' own `Song` has other properties).
@StoredModel
final class ReadmeSong: StoredObject {
    @FullText var title = ""
    @Indexed var artist = ""
    @Indexed var seconds: UInt32 = 0
}

@StoredModel
final class ReadmePlaylist: StoredObject {
    var title = ""
    var songs: [ReadmeSong] = []            // an ordered to-many relationship
}

/// The README's first example (Model/Examples/ReadmeExample/main.swift), its claims checked.
@Suite struct ReadmeExampleTests {
    /// The README's statements, against a temporary directory instead of /tmp/music.
    @Test func theReadmeExampleBehavesAsItsCommentsSay() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/music"
        var store = try ObjectStore(path: path)              // a directory, created if missing
        try store.register(ReadmeSong.self, ReadmePlaylist.self)

        let song = ReadmeSong(); song.title = "Bohemian Rhapsody"; song.artist = "Queen"; song.seconds = 354
        let list = ReadmePlaylist(); list.title = "Car"; list.songs = [song]
        store.insert(song); store.insert(list)
        try store.save()                                     // all or nothing, across both files

        let queen = try store.fetch(ReadmeSong.self, where: \.artist, equals: "Queen")   // by an index
        let long = try store.fetch(ReadmeSong.self, where: \.seconds, in: 300...600)      // a range, in order
        let found = try store.search(ReadmeSong.self, matching: "bohemian")               // full text, any case
        #expect(queen.count == 1 && queen[0] === song && long.count == 1 && found.map(\.title) == ["Bohemian Rhapsody"])

        list.title = "Road trip"                             // a @Stored setter marks the object changed
        #expect(store.hasUnsavedChanges)
        try store.undoManager.undo()                         // and the store's undo puts it back
        #expect(list.title == "Car")
        try store.save()
        store.close()

        store = try ObjectStore(path: path)                  // open it again: all of it is there
        try store.register(ReadmeSong.self, ReadmePlaylist.self)
        let lists = try store.fetchAll(ReadmePlaylist.self)
        #expect(lists.map(\.title) == ["Car"])
        #expect(!lists[0].songs[0].hasContent, "the songs are faults until first read")
        #expect(lists[0].songs.first?.title == "Bohemian Rhapsody")
        store.close()
    }
}
