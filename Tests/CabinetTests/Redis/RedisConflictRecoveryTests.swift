@testable import Cabinet
@testable import CabinetRedis
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Two processes (two backends on one real server) saving out-of-line lists
/// and named buffers: saves conflict only on the same record (a list's root or
/// node, a named buffer, a row), and the documented recovery
/// (`refresh(discardingConflicts: true)`, apply again, `save()`) always lands.
@Suite struct RedisConflictRecoveryTests {
    static func open(_ name: String) throws -> (ObjectStore, RedisBackend) {
        let backend = try TestRedis.backend(store: name)
        let store = try ObjectStore(backend: backend)
        try store.register(Song.self)
        try store.register(Shelf.self)
        return (store, backend)
    }

    /// A store with two shelves whose song lists are out of line (over the inline limit).
    static func twoBigShelves(_ name: String) throws -> (first: UInt32, second: UInt32) {
        let (store, _) = try open(name)
        defer { store.close() }
        var rows: [UInt32] = []
        for shelfName in ["first", "second"] {
            let shelf = insertBigShelf(shelfName, in: store)
            try store.save()
            rows.append(shelf.rowID)
        }
        return (rows[0], rows[1])
    }

    /// A new shelf named `name` whose songs (new too, titled "`name` 0", …) are one more than fit inline.
    static func insertBigShelf(_ name: String, in store: ObjectStore) -> Shelf {
        let shelf = Shelf(); shelf.name = name
        store.insert(shelf)
        var songs: [Song] = []
        for index in 0...StoredList<Song>.inlineLimit {
            let song = Song(); song.title = "\(name) \(index)"
            store.insert(song)
            songs.append(song)
        }
        shelf.songs = StoredList(songs)
        return shelf
    }

    static func append(_ title: String, to shelfRow: UInt32, in store: ObjectStore) throws {
        let shelf = try #require(try store.fetch(Shelf.self, rowID: shelfRow))
        let song = Song(); song.title = title
        store.insert(song)
        shelf.songs.append(song)
    }

    static func titles(of shelfRow: UInt32, in name: String) throws -> [String] {
        let (reader, _) = try open(name)
        defer { reader.close() }
        let shelf = try #require(try reader.fetch(Shelf.self, rowID: shelfRow))
        return shelf.songs.map(\.title)
    }

    @Test func appendsToDifferentOwnersListsNeverConflict() throws {
        for _ in 0..<3 {
            let name = TestRedis.newStoreName()
            let (first, second) = try Self.twoBigShelves(name)
            let (a, _) = try Self.open(name)
            let (b, bBackend) = try Self.open(name)
            try Self.append("a's", to: first, in: a)
            try Self.append("b's", to: second, in: b)
            try a.save()
            #expect(RedisOtherProcessesTests.waitForAnnouncement(bBackend))
            try b.save()   // took a's save in at its start: a's list is not b's
            #expect(try Self.titles(of: first, in: name).last == "a's")
            #expect(try Self.titles(of: second, in: name).last == "b's")
            a.close(); b.close()
        }
    }

    /// Both change the same shelf (its list and its name), the same song and
    /// the same named buffer; a saves first. b's save conflicts; b settles it in
    /// a's favour, applies its changes again, and its next save lands, every time.
    @Test func theDocumentedRecoveryAlwaysConverges() throws {
        let name = TestRedis.newStoreName()
        let (first, second) = try Self.twoBigShelves(name)
        let (a, _) = try Self.open(name)
        let (b, bBackend) = try Self.open(name)
        for round in 0..<20 {
            func change(_ store: ObjectStore, by who: String) throws {
                try Self.append("\(who) \(round)", to: first, in: store)
                let shelf = try #require(try store.fetch(Shelf.self, rowID: first))
                shelf.name = "\(who) \(round)"
                var buffer = DataBuffer()
                buffer.writeString("\(who) \(round)")
                try store.setNamedBuffer(buffer, forName: "last")
            }
            try change(b, by: "b")   // b's changes come before a's save
            try change(a, by: "a")
            try a.save()
            if round % 2 == 0 { #expect(RedisOtherProcessesTests.waitForAnnouncement(bBackend)) }
            let conflict = expectCabinetError({ try b.save() }) { $0.code == .saveConflict }
            #expect(conflict != nil, "round \(round)")
            try b.refresh(discardingConflicts: true)
            #expect(try b.namedBuffer(forName: "last").map { var copy = $0; return try copy.readString() } == "a \(round)",
                    "their named buffer won")
            try change(b, by: "b")
            try b.save()
            // An unrelated save of b's to another owner's list, after it: never a conflict.
            try Self.append("b alone \(round)", to: second, in: b)
            try b.save()
            try a.refresh()
            #expect(try a.fetch(Shelf.self, rowID: first)?.name == "b \(round)", "round \(round)")
        }
        let titles = try Self.titles(of: first, in: name)
        #expect(Array(titles.suffix(2)) == ["a 19", "b 19"])
        #expect(titles.count == StoredList<Song>.inlineLimit + 1 + 40)
        #expect(try Self.titles(of: second, in: name).count == StoredList<Song>.inlineLimit + 1 + 20)
        a.close(); b.close()
    }

