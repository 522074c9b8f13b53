import Cabinet
import Foundation
import Testing

@Suite struct ReadmeExampleTests {
    /// The package root, found from this file's path.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// The README's first example uses @StoredModel, so it is compiled (and run by
    /// `make demo`) in the macro's package, Model/; its statements are checked there
    /// too (Model/Tests/CabinetModelTests/ReadmeExampleTests.swift).
    @Test func theReadmeExampleIsTheCompiledExample() throws {
        let readme = try String(contentsOfFile: Self.root + "/README.md", encoding: .utf8)
        let example = try String(contentsOfFile: Self.root + "/Model/Examples/ReadmeExample/main.swift", encoding: .utf8)
        let start = try #require(readme.range(of: "```swift\nimport CabinetModel\n"))
        let end = try #require(readme.range(of: "```", range: start.upperBound..<readme.endIndex))
        let block = "import CabinetModel\n" + readme[start.upperBound..<end.lowerBound]
        #expect(example.hasSuffix(block), "Model/Examples/ReadmeExample/main.swift must end with the README's first example")
        // It is the first example: nothing before it imports a module.
        #expect(!readme[..<start.lowerBound].contains("```swift\nimport "))
    }

    /// The README's classes written by hand (docs/GUIDE.md, the DocC article
    /// GettingStarted) are compiled with the README's statements, in the example
    /// of an app that depends on Cabinet alone.
    @Test func theHandWrittenExampleRunsTheReadmesStatementsWithTheGuidesClasses() throws {
        let readme = try String(contentsOfFile: Self.root + "/README.md", encoding: .utf8)
        let handWritten = try String(contentsOfFile: Self.root + "/Examples/HandWritten/main.swift", encoding: .utf8)
        let statements = try #require(readme.range(of: "let path = \"/tmp/music\"\n"))
        let end = try #require(readme.range(of: "```", range: statements.upperBound..<readme.endIndex))
        #expect(handWritten.hasSuffix(readme[statements.lowerBound..<end.lowerBound]))
        let guide = try String(contentsOfFile: Self.root + "/docs/GUIDE.md", encoding: .utf8)
        let classes = try #require(Self.swiftBlocks(of: guide).first { $0.hasPrefix("import Cabinet\n\nfinal class Song") })
        #expect(handWritten.contains(classes))
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
    @Test(arguments: ["README.md", "docs/GUIDE.md", "docs/SERVICES.md", "docs/OPERATIONS.md", "docs/MODEL.md", "docs/FUZZING.md", "BENCHMARKS.md"])
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
        // Model/Tests, Model/Examples: the @StoredModel samples, compiled by the macro's own package.
        for folder in ["Examples", "Tests", "Model/Tests", "Model/Examples"] {
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
}
