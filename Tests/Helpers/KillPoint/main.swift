// The child of the kill-point tests (Tests/CabinetTests/KillPoint*.swift): runs
// one scenario's operation, usually under the LD_PRELOAD shim. See docs/CRASHPOINTS.md.
//
//   cabinet-killpoint prepare SCENARIO DIR        the state before the operation
//   cabinet-killpoint run SCENARIO DIR [--retry]   the operation (arms the shim)
//   cabinet-killpoint dump SCENARIO DIR           the canonical text of the store
//   cabinet-killpoint list                        the scenarios' names
//
// `run` prints "done" when the operation finished, "failed STEP: ERROR" when a
// step threw (then, with --retry, "retried STEP: ok"); exit status 1 when a step
// failed without --retry, 5-7 when a failure was mishandled (see Steps.swift),
// 8 when the setup before the operation failed. `dump` exits 3 when the store
// does not open cleanly and 4 when verify finds damage.
import Cabinet
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments == ["list"] {
    say(scenarios.map(\.name).joined(separator: "\n"))
    exit(0)
}
guard arguments.count >= 3, let scenario = scenarios.first(where: { $0.name == arguments[1] }) else {
    quit(2, "usage: cabinet-killpoint prepare|run|dump SCENARIO DIR [--retry]; scenarios: \(scenarios.map(\.name))")
}
let work = Work(dir: arguments[2])
do {
    switch arguments[0] {
    case "prepare":
        try FileManager.default.createDirectory(atPath: work.dir, withIntermediateDirectories: true)
        try scenario.prepare(work)
    case "run":
        try scenario.run(work, Steps(retry: arguments.contains("--retry")))
        say("done")
    case "dump":
        try dump(scenario, work)
    default:
        quit(2, "unknown command \(arguments[0])")
    }
} catch is StepFailed {
    quit(1, "stopped after the failure")
} catch {
    quit(8, "\(arguments[0]) \(scenario.name) failed outside a step: \(error)")
}