    /// More saves missed than the log keeps count as a change of everything,
    /// every list included: an owner with an unsaved append conflicts through
    /// its row, and the recovery lands all the same.
    @Test func theRecoveryLandsAfterMoreSavesThanTheLogKeeps() throws {
        let name = TestRedis.newStoreName()
        let (first, _) = try Self.twoBigShelves(name)
        let (a, _) = try Self.open(name)
        let (b, _) = try Self.open(name)
        // b appends a song already saved (a new one would be an insert, which a
        // take-in of everything keeps as a conflict until it is inserted anew).
        func appendB() throws {
            let shelf = try #require(try b.fetch(Shelf.self, rowID: first))
            let theirs = try #require(try b.fetchAll(Song.self).first { $0.title == "second 0" })
            shelf.songs.append(theirs)
        }
        try appendB()
        let song = try #require(try a.fetchAll(Song.self).first)
        for count in 0...RedisCommitLog.capacity {
            song.title = "a's \(count)"
            try a.save()
        }
        try Self.append("a's", to: first, in: a)
        try a.save()
        #expect(expectCabinetError({ try b.save() }) { $0.code == .saveConflict } != nil)
        try b.refresh(discardingConflicts: true)
        try appendB()
        try b.save()
        #expect(Array(try Self.titles(of: first, in: name).suffix(2)) == ["a's", "second 0"])
        a.close(); b.close()
    }

    /// A named buffer set here and not saved can be dropped; after a conflict
    /// on it, dropping it alone settles the conflict.
    @Test func anUnsavedNamedBufferCanBeDiscarded() throws {
        let name = TestRedis.newStoreName()
        let (a, _) = try Self.open(name)
        let (b, _) = try Self.open(name)
        var mine = DataBuffer(); mine.writeString("b's")
        try b.setNamedBuffer(mine, forName: "shared")
        var theirs = DataBuffer(); theirs.writeString("a's")
        try a.setNamedBuffer(theirs, forName: "shared")
        try a.save()
        #expect(expectCabinetError({ try b.save() }) { $0.code == .saveConflict } != nil)
        try b.discardUnsavedNamedBuffer(forName: "shared")
        #expect(!b.hasUnsavedChanges)
        try b.save()
        var read = try #require(try b.namedBuffer(forName: "shared"))
        #expect(try read.readString() == "a's")
        a.close(); b.close()
    }

    /// Two clients that each set a store's first named buffer at once both
    /// save: each catalogs the named buffers' table in its own commit, merged
    /// into the catalog the other wrote.
    @Test func twoClientsFirstNamedBuffersBothSave() throws {
        let name = TestRedis.newStoreName()
        let (a, _) = try Self.open(name)
        let (b, _) = try Self.open(name)
        var theirs = DataBuffer(); theirs.writeString("a's")
        try a.setNamedBuffer(theirs, forName: "a")
        var mine = DataBuffer(); mine.writeString("b's")
        try b.setNamedBuffer(mine, forName: "b")
        try a.save()
        try b.save()
        a.close(); b.close()
        let (reader, backend) = try Self.open(name)
        defer { reader.close() }
        for (key, value) in [("a", "a's"), ("b", "b's")] {
            var read = try #require(try reader.namedBuffer(forName: key))
            #expect(try read.readString() == value)
        }
        #expect(try backend.readCatalog()?.tables.keys.contains(ObjectStore.namedBuffersTableName) == true)
    }
}
