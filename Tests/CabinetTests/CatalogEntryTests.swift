@testable import Cabinet
import CabinetStorage
import Foundation
import Testing

/// A backend written before batches carried catalog entries: it commits a
/// batch's records and drops its `catalogAdditions`.
final class CatalogDroppingBackend: ForwardingBackend {
    override func commit(_ batch: WriteBatch) throws {
        var records = WriteBatch()
        batch.forEachTable { name, changes in records.add(changes, toTable: name) }
        try inner.commit(records)
    }
}

/// Saving code that does odd things with the buffer it is handed: replaces it
/// with a new one, or empties a copy of it, after writing a reference.
final class OddWriter: StoredObject {
    nonisolated(unsafe) static var replacesBuffer = false
    @Stored var song: Song?

    override func read(from buffer: inout DataBuffer) throws {
        song = try buffer.readReference(to: Song.self)
    }
    override func write(to buffer: inout DataBuffer) {
        if OddWriter.replacesBuffer { buffer = DataBuffer() }
        buffer.writeReference(song)
        var scratch = buffer
        scratch.removeAll()
        scratch.writeString("scratch")
    }
    override func dissolveAllRelationships() {
        song = nil
    }
}

/// How a class's catalog entry is committed with its first row, on every
/// backend, and what the store does when a backend or a file does not go along.
@Suite(.serialized) struct CatalogEntryTests {
    /// A backend whose `commit(_:)` drops the batch's catalog entries gets
    /// them written on their own: the class is catalogued all the same, so a
    /// lost file of it is refused rather than made again empty.
    @Test func aBackendThatDropsCatalogEntriesStillGetsThemWritten() throws {
        let inner = MemoryBackend()
        let store = try ObjectStore(backend: CatalogDroppingBackend(inner))
        try store.register(Song.self, Album.self)
        let catalog = try #require(try inner.readCatalog())
        #expect(catalog.tables["Song"] != nil && catalog.tables["Album"] != nil, "\(catalog.tables)")
        #expect(Set(catalog.tables.values.compactMap { $0 }).count == 2, "two classes, two class IDs")
        store.close()
    }

    /// A class file that lost its metadata row (emptied, restored) while the
    /// catalog lists it registers again with the class ID the catalog gives it.
    @Test(arguments: BackendKind.allCases)
    func anEmptiedClassFileKeepsTheClassIDTheCatalogLists(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        try fixture.open(Song.self).close()
        do {
            let backend = try fixture.backend()
            defer { if kind != .memory { backend.close() } }
            _ = try backend.openTable(named: Album.storedName)   // there, and empty
            var catalog = try #require(try backend.services.readCatalog())
            catalog.tables[Album.storedName] = .some(7)
            try backend.services.writeCatalog(catalog)
        }
        let store = try fixture.open(Song.self, Album.self)
        let album = Album(); album.name = "kept"
        store.insert(album)
        try store.save()
        store.close()
        let backend = try fixture.backend()
        #expect(try backend.services.readCatalog()?.tables[Album.storedName] == .some(7))
        if kind != .memory { backend.close() }
        let reopened = try fixture.open(Song.self, Album.self)
        #expect(try reopened.fetchAll(Album.self).map(\.name) == ["kept"])
        reopened.close()
    }

    /// A reference to an uninserted object is refused even when `write(to:)`
    /// replaced the buffer it was handed, or emptied a copy of it after.
    @Test(arguments: [false, true])
    func anUninsertedReferenceIsRefusedWhateverWriteDoesWithTheBuffer(replacing: Bool) throws {
        OddWriter.replacesBuffer = replacing
        defer { OddWriter.replacesBuffer = false }
        let store = try ObjectStore(backend: MemoryBackend())
        defer { store.close() }
        try store.register(Song.self, OddWriter.self)
        let writer = OddWriter(), song = Song()
        writer.song = song
        store.insert(writer)
        let error = expectCabinetError({ try store.save() }) { error in
            error.code == .referenceToUninsertedObject && error.targetClass == "Song" && error.location?.className == "OddWriter"
        }
        #expect(error != nil, "replacing: \(replacing)")
        store.insert(song)
        try store.save()
        #expect(try store.fetch(OddWriter.self, rowID: writer.rowID)?.song === song)
    }
}
