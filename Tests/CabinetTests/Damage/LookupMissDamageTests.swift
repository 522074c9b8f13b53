@testable import Cabinet
@testable import CabinetStorage
import Foundation
import Testing

/// A lookup that finds no record is believed only when the file's hash index
/// reaches every record in it: a zeroed bucket-array entry hides the rows of its
/// bucket from lookups (a scan still reads them), and a store that answered
/// "no such object" for them would lie. Every such read throws instead, naming
/// the file and a hidden row; a sound file still answers `nil`.
@Suite struct LookupMissDamageTests {
    /// A store of three songs (rows 2 to 4) whose Song file no longer finds row 3 by its key.
    private func songStoreHidingRow3() throws -> (TemporaryDirectory, String) {
        let store = try makeSongStore(songs: 3)
        let file = store.path + "/Song"
        try zeroBucket(of: rowKeyBytes(3), in: file)
        return (store, file)
    }

    private func isHiddenRowError(_ error: CabinetError, _ file: String) -> Bool {
        error.code == .backendFailure && error.location?.file == file
            && "\(error)".contains("hash index is damaged") && "\(error)".contains("row 3")
    }

    @Test func aRowTheHashIndexLostIsAnErrorNotNil() throws {
        let (store, file) = try songStoreHidingRow3()
        let opened = try ObjectStore(path: store.path)
        defer { opened.close() }
        try opened.register(Song.self, Playlist.self)
        #expect(expectCabinetError({ _ = try opened.fetch(Song.self, rowID: 3) }) { isHiddenRowError($0, file) } != nil)
        // The file can't vouch for any miss now, not only for the hidden row's.
        #expect(expectCabinetError({ _ = try opened.fetch(Song.self, rowID: 99) }) { isHiddenRowError($0, file) } != nil)
        #expect(try opened.fetch(Song.self, rowID: 2)?.title == "s0", "rows the index finds still read")
        #expect(try opened.fetchAll(Song.self).map(\.title).sorted() == ["s0", "s1", "s2"], "a scan reads every record")
    }

    @Test func aFaultOfAHiddenRowSaysWhyItIsMissing() throws {
        let (store, file) = try songStoreHidingRow3()
        let opened = try ObjectStore(path: store.path)
        defer { opened.close() }
        try opened.register(Song.self, Playlist.self)
        let list = try #require(try opened.fetch(Playlist.self, rowID: 2))
        let faults = list.songs
        #expect(expectCabinetError({ try opened.load(faults) }) { isHiddenRowError($0, file) } != nil)
    }

    @Test func aSoundFileStillAnswersNilForRowsThatAreNotThere() throws {
        let store = try makeSongStore(songs: 3)
        let opened = try ObjectStore(path: store.path)
        defer { opened.close() }
        try opened.register(Song.self, Playlist.self)
        opened.delete(try #require(try opened.fetch(Song.self, rowID: 3)))
        try opened.save()
        #expect(try opened.fetch(Song.self, rowID: 3) == nil, "deleted")
        #expect(try opened.fetch(Song.self, rowID: 99) == nil, "never there")
        let song = Song(); song.title = "new"; opened.insert(song)
        try opened.save()
        #expect(try opened.fetch(Song.self, rowID: 98) == nil, "still believed after a save of this process")
        #expect(try opened.fetch(Song.self, rowID: song.rowID)?.title == "new")
    }

    @Test func aRowHiddenBeyondTheMapIsFoundMissingTheSameWay() throws {
        let (store, file) = try songStoreHidingRow3()
        var options = TokyoCabinetBackend.Options()
        options.mappedSize = 1   // the header and buckets only: every record is read with pread
        let opened = try ObjectStore(backend: TokyoCabinetBackend(directory: store.path, options: options))
        defer { opened.close() }
        try opened.register(Song.self, Playlist.self)
        #expect(expectCabinetError({ _ = try opened.fetch(Song.self, rowID: 3) }) { isHiddenRowError($0, file) } != nil)
        #expect(try opened.fetch(Song.self, rowID: 4)?.title == "s2")
    }

    @Test func compactRebuildsTheIndexAndTheRowIsFoundAgain() throws {
        let (store, _) = try songStoreHidingRow3()
        let opened = try ObjectStore(path: store.path)
        try opened.register(Song.self, Playlist.self)
        #expect(throws: CabinetError.self) { _ = try opened.fetch(Song.self, rowID: 3) }
        try opened.compact()
        #expect(try opened.fetch(Song.self, rowID: 3)?.title == "s1")
        #expect(try opened.fetch(Song.self, rowID: 99) == nil)
        opened.close()
        #expect(try StoreVerifier.verify(path: store.path).isEmpty)
    }

    @Test func readBlocksAskingAtOnceEachGetTheError() async throws {
        let (store, file) = try songStoreHidingRow3()
        let pool = try StorePool(path: store.path, classes: [Song.self, Playlist.self])
        let answers = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<6 {
                group.addTask {
                    try await pool.read { store in
                        expectCabinetError({ _ = try store.fetch(Song.self, rowID: 3) }) { isHiddenRowError($0, file) } != nil
                    }
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(answers == Array(repeating: true, count: 6))
        try await pool.close()
    }
}
