import Cabinet
import Foundation
import Testing

@Suite struct ReadmeExampleTests {
    /// The package root, found from this file's path.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    @Test func theReadmeExampleIsTheCompiledExample() throws {
        let readme = try String(contentsOfFile: Self.root + "/README.md", encoding: .utf8)
        let example = try String(contentsOfFile: Self.root + "/Examples/ReadmeExample/main.swift", encoding: .utf8)
        let start = try #require(readme.range(of: "```swift\nimport Cabinet\n"))
        let end = try #require(readme.range(of: "```", range: start.upperBound..<readme.endIndex))
        let block = "import Cabinet\n" + readme[start.upperBound..<end.lowerBound]
        #expect(example.hasSuffix(block), "Examples/ReadmeExample/main.swift must end with the README's first code block")
    }

    /// Every Swift sample in the README is kept, line for line, in an example or a test,
    /// so that it compiles (and runs) with the rest of the package.
    @Test func everyReadmeSampleIsCompiledSomewhere() throws {
        let readme = try String(contentsOfFile: Self.root + "/README.md", encoding: .utf8)
        let blocks = Self.swiftBlocks(of: readme)
        #expect(blocks.count >= 3)
        let sources = try Self.compiledSources()
        for block in blocks {
            let found = Self.isCompiled(block, in: sources)
            #expect(found, "README sample not found in Examples/ or Tests/:\n\(block)")
        }
    }

    /// The ```swift blocks of a Markdown text (the README, the DocC articles).
    static func swiftBlocks(of markdown: String) -> [String] {
        markdown.components(separatedBy: "```swift\n").dropFirst().compactMap { $0.components(separatedBy: "```").first }
    }

    /// Every Swift file of Examples/ and Tests/, as lines without their indentation.
    static func compiledSources() throws -> [[String]] {
        var sources: [String] = []
        // Model/Tests: the @StoredModel samples, compiled by the macro's own package.
        for folder in ["Examples", "Tests", "Model/Tests"] {
            let enumerator = FileManager.default.enumerator(atPath: Self.root + "/" + folder)
            while let name = enumerator?.nextObject() as? String {
                // A package under Examples/ (NotesService) keeps its build and its
                // dependencies' sources in .build: those are not this project's samples.
                if name.split(separator: "/").contains(where: { $0.hasPrefix(".") }) {
                    enumerator?.skipDescendants()
                    continue
                }
                if name.hasSuffix(".swift") {
                    sources.append(try String(contentsOfFile: Self.root + "/" + folder + "/" + name, encoding: .utf8))
                }
            }
        }
        return sources.map { $0.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) } }
    }

    /// Whether a sample's lines occur, in order, in one of the files.
    static func isCompiled(_ block: String, in sources: [[String]]) -> Bool {
        let lines = block.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        return sources.contains { file in
            var index = 0
            for line in file where index < lines.count && line == lines[index] { index += 1 }
            return index == lines.count
        }
    }

    /// The README's statements, against a temporary directory instead of /tmp/music, with their claims checked.
    @Test func theReadmeExampleBehavesAsItsCommentsSay() throws {
        let directory = try TemporaryDirectory()
        let store = try ObjectStore(path: directory.path + "/music")   // a directory, created if missing
        try store.register(Song.self, Playlist.self)       // any order, any number of calls
        let song = Song(); song.title = "Walking on Sunshine"; song.seconds = 298
        let list = Playlist(); list.title = "Car"; list.songs = [song]
        store.insert(song); store.insert(list)
        try store.save()

        let lists = try store.fetchAll(Playlist.self)        // content loaded; their songs are faults
        #expect(lists[0] === list)
        #expect(lists[0].songs[0].hasContent, "song is live in this store")
        var seen: [String] = []
        try store.enumerate(Song.self) { song, stop in seen.append(song.title); stop = true }
        #expect(seen == ["Walking on Sunshine"])
        let same = try store.fetch(Song.self, rowID: song.rowID)   // the identical live instance (===); nil if no row
        #expect(same === song)
        list.title = "Road trip"                             // a @Stored setter marks the object updated
        #expect(store.hasUnsavedChanges)
        store.willUpdate(list)                               // the explicit form, for plain properties
        store.delete(song)                                   // calls song.prepareForDelete() first
        #expect(store.hasUnsavedChanges)
        try store.save()
        #expect(!store.hasUnsavedChanges)
        store.close()

        // Loaded from disk, the playlist's songs are faults.
        let reopened = try ObjectStore(path: directory.path + "/music")
        try reopened.register(Song.self, Playlist.self)
        let again = try reopened.fetchAll(Playlist.self)
        #expect(again.map(\.title) == ["Road trip"])
        #expect(again[0].songs.count == 1)
        #expect(!again[0].songs[0].hasContent)
        reopened.faultErrorHandler = { _ in }
        reopened.close()
    }
}
