@testable import Cabinet
import Foundation
import Testing

/// Keeps a copy of each buffer it is read from, before reading it, as an app might.
final class ReferenceKeeper: StoredObject {
    @Stored var label = ""
    @Stored var song: Song?
    var kept = DataBuffer()

    override func read(from buffer: inout DataBuffer) throws {
        kept = buffer
        label = try buffer.readString()
        song = try buffer.readReference(to: Song.self)
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(label)
        buffer.writeReference(song)
    }
    override func dissolveAllRelationships() {
        song = nil
    }
}

/// Compiles only for `Sendable` types.
private func requireSendable<T: Sendable>(_: T.Type) {}

/// A buffer is bytes plus, when a store made it, a context (the store's resolver,
/// the record it holds, the note about uninserted references): copies are
/// independent, kept buffers stay safe, and only the bytes make two buffers equal.
@Suite struct DataBufferContextTests {
    @Test func aBufferWithoutAStoreIsSendableAndReadsOnAnotherThread() async throws {
        requireSendable(DataBuffer.self)
        var written = DataBuffer()
        written.writeUInt32(298)
        written.writeString("Car")
        let buffer = written
        #expect(buffer.context == nil, "a buffer no store made has no context")
        let (seconds, title) = try await Task.detached {
            var mine = buffer
            return (try mine.readUInt32(), try mine.readString())
        }.value
        #expect(seconds == 298 && title == "Car")
        #expect(buffer.readOffset == 0, "the copy read on the other thread is its own")
    }

    @Test(arguments: BackendKind.allCases)
    func eachKeptBufferNamesItsOwnRecordAndEqualsItsBytes(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        var store = try fixture.open(ReferenceKeeper.self, Song.self)
        for index in 0..<3 {
            let keeper = ReferenceKeeper(); keeper.label = "keeper \(index)"
            store.insert(keeper)
        }
        try store.save()
        store.close()
        store = try fixture.open(ReferenceKeeper.self, Song.self)
        let file = try #require(store.entry(for: ReferenceKeeper.self)).table.path
        let keepers = try store.fetchAll(ReferenceKeeper.self)
        store.close()

        #expect(keepers.count == 3)
        for keeper in keepers {
            var kept = keeper.kept
            #expect(kept == DataBuffer(bytes: kept.allBytes), "the context does not count in equality")
            #expect(try kept.readString() == keeper.label)
            _ = try kept.readUInt32()                     // the reference's row ID: bytes read after the close
            let error = expectCabinetError({ _ = try kept.readUInt8() }) { error in
                guard error.code == .truncatedRecord, let location = error.location else { return false }
                return location == RecordLocation(file: file, className: "ReferenceKeeper", rowID: keeper.rowID)
            }
            #expect(error != nil, "the store moved on to the next record; this copy still names row \(keeper.rowID)")
        }
    }

    @Test(arguments: BackendKind.allCases)
    func aKeptBufferResolvesWhileTheStoreIsOpenAndThrowsStoreClosedAfter(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        var store = try fixture.open(ReferenceKeeper.self, Song.self)
        let song = Song(); song.title = "referred to"
        let keeper = ReferenceKeeper(); keeper.label = "keeper"; keeper.song = song
        store.insert(song); store.insert(keeper)
        try store.save()
        store.close()
        store = try fixture.open(ReferenceKeeper.self, Song.self)
        let fetched = try #require(try store.fetch(ReferenceKeeper.self, rowID: keeper.rowID))
        var open = fetched.kept
        _ = try open.readString()
        #expect(try open.readReference(to: Song.self) === fetched.song, "the live instance of the row")

        let path = store.path
        store.close()
        var closed = fetched.kept
        _ = try closed.readString()
        let offset = closed.readOffset
        #expect(throws: CabinetError.storeClosed(path: path)) { _ = try closed.readReference(to: Song.self) }
        #expect(throws: CabinetError.storeClosed(path: path)) { _ = try closed.readReferences(to: Song.self) }
        #expect(throws: CabinetError.storeClosed(path: path)) { _ = try closed.readAnyReference() }
        #expect(closed.readOffset == offset, "a refused read does not move the cursor")
        #expect(try closed.readUInt32() == song.rowID, "the bytes still read")
    }

    @Test(arguments: BackendKind.allCases)
    func aSaveNamesTheFirstUninsertedReferenceOfEachRecordItWrites(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open()
        let opener = Song(); store.insert(opener)
        let node = Node(), stray = Song()
        let album = Album(); album.opener = opener; album.extras = [node, stray]
        store.insert(album)
        func savingNames(_ target: String) -> Bool {
            expectCabinetError({ try store.save() }) { error in
                guard error.code == .referenceToUninsertedObject, let location = error.location, let named = error.targetClass else { return false }
                return location.className == "Album" && location.rowID == album.rowID && named == target
            } != nil
        }
        #expect(savingNames("Node"), "the first uninserted object the record refers to")
        store.insert(node)
        #expect(savingNames("Song"), "the note of the failed write was cleared, not kept")
        store.insert(stray)
        try store.save()
        store.close()
        let reopened = try fixture.open()
        #expect(try reopened.fetchAll(Album.self).first?.extras.count == 2)
        reopened.close()
    }

    @Test(arguments: BackendKind.allCases)
    func aNamedBufferReferringToAnUninsertedObjectIsRefusedNamingItsClass(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open()
        var buffer = DataBuffer()
        buffer.writeAnyReferences([Node()])
        #expect(buffer == DataBuffer(bytes: buffer.allBytes), "the note does not count in equality")
        let error = expectCabinetError({ try store.setNamedBuffer(buffer, forName: "Stray") }) { error in
            guard error.code == .referenceToUninsertedObject, let location = error.location, let target = error.targetClass else { return false }
            return location.file.hasSuffix("[Stray]") && target == "Node"
        }
        #expect(error != nil)
        let copy = buffer
        buffer.removeAll()
        try store.setNamedBuffer(buffer, forName: "Stray")
        #expect(copy.firstUninsertedReference == "Node", "emptying a buffer leaves its copies' notes as they were")
        #expect(throws: CabinetError.self) { try store.setNamedBuffer(copy, forName: "Stray") }
        // A buffer the store made to be read notes one too.
        try store.save()
        var read = try #require(try store.namedBuffer(forName: "Stray"))
        read.writeReference(Song())
        #expect(throws: CabinetError.self) { try store.setNamedBuffer(read, forName: "Stray") }
        store.close()
    }
}
