import Foundation
import Testing

/// A type the macro knows only by name is checked by the compiler, not the
/// macro: a struct, say, meets the unavailable `readModelValue`, whose message
/// says what to do, on the property. The expansion tests show the check the
/// macro adds; this runs the real compiler on a class, against the modules and
/// the macro plugin this package built (next to the test binary).
@Suite struct NamedTypeCompileTests {
    /// Where `swift build` put the modules and the plugin: the test binary's folder.
    static let bin = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().path

    static let source = """
        import CabinetModel

        struct Point { var x = 0 }
        enum Mood: UInt8 { case calm, loud }

        @StoredModel
        final class Shape: StoredObject {
            var mood: Mood = .calm
            var other: Shape? = nil
            var origin: Point = Point()
            var corners: [Point] = []
            var last: Point? = nil
        }
        """

    @Test func aStructIsAnErrorOnItsPropertyAndEnumsAndReferencesAreNot() throws {
        let (status, output) = try typecheck(Self.source)
        #expect(status != 0)
        #expect(output.contains("error: 'readModelValue' is unavailable: @StoredModel stores a type it does not know only as"))
        for property in ["origin", "corners", "last"] {
            #expect(output.contains("in expansion of macro '_StorableCheck' on property '\(property)' here"), "\(output)")
        }
        for property in ["mood", "other"] {
            #expect(!output.contains("on property '\(property)' here"), "\(output)")
        }
    }

    /// The same class without the struct compiles: the errors above are the struct's.
    @Test func theClassWithoutTheStructCompiles() throws {
        let source = Self.source.split(separator: "\n").filter { !$0.contains("Point") }.joined(separator: "\n")
        let (status, output) = try typecheck(source)
        #expect(status == 0, "\(output)")
    }

    /// Runs `swiftc -typecheck` on `source`; returns its status and what it printed.
    private func typecheck(_ source: String) throws -> (Int32, String) {
        let directory = try TemporaryDirectory()
        let file = directory.path + "/Shape.swift"
        try source.write(toFile: file, atomically: true, encoding: .utf8)
        let root = ModelPageTests.root
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "swiftc", "-typecheck", "-diagnostic-style", "llvm", "-I", Self.bin + "/Modules",
            "-I", root + "/Sources/CTokyoCabinet", "-I", root + "/Sources/CTokyoCabinetYields/include",
            "-load-plugin-executable", Self.bin + "/CabinetMacros-tool#CabinetMacros", file,
        ]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }
}
