// The hostile-file campaign (`make fuzz`): each round copies a store, damages
// one of its files (bit flips, runs of zeros, ones or random bytes, a cut, a
// splice), and reads everything from the copy in a child process. A round ends
// in a clean CabinetError, in answers equal to the undamaged store's, or in a
// finding: a crash, a hang, an error that is not a CabinetError, or an answer
// that differs without an error (silent: in a checksummed store, whatever a read
// returns must be vouched for). Prints counts per file and exits 1 on a finding.
//
//   cabinet-hostile-files campaign [--rounds N] [--seed S] [--format checksummed|plain] [--files A,B] [--jobs J]
//   cabinet-hostile-files probe STORE
//   cabinet-hostile-files replay --seed S --file NAME --round R --keep DIR
import Cabinet
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
func option(_ name: String, _ fallback: String) -> String {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return fallback }
    return arguments[index + 1]
}
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(2)
}

switch arguments.first {
case "probe":
    guard arguments.count == 2 else { fail("usage: cabinet-hostile-files probe STORE") }
    probe(arguments[1])
case "campaign":
    let format = option("--format", "checksummed") == "plain" ? RecordFormat.plain : .checksummed
    let settings = Campaign.Settings(rounds: Int(option("--rounds", "3000")) ?? 3000,
                                     seed: UInt64(option("--seed", "1")) ?? 1, format: format,
                                     files: option("--files", "").split(separator: ",").map(String.init),
                                     timeout: Double(option("--timeout", "30")) ?? 30,
                                     jobs: max(1, Int(option("--jobs", "2")) ?? 2))
    do {
        exit(try Campaign(settings).run() ? 0 : 1)
    } catch {
        fail("the campaign could not run: \(error)")
    }
case "replay":
    let format = option("--format", "checksummed") == "plain" ? RecordFormat.plain : .checksummed
    let settings = Campaign.Settings(rounds: 0, seed: UInt64(option("--seed", "1")) ?? 1, format: format, files: [], timeout: 30)
    do {
        let campaign = try Campaign(settings)
        let kept = option("--keep", FileManager.default.temporaryDirectory.path + "/hostile-replay")
        let how = try campaign.damagedCopy(file: option("--file", "Song"), round: Int(option("--round", "0")) ?? 0, at: kept)
        print("\(how); the damaged store is \(kept); run: cabinet-hostile-files probe \(kept)")
    } catch {
        fail("the replay could not run: \(error)")
    }
default:
    fail("usage: cabinet-hostile-files campaign|probe|replay (see the comment at the top of main.swift)")
}
