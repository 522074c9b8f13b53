@testable import Cabinet
import Foundation
import Testing

/// A disk that fills up in the middle of a save (RLIMIT_FSIZE, in a process of
/// its own): the save throws, memory keeps the changes pending, and once space
/// comes back the same changes save (Tokyo Cabinet's handle, which a failed
/// write marks fatal, is reopened).
@Suite struct FailingDiskTests {
    @Test(arguments: ["one-file", "several-files"])
    func aSaveThatRunsOutOfDiskStaysPendingAndSavesOnceThereIsSpace(_ mode: String) throws {
        let directory = try TemporaryDirectory()
        let store = directory.path + "/store"
        let result = try run(buildProductsDirectory + "/cabinet-full-disk", [store, mode])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("save failed: Cabinet:"), "\(result.output)")
        #expect(result.output.contains("pending: true"))
        #expect(result.output.contains("songs in memory: 20100"))
        #expect(result.output.contains("retry saved"), "\(result.output)")

        #expect(try StoreVerifier.verify(path: store).isEmpty)
        final class Song: StoredObject {
            @Stored var title = ""
            override func read(from buffer: inout DataBuffer) throws { title = try buffer.readString() }
            override func write(to buffer: inout DataBuffer) { buffer.writeString(title) }
        }
        final class Tag: StoredObject {}
        let reopened = try ObjectStore(path: store)
        try reopened.register(Song.self, Tag.self)
        let songs = try reopened.fetchAll(Song.self)
        #expect(songs.count == 20_100)
        #expect(songs.filter { $0.title.hasPrefix("good ") }.count == 100)
        #expect(try reopened.count(of: Tag.self) == (mode == "several-files" ? 20_000 : 0))
        let left = try FileManager.default.contentsOfDirectory(atPath: store).filter { $0.hasPrefix(".cabinet-journal.") }
        #expect(left.isEmpty, "no temporary is left behind: \(left)")
        #expect(try !TokyoCabinetBackend.hasPendingJournal(inDirectory: store), "no journal is left to replay")
        reopened.close()
    }
}
