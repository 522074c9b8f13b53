import Cabinet
import CabinetModel
import Foundation
import Testing

// A macro class and a hand-written class that refer to each other, in one
// store: every kind of reference crosses the line, both ways.

/// A macro class whose references are to the hand-written HandTag and HandCrate.
@StoredModel
final class MacroShelf: StoredObject {
    var label = ""
    var tag: HandTag? = nil
    @Indexed var tags: [HandTag] = []
    var list = StoredList<HandTag>()
    var crate: HandCrate? = nil
    var anything: StoredObject? = nil
}

/// A hand-written class whose references are to the macro classes MacroShelf and Song.
final class HandCrate: StoredObject {
    @Stored var label = ""
    @Stored var shelf: MacroShelf? = nil
    @Stored var shelves: [MacroShelf] = []
    @Stored var songs = StoredList<Song>()
    @Stored var anything: [StoredObject] = []

    override class var indexes: [StoredIndex] { [.references(\HandCrate.shelves)] }

    override func read(from buffer: inout DataBuffer) throws {
        label = try buffer.readString()
        shelf = try buffer.readReference(to: MacroShelf.self)
        shelves = try buffer.readReferences(to: MacroShelf.self)
        songs = try buffer.readList(of: Song.self)
        anything = try buffer.readAnyReferences()
    }

    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(label)
        buffer.writeReference(shelf)
        buffer.writeReferences(shelves)
        buffer.writeList(songs)
        buffer.writeAnyReferences(anything)
    }
}

@Suite struct MixedStoreTests {
    @Test(arguments: BackendKind.allCases)
    func macroAndHandWrittenClassesReferToEachOtherInOneStore(_ kind: BackendKind) throws {
        let directory = try TemporaryDirectory()
        let backend = try kind.newBackend(in: directory)
        try withStore(backend) { store in
            let tags = ["a", "b", "c"].map { label -> HandTag in
                let tag = HandTag()
                tag.label = label
                store.insert(tag)
                return tag
            }
            let song = Song()
            song.title = "Car"
            let shelf = MacroShelf()
            let crate = HandCrate()
            for object in [song, shelf, crate] as [StoredObject] { store.insert(object) }
            shelf.label = "top"
            shelf.tag = tags[0]; shelf.tags = [tags[2], tags[1]]; shelf.list = StoredList(tags)
            shelf.crate = crate; shelf.anything = crate
            crate.label = "box"
            crate.shelf = shelf; crate.shelves = [shelf]; crate.songs = StoredList([song]); crate.anything = [song, tags[1], shelf]
            try store.save()
        }
        try withStore(kind.reopen(backend)) { store in
            let shelf = try #require(try store.fetchAll(MacroShelf.self).first)
            let crate = try #require(shelf.crate)
            #expect(!crate.hasContent, "a hand-written object a macro object refers to is a fault until read")
            #expect(crate.label == "box" && crate.hasContent)
            #expect(crate.shelf === shelf && crate.shelves.count == 1 && crate.shelves[0] === shelf)
            #expect(shelf.anything === crate)
            #expect(shelf.tag?.label == "a" && shelf.tags.map(\.label) == ["c", "b"] && shelf.list.map(\.label) == ["a", "b", "c"])
            #expect(shelf.tags[1] === shelf.list[1], "one object per row, whichever kind of class refers to it")
            let song = try #require(crate.songs.first)
            #expect(song.title == "Car" && crate.songs.count == 1)
            #expect(crate.anything.map { "\(type(of: $0).storedName)" } == ["Song", "Tag", "MacroShelf"])
            #expect(crate.anything[0] === song && crate.anything[2] === shelf)

            // The references indexes of each kind, queried with an object of the other kind.
            let tagB = shelf.tags[1]
            #expect(try store.fetch(MacroShelf.self, where: \.tags, contains: tagB).map(\.label) == ["top"])
            #expect(try store.fetch(HandCrate.self, where: \.shelves, contains: shelf).map(\.label) == ["box"])
        }
    }

    @Test(arguments: BackendKind.allCases)
    func undoRestoresReferencesAcrossTheTwoKinds(_ kind: BackendKind) throws {
        let directory = try TemporaryDirectory()
        try withStore(try kind.newBackend(in: directory)) { store in
            let tag = HandTag()
            let shelf = MacroShelf()
            let crate = HandCrate()
            for object in [tag, shelf, crate] as [StoredObject] { store.insert(object) }
            shelf.tag = tag
            crate.shelves = [shelf]
            try store.save()
            store.undoManager.beginGroup(named: "Unlink")
            shelf.tag = nil
            crate.shelves = []
            store.undoManager.endGroup()
            try store.undoManager.undo()
            #expect(shelf.tag === tag && crate.shelves.count == 1 && crate.shelves[0] === shelf)
        }
    }

    private func withStore(_ backend: any StorageBackend, body: (ObjectStore) throws -> Void) throws {
        let store = try ObjectStore(backend: backend)
        defer { store.close() }
        try store.register(HandTag.self, MacroShelf.self, HandCrate.self, Song.self, Album.self)
        try body(store)
    }
}
