import Cabinet
import Foundation
import Testing

/// The documentation catalogs' samples (Sources/*/*.docc) compile: each is kept,
/// line for line, in an example or a test, as the README's are; the few that were
/// nowhere else are here, and run.
@Suite struct DocumentationSampleTests {
    @Test func everyCatalogSampleIsCompiledSomewhere() throws {
        var blocks: [String] = []
        let enumerator = FileManager.default.enumerator(atPath: ReadmeExampleTests.root + "/Sources")
        while let name = enumerator?.nextObject() as? String {
            guard name.contains(".docc/"), name.hasSuffix(".md") else { continue }
            let text = try String(contentsOfFile: ReadmeExampleTests.root + "/Sources/" + name, encoding: .utf8)
            blocks += ReadmeExampleTests.swiftBlocks(of: text)
        }
        #expect(blocks.count >= 10)
        let sources = try ReadmeExampleTests.compiledSources()
        for block in blocks {
            let found = ReadmeExampleTests.isCompiled(block, in: sources)
            #expect(found, "catalog sample not found in Examples/ or Tests/:\n\(block)")
        }
    }

    /// DurabilityAndRecovery.md's samples.
    @Test func theDurabilitySamplesRun() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/music"
        let backupPath = directory.path + "/backup"
        do {
            var options = TokyoCabinetBackend.Options()
            options.syncOnCommit = true
            let store = try ObjectStore(backend: TokyoCabinetBackend(directory: path, options: options))
            try store.register(Song.self)
            let song = Song(); song.title = "synced"; store.insert(song)
            do {
                try store.save()
            } catch CabinetError.Code.saveNotFinished {
                print("saved; the next save, read or open finishes writing it")
            }
            try store.backup(to: backupPath)
            store.close()
        }
        let problems = try StoreVerifier.verify(path: backupPath)
        try ObjectStore.restore(from: backupPath, to: path)
        #expect(problems.isEmpty)
        let store = try ObjectStore(path: path)
        try store.register(Song.self)
        #expect(try store.fetchAll(Song.self).map(\.title) == ["synced"])
    }

    /// DurabilityAndRecovery.md's flushed save, on a store opened without `syncOnCommit`.
    @Test func theFlushedSaveSampleRuns() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/shop"
        do {
            let store = try ObjectStore(path: path)
            try store.register(Payment.self)
            let payment = Payment()
            store.insert(payment)
            try store.save()
            payment.status = .settled
            try store.save(durability: .flushed)
            #expect(!store.hasUnsavedChanges)
            store.close()
        }
        let store = try ObjectStore(path: path)
        try store.register(Payment.self)
        #expect(try store.fetchAll(Payment.self).map(\.status) == [.settled])
    }

    /// The tour's samples in Cabinet.md, RelationshipsAndFaulting.md and
    /// ChangeTrackingAndUndo.md, in a temporary directory.
    @Test func theTourSamplesRun() throws {
        let directory = try TemporaryDirectory()
        let store = try ObjectStore(path: directory.path + "/music")
        try store.register(Song.self, Playlist.self)       // any order, any number of calls
        let song = Song(); song.title = "Walking on Sunshine"; song.seconds = 298
        let list = Playlist(); list.title = "Car"; list.songs = [song]
        store.insert(song); store.insert(list)
        try store.save()

        let lists = try store.fetchAll(Playlist.self)        // content loaded; their songs are faults
        print(lists[0].songs[0].hasContent)                  // true here (song is live); loaded from disk, a fault: false until a @Stored property is read
        #expect(lists[0].songs[0].hasContent)

        list.title = "Road trip"                             // a @Stored setter marks the object updated
        store.willUpdate(list)                               // the explicit form, for plain properties
        store.delete(song)                                   // calls song.prepareForDelete() first
        print(store.hasUnsavedChanges)                       // true
        #expect(store.hasUnsavedChanges)
        try store.save()
        #expect(try store.fetchAll(Playlist.self).map(\.title) == ["Road trip"] && store.fetchAll(Song.self).isEmpty)
        store.close()
    }
}

/// The payment of DurabilityAndRecovery.md's flushed save.
final class Payment: StoredObject {
    enum Status: UInt8 { case pending, settled }
    @Stored var status = Status.pending

    override func read(from buffer: inout DataBuffer) throws {
        status = Status(rawValue: try buffer.readUInt8()) ?? .pending
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeUInt8(status.rawValue)
    }
}
