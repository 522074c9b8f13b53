@testable import Cabinet
import Foundation
import Testing

/// Maintenance never makes a store out of a path that is not one, and `verify`
/// names every file of a store directory that should be a class file and is not.
@Suite struct ExistingStoreTests {
    private let tool = cabinetToolPath

    private func makeStore() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        let store = try ObjectStore(path: directory.path)
        try store.register(Song.self, Playlist.self)
        let song = Song(); song.title = "kept"; store.insert(song)
        try store.save()
        store.close()
        return directory
    }

    /// A folder of notes: what `cabinet compact docs` must leave alone.
    private func makeNotes() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        try Data("# notes\n".utf8).write(to: URL(fileURLWithPath: directory.path + "/README.md"))
        try Data("buy milk\n".utf8).write(to: URL(fileURLWithPath: directory.path + "/todo"))
        return directory
    }

    @Test func theToolNeverTurnsAPathIntoAStore() throws {
        let parent = try TemporaryDirectory()
        let typo = parent.path + "/typo"
        let notes = try makeNotes()
        let empty = try TemporaryDirectory()
        for target in [typo, notes.path, empty.path] {
            let before = FileManager.default.fileExists(atPath: target) ? try DirectorySnapshot(target) : nil
            for arguments in [["verify", target], ["info", target], ["compact", target], ["backup", target, parent.path + "/copy"],
                              ["restore", target, parent.path + "/restored"]] {
                let result = try run(tool, arguments)
                #expect(result.status != 0, "\(arguments)")
                #expect(result.output.contains("not a Cabinet store") || result.output.contains("no backup directory")
                        || result.output.contains("not a backup"), "\(arguments): \(result.output)")
                #expect(!result.output.contains("no damage found"))
            }
            #expect(!FileManager.default.fileExists(atPath: typo))
            #expect(!FileManager.default.fileExists(atPath: parent.path + "/copy"))
            #expect(!FileManager.default.fileExists(atPath: parent.path + "/restored"))
            if let before { #expect(try DirectorySnapshot(target) == before, "\(target)") }   // not even a lock note came and went
        }
    }

    @Test func openingOnlyAnExistingStore() throws {
        let notes = try makeNotes()
        let empty = try TemporaryDirectory()
        for path in [notes.path + "/missing", notes.path, empty.path] {
            let error = expectCabinetError({ _ = try ObjectStore(path: path, createIfMissing: false) }) {
                guard $0.code == .notAStore, let reported = $0.path else { return false }
                return reported == path
            }
            #expect("\(try #require(error))".contains("is not a Cabinet store"))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: empty.path).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: notes.path + "/missing"))

        // A new store with no class yet has its marker; a BNRPersistence store has only class files.
        let fresh = try TemporaryDirectory()
        try ObjectStore(path: fresh.path).close()
        try ObjectStore(path: fresh.path, createIfMissing: false).close()
        let legacy = try TemporaryDirectory()
        RawTokyoCabinet.write(legacy.path + "/Song", [(RawTokyoCabinet.rowKey(1), [1, 0, 0, 0, 0, 0])])
        let store = try ObjectStore(path: legacy.path, createIfMissing: false)
        #expect(store.recordFormat == .plain)
        store.close()
    }

    @Test func verifyNamesEveryFileThatIsNotAClassFileAndEachLeftover() throws {
        let directory = try makeStore()
        let path = directory.path
        var random = SystemRandomNumberGenerator()
        try Data((0..<4096).map { _ in UInt8.random(in: 0...255, using: &random) }).write(to: URL(fileURLWithPath: path + "/Junk"))
        #expect(FileManager.default.createFile(atPath: path + "/Empty", contents: nil))
        try FileManager.default.createSymbolicLink(atPath: path + "/Link", withDestinationPath: path + "/Song")
        #expect(mkfifo(path + "/Pipe", 0o644) == 0)
        // Tokyo Cabinet's leftovers: an empty log is what a clean writer leaves, not a problem.
        #expect(FileManager.default.createFile(atPath: path + "/Song.wal", contents: nil))
        try FileManager.default.copyItem(atPath: path + "/Song", toPath: path + "/Song.tmp.41")
        try FileManager.default.copyItem(atPath: path + "/Playlist", toPath: path + "/Gone.tmp.42")
        let before = try DirectorySnapshot(path)

        let problems = try StoreVerifier.verify(path: path)
        func reason(_ name: String) -> String? {
            problems.first { $0.location.file == path + "/" + name }?.reason
        }
        #expect(problems.count == 6, "\(problems.map(\.description).joined(separator: "\n"))")
        #expect(reason("Junk")?.contains("not a Tokyo Cabinet file") == true)
        #expect(reason("Empty")?.contains("an empty file") == true)
        #expect(reason("Link")?.contains("symbolic link") == true)
        #expect(reason("Pipe")?.contains("not a regular file") == true)
        #expect(reason("Song.tmp.41")?.contains("Song is still there, so this copy is not needed: delete it") == true)
        #expect(reason("Gone.tmp.42")?.contains("rename it to Gone") == true)
        #expect(reason("Song.wal") == nil)

        let verify = try run(tool, ["verify", path])
        #expect(verify.status == 1 && verify.output.contains("6 problems found"), "\(verify.output)")
        #expect(!verify.output.contains("no damage found"))
        #expect(try DirectorySnapshot(path) == before)

        // The classes still open and read: the other files are only reported.
        let store = try ObjectStore(path: path, readOnly: true)
        try store.register(Song.self, Playlist.self)
        #expect(try store.fetchAll(Song.self).map(\.title) == ["kept"])
        store.close()
    }

    @Test func verifyReadsBesideAReaderAndAWriter() throws {
        let directory = try makeStore()
        let reader = try ObjectStore(path: directory.path, readOnly: true)
        let shared = try run(tool, ["verify", directory.path])
        #expect(shared.status == 0 && shared.output.contains("no damage found"), "\(shared.output)")
        reader.close()
        let writer = try ObjectStore(path: directory.path)
        let live = try run(tool, ["verify", directory.path])
        #expect(live.status == 0 && live.output.contains("no damage found"), "\(live.output)")
        let compact = try run(tool, ["compact", directory.path])       // a second writer is still refused
        #expect(compact.status == 1 && compact.output.contains("locked by process \(getpid())"), "\(compact.output)")
        writer.close()
    }
}
