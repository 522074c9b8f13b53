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

    /// Every Swift sample in the README and in the guides it leads to is kept,
    /// line for line, in an example or a test, so that it compiles (and runs)
    /// with the rest of the package.
    @Test(arguments: ["README.md", "docs/GUIDE.md", "docs/SERVICES.md", "docs/OPERATIONS.md"])
    func everySampleIsCompiledSomewhere(page: String) throws {
        let text = try String(contentsOfFile: Self.root + "/" + page, encoding: .utf8)
        let blocks = Self.swiftBlocks(of: text)
        #expect(!blocks.isEmpty)
        let sources = try Self.compiledSources()
        for block in blocks {
            let found = Self.isCompiled(block, in: sources)
            #expect(found, "\(page) sample not found in Examples/ or Tests/:\n\(block)")
        }
    }

    /// The README's speed claim is the headline of BENCHMARKS.md, word for word.
    @Test func theReadmesSpeedClaimIsBenchmarksHeadline() throws {
        let readme = try String(contentsOfFile: Self.root + "/README.md", encoding: .utf8)
        let benchmarks = try String(contentsOfFile: Self.root + "/BENCHMARKS.md", encoding: .utf8)
        let line = try #require(benchmarks.split(separator: "\n").first { $0.hasPrefix("Headline: ") })
        let claim = line.dropFirst("Headline: ".count).split(separator: " ").joined(separator: " ")
        let flowed = readme.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(flowed.contains(claim), "README.md must say, as BENCHMARKS.md's headline does: \(claim)")
    }

    /// No page a user reads tells the project's history.
    @Test(arguments: ["README.md", "docs/GUIDE.md", "docs/SERVICES.md", "docs/OPERATIONS.md", "docs/MODEL.md", "docs/FUZZING.md"])
    func userPagesCarryNoDiary(page: String) throws {
        let text = try String(contentsOfFile: Self.root + "/" + page, encoding: .utf8).lowercased()
        for word in ["session", "issue #", "issue 1", "issue 2", "issue 3", "issue 4", "issue 5", "issue 6", "issue 7", "issue 8", "issue 9"] {
            #expect(!text.contains(word), "\(page) says '\(word)'")
        }
    }

    /// The README reads in five minutes.
    @Test func theReadmeIsOnePage() throws {
        let readme = try String(contentsOfFile: Self.root + "/README.md", encoding: .utf8)
        #expect(readme.split(separator: "\n", omittingEmptySubsequences: false).count <= 200)
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
        let path = directory.path + "/music"
        var store = try ObjectStore(path: path)              // a directory, created if missing
        try store.register(ReadmeSong.self, ReadmePlaylist.self)

        let song = ReadmeSong(); song.title = "Bohemian Rhapsody"; song.artist = "Queen"; song.seconds = 354
        let list = ReadmePlaylist(); list.title = "Car"; list.songs = [song]
        store.insert(song); store.insert(list)
        try store.save()                                     // all or nothing, across both files

        let queen = try store.fetch(ReadmeSong.self, where: \.artist, equals: "Queen")   // by an index
        let long = try store.fetch(ReadmeSong.self, where: \.seconds, in: 300...600)      // a range, in order
        let found = try store.search(ReadmeSong.self, matching: "bohemian")               // full text, any case
        #expect(queen.count == 1 && queen[0] === song && long.count == 1 && found.map(\.title) == ["Bohemian Rhapsody"])

        list.title = "Road trip"                             // a @Stored setter marks the object changed
        #expect(store.hasUnsavedChanges)
        try store.undoManager.undo()                         // and the store's undo puts it back
        #expect(list.title == "Car")
        try store.save()
        store.close()

        store = try ObjectStore(path: path)                  // open it again: all of it is there
        try store.register(ReadmeSong.self, ReadmePlaylist.self)
        let lists = try store.fetchAll(ReadmePlaylist.self)
        #expect(lists.map(\.title) == ["Car"])
        #expect(!lists[0].songs[0].hasContent, "the songs are faults until first read")
        #expect(lists[0].songs.first?.title == "Bohemian Rhapsody")
        store.close()
    }
}

/// The README's classes (the test suite's own `Song` has no artist).
final class ReadmeSong: StoredObject {
    @Stored var title = ""
    @Stored var artist = ""
    @Stored var seconds: UInt32 = 0

    override class var indexes: [StoredIndex] {
        [.value(\ReadmeSong.artist), .value(\ReadmeSong.seconds), .fullText(\ReadmeSong.title)]
    }
    override func read(from buffer: inout DataBuffer) throws {
        title = try buffer.readString()
        artist = try buffer.readString()
        seconds = try buffer.readUInt32()
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(title)
        buffer.writeString(artist)
        buffer.writeUInt32(seconds)
    }
}

final class ReadmePlaylist: StoredObject {
    @Stored var title = ""
    @Stored var songs: [ReadmeSong] = []

    override func read(from buffer: inout DataBuffer) throws {
        title = try buffer.readString()
        songs = try buffer.readReferences(to: ReadmeSong.self)
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(title)
        buffer.writeReferences(songs)
    }
}
