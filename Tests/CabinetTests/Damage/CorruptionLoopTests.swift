import Foundation
import Testing

/// Item 9's campaign in small, run by the campaign's own harness
/// (`cabinet-hostile-files`, Tests/Helpers/HostileFiles; docs/FUZZING.md): the
/// same checksummed store of every kind of file, damaged one file at a time with
/// a fixed seed (bits flipped, runs of zeros, ones or random bytes, a cut, a
/// splice), then read every way an app and `cabinet info`/`verify` read it, in a
/// process of its own per round. Each round must end in answers equal to the
/// undamaged store's or in a `CabinetError`: a crash, a hang, an error of another
/// type or a different answer without an error fails the test, naming the round.
/// `CABINET_CORRUPTION_ROUNDS` sets the rounds per file (`make fuzz-files` runs 3,000).
@Suite struct CorruptionLoopTests {
    static let roundsPerFile = Int(ProcessInfo.processInfo.environment["CABINET_CORRUPTION_ROUNDS"] ?? "") ?? 27

    @Test func everyDamagedStoreReadsToItsAnswersOrAnErrorAndNoProcessDies() throws {
        let result = try run(buildProductsDirectory + "/cabinet-hostile-files",
                             ["campaign", "--rounds", String(Self.roundsPerFile), "--seed", "2026", "--jobs", "2"])
        #expect(result.status == 0, "\(result.output)")
        // The table's rows: every file of the store was damaged, and both outcomes a sound reader has occurred.
        let rows = result.output.split(separator: "\n").filter { $0.hasPrefix("| ") && !$0.hasPrefix("| file") && !$0.hasPrefix("| ---") }
            .map { $0.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) } }
        let files = Set(rows.map { $0[0] })
        #expect(files.isSuperset(of: ["Song", "Song.index", "Playlist", "Playlist.index", "Shelf", "StoredLists", "NamedBuffers"]), "\(files)")
        let unaffected = rows.compactMap { Int($0[1]) }.reduce(0, +), errors = rows.compactMap { Int($0[2]) }.reduce(0, +)
        #expect(unaffected + errors == rows.count * Self.roundsPerFile, "\(result.output)")
        #expect(unaffected > 0 && errors > 0, "both reads the damage did not reach and clean errors: \(result.output)")
    }
}
