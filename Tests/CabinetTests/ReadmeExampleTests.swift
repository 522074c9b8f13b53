import Cabinet
import Foundation
import Testing

@Suite struct ReadmeExampleTests {
    @Test func theReadmeExampleRunsAsWritten() throws {
        let directory = try TemporaryDirectory()
        let store = try ObjectStore(path: directory.path + "/music")   // a directory, created if missing
        try store.register(Song.self, Playlist.self)       // any order, any number of calls
        let song = Song(); song.title = "Walking on Sunshine"; song.seconds = 298
        let list = Playlist(); list.title = "Car"; list.songs = [song]
        store.insert(song); store.insert(list)
        try store.save()

        let reopened = try ObjectStore(path: directory.path + "/music-copy-check")
        reopened.close()

        let lists = try store.fetchAll(Playlist.self)        // content loaded; their songs are faults
        #expect(lists.count == 1)
        #expect(lists[0] === list)
        var seen: [String] = []
        try store.enumerate(Song.self) { song, stop in seen.append(song.title); stop = true }
        #expect(seen == ["Walking on Sunshine"])
        let same = try store.fetch(Song.self, rowID: song.rowID)   // the identical live instance (===); nil if no row
        #expect(same === song)
        list.title = "Road trip"                             // a @Stored setter marks the object updated
        store.willUpdate(list)                               // the explicit form, for plain properties
        store.delete(song)                                   // calls song.prepareForDelete() first
        #expect(store.hasUnsavedChanges)
        try store.save()
        #expect(!store.hasUnsavedChanges)
        store.close()
    }
}
