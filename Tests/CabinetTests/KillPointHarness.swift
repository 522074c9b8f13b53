import Cabinet
import Foundation

/// One writing operation as the kill-point tests run it: a scenario of the child
/// `cabinet-killpoint` (Tests/Helpers/KillPoint), run either by the child itself
/// or by the `cabinet` command. See docs/CRASHPOINTS.md.
struct KillPointCase: Sendable, CustomStringConvertible {
    /// The name in the table.
    let name: String
    /// The child's scenario that prepares and dumps the store.
    let scenario: String
    /// `cabinet` arguments ("{store}", "{backup}", "{work}" are replaced); nil: the child runs the operation.
    var tool: [String]? = nil
    /// How the states before and after must compare (a scenario sanity check).
    var expectation: Expectation = .everyClassChanges
    /// Whether its number of points may vary between runs (a pool's commit groups
    /// vary with timing): only then may a run finish before a point the counting run made.
    var pointsVary = false

    enum Expectation: Sendable {
        case everyClassChanges      // every class section differs between old and new
        case changes                // old and new differ
        case keepsContent           // old and new are the same (compact, replay)
    }

    var description: String { name }
}

/// What one run at one point ended with.
enum KillPointOutcome: Equatable {
    case old, new, partial          // partial: whole upgrade batches, and a rerun finished
    /// The run made fewer points than the one that counted them (a pool's commit
    /// groups vary with timing), so it finished before the point: the store is new.
    case finishedFirst
    case reported, absorbed         // a failure was reported (and retried), or never noticed, with the right state
    /// Tokyo Cabinet 1.4.48 crashed in its own close: when ftruncate or the unlink of
    /// the .wal fails there, tchdbcloseimpl sets the fatal flag through the header
    /// it has just unmapped (a NULL dereference). Counted apart, and accepted only
    /// when the store is then exactly old or new, as after a kill at that point.
    case crashedInTokyoCabinetClose
    case bad(String)
}

/// A finished process: exit status or signal, and what it printed (stdout and stderr).
struct ChildResult {
    let status: Int32
    let signaled: Bool
    let output: String
    /// The status and the last lines printed; for a crash, the crash line and the frame it crashed in.
    var summary: String {
        let lines = output.split(separator: "\n")
        let crash = lines.filter { $0.contains("Program crashed") || $0.trimmingCharacters(in: .whitespaces).hasPrefix("0  0x") }
        let text = (signaled && !crash.isEmpty ? crash.prefix(2) : lines.suffix(3)).joined(separator: " | ")
        return (signaled ? "killed by signal \(status)" : "exit status \(status)") + (text.isEmpty ? "" : ": \(text)")
    }
}

/// Prepares, runs, kills, fails and dumps one case's operation.
final class KillPointHarness {
    let testCase: KillPointCase
    let base: TemporaryDirectory
    let template: String
    private var next = 0
    /// The call at each point (1-based: calls[0] is point 1), from an unkilled run's log.
    private(set) var calls: [String] = []
    /// The call each point's last run hit (see `operation(_:at:_:retry:)`).
    private(set) var hits: [Int: String] = [:]
    /// The points the last run that exited normally made, by its own count (the shim's end line).
    private(set) var lastEnd: Int?
    private(set) var oldDump = ""
    private(set) var newDump = ""

    static var products: String { buildProductsDirectory }
    /// Set by `make asan`: the children are built with AddressSanitizer.
    static let sanitized = ProcessInfo.processInfo.environment["CABINET_SANITIZED"] != nil
    static var child: String { products + "/cabinet-killpoint" }
    static var shim: String { products + "/libKillPointShim.so" }

    init(_ testCase: KillPointCase) throws {
        self.testCase = testCase
        base = try TemporaryDirectory()
        template = base.path + "/template"
        for product in [KillPointHarness.child, KillPointHarness.shim] where !FileManager.default.fileExists(atPath: product) {
            throw HarnessError("\(product) is missing: build with `swift build --build-tests` first")
        }
        let prepared = try KillPointHarness.launch(KillPointHarness.child, ["prepare", testCase.scenario, template])
        guard prepared.status == 0, !prepared.signaled else { throw HarnessError("prepare \(testCase.scenario): \(prepared.summary)") }
        if testCase.scenario == "replay" { try leaveJournalPending() }
    }

    /// Dumps the old state and counts the operation's points with an unkilled, logged run.
    func measure() throws {
        let before = try copy()
        oldDump = try requireDump(before, "the old state")
        let work = try copy(), log = base.path + "/count.log"
        let result = try operation(work, ["CABINET_KILLPOINT_LOG": log])
        guard result.status == 0, !result.signaled else { throw HarnessError("the unkilled operation failed: \(result.summary)") }
        let lines = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n")
        calls = lines.map { line in
            String(line.drop { $0 != " " }.dropFirst()).replacingOccurrences(of: work + "/", with: "")
        }
        newDump = try requireDump(work, "the new state")
    }

    /// A fresh copy of the prepared directory.
    func copy() throws -> String {
        next += 1
        let path = base.path + "/run\(next)"
        try FileManager.default.copyItem(atPath: template, toPath: path)
        return path
    }

    /// The executable and arguments of the operation on `work`.
    private func command(_ work: String, retry: Bool) -> (String, [String]) {
        guard let tool = testCase.tool else {
            return (KillPointHarness.child, ["run", testCase.scenario, work] + (retry ? ["--retry"] : []))
        }
        return (cabinetToolPath, tool.map {
            $0.replacingOccurrences(of: "{store}", with: work + "/store").replacingOccurrences(of: "{backup}", with: work + "/backup")
                .replacingOccurrences(of: "{work}", with: work)
        })
    }

    /// Runs the operation on `work` under the shim with `environment` added.
    func operation(_ work: String, _ environment: [String: String], retry: Bool = false) throws -> ChildResult {
        var environment = environment
        environment["LD_PRELOAD"] = KillPointHarness.shim
        // The child arms the shim where its operation starts; the `cabinet` command counts from its start.
        if testCase.tool == nil { environment["CABINET_KILLPOINT_ARM"] = "wait" }
        let (executable, arguments) = command(work, retry: retry)
        return try KillPointHarness.launch(executable, arguments, environment)
    }

    /// The operation again, without the shim: a retry or a rerun.
    func rerun(_ work: String) throws -> ChildResult {
        let (executable, arguments) = command(work, retry: false)
        return try KillPointHarness.launch(executable, arguments)
    }

    func dump(_ work: String) throws -> ChildResult {
        try KillPointHarness.launch(KillPointHarness.child, ["dump", testCase.scenario, work])
    }

    private func requireDump(_ work: String, _ what: String) throws -> String {
        let result = try dump(work)
        guard result.status == 0, !result.signaled else { throw HarnessError("\(what) does not dump: \(result.summary)") }
        return result.output
    }

    /// The name of point `k` for messages: "point 7 (rename store/Song.tmp.1 -> store/Song)",
    /// and the call the last run at `k` hit when that was another one.
    func describe(point k: Int) -> String {
        let counted = k <= calls.count ? calls[k - 1] : "beyond the counted calls"
        let hit = hits[k].map { $0 == counted ? "" : "; that run hit \($0)" } ?? ""
        return "point \(k) of \(calls.count) (\(counted)\(hit))"
    }

    /// What the shim recorded of one run (CABINET_KILLPOINT_HIT): the call at point
    /// `k`, nil if the run made no call there (it made fewer points, or died before
    /// it); and the number of points it made, if it exited normally.
    struct Hit {
        var call: String?
        var end: Int?
        /// Whether the run exited normally before it reached point `k`: a pool's
        /// commit groups vary with timing, so it can make fewer points than the counting run.
        func finishedBefore(_ k: Int) -> Bool { call == nil && end.map { $0 < k } == true }
    }

    /// Runs the operation on `work` with the shim telling which call it killed or
    /// failed at point `k`: the number of points can vary between runs (a pool's
    /// commit groups), so the counting run's call at `k` may be another one.
    private func operation(_ work: String, at k: Int, _ environment: [String: String], retry: Bool = false) throws -> (ChildResult, Hit) {
        let hitLog = work + ".hit"
        let result = try operation(work, environment.merging(["CABINET_KILLPOINT_HIT": hitLog]) { $1 }, retry: retry)
        var hit = Hit()
        // "N call target" for each point hit (a fail-then-kill run hits two), "N end " at a normal exit.
        for line in ((try? String(contentsOfFile: hitLog, encoding: .utf8)) ?? "").split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 1)
            guard let number = Int(fields[0]) else { continue }
            let rest = fields.count > 1 ? String(fields[1]) : ""
            if rest.trimmingCharacters(in: .whitespaces) == "end" { hit.end = number }
            else if number == k { hit.call = rest.replacingOccurrences(of: work + "/", with: "") }
        }
        hits[k] = hit.call ?? (hit.finishedBefore(k) ? "no call (the run made \(hit.end ?? 0) points)" : "no call recorded")
        if let end = hit.end { lastEnd = end }
        return (result, hit)
    }

    /// Compares the dump of `work` with the old and new states.
    func classify(_ work: String, allowOld: Bool = true, allowNew: Bool = true) throws -> KillPointOutcome {
        let result = try dump(work)
        guard result.status == 0, !result.signaled else { return .bad(result.summary) }
        // Equal to the unkilled result counts as new even if that result is wrong
        // (the scenario check reports it once), so the table shows what the kills add.
        if allowOld && result.output == oldDump { return .old }
        if allowNew && result.output == newDump { return .new }
        if let bad = result.output.split(separator: "\n").first(where: { $0.contains("BAD") }) { return .bad(String(bad)) }
        if result.output.contains("upgrade: whole batches") {
            // Whole batches upgraded: the objects must read as before, and a rerun must finish.
            let objects = { (text: String) in text.split(separator: "\n").filter { $0.hasPrefix("  ") } }
            guard objects(result.output) == objects(oldDump) else { return .bad("objects read differently: " + difference(oldDump, result.output)) }
            let again = try rerun(work)
            guard again.status == 0, !again.signaled else { return .bad("the rerun fails: \(again.summary)") }
            let final = try dump(work)
            return final.output == newDump ? .partial : .bad("after a rerun: " + difference(newDump, final.output))
        }
        var text = allowOld ? "neither old (\(difference(oldDump, result.output)))" : ""
        if allowNew { text += (text.isEmpty ? "not new (" : " nor new (") + difference(newDump, result.output) + ")" }
        return .bad(text)
    }

    /// Kills the operation just before point `k`; the store must be old or new.
    func kill(at k: Int) throws -> KillPointOutcome {
        let work = try copy()
        let (result, hit) = try operation(work, at: k, ["CABINET_KILLPOINT_KILL": "\(k)"])
        if hit.finishedBefore(k) && !result.signaled && result.status == 0 {
            // This run made fewer points than the counting run: it finished, so the store must be new.
            return try finishedFirst(work, at: k)
        }
        guard result.signaled && result.status == SIGKILL else { return .bad("the process was not killed there: \(result.summary)") }
        return try classify(work)
    }

    /// A run that exited before point `k` (it made fewer points): the store must be new.
    private func finishedFirst(_ work: String, at k: Int) throws -> KillPointOutcome {
        // A case whose points do not vary reaches every point the counting run made.
        if !testCase.pointsVary && k <= calls.count {
            return .bad("finished before point \(k) was reached: this run made \(hits[k] ?? "fewer points"), the counting run \(calls.count)")
        }
        let outcome = try classify(work, allowOld: false)
        return outcome == .new ? .finishedFirst : .bad("finished before point \(k) was reached, and the store is \(outcome)")
    }

    /// Fails point `k` once, then kills the process `later` calls after it, in the
    /// middle of its recovery (the rollback, the rebuild of the file); the store must
    /// be old or new. Used for failed writes to a `.wal`, after which Tokyo Cabinet
    /// may have changed a bucket it could not log.
    func failThenKill(at k: Int, later: Int, errno code: Int32) throws -> KillPointOutcome {
        let work = try copy()
        let (result, hit) = try operation(work, at: k, ["CABINET_KILLPOINT_FAIL": "\(k)", "CABINET_KILLPOINT_KILL": "\(k + later)",
                                                        "CABINET_KILLPOINT_ERRNO": "\(code)"])
        if result.signaled && result.status != SIGKILL { return .bad("crashed: \(result.summary)") }
        // The points are chosen where the counting run wrote a .wal; where this run's call
        // there was another one, it still must leave the store old or new, as counted.
        if hit.finishedBefore(k) && !result.signaled && result.status == 0 { return try finishedFirst(work, at: k) }
        return try classify(work)
    }

    /// Fails point `k` once (errno `code`). With `retry`, the operation must report
    /// it, keep memory, and succeed when tried again: the store ends new. Without,
    /// a reported failure must leave the old state, unless the store says it holds
    /// no pending changes (the save is committed), and then it must be new.
    func fail(at k: Int, errno code: Int32, retry: Bool) throws -> KillPointOutcome {
        let work = try copy()
        let (result, hit) = try operation(work, at: k, ["CABINET_KILLPOINT_FAIL": "\(k)", "CABINET_KILLPOINT_ERRNO": "\(code)"], retry: retry)
        if result.signaled {
            // The call this run failed, not the counting run's call at k (they differ where the
            // number of points varies).
            // The backtrace names the library; sanitized children print none (see launch), so there
            // the failed call and the signal have to do.
            let call = hit.call ?? ""
            let inTokyoCabinet = result.output.contains("in libtokyocabinet") || KillPointHarness.sanitized
            let inClose = (call.contains("ftruncate") || call.contains("unlink")) && inTokyoCabinet && result.status == SIGSEGV
            guard inClose else { return .bad("crashed: \(result.summary)") }
            let outcome = try classify(work)
            return outcome == .old || outcome == .new ? .crashedInTokyoCabinetClose
                : .bad("crashed in Tokyo Cabinet's close, and the store is \(outcome)")
        }
        // Nothing failed: the run made fewer points than the one that counted them.
        if hit.finishedBefore(k) && result.status == 0 { return try finishedFirst(work, at: k) }
        let reported: Bool
        if testCase.tool != nil {
            reported = result.status != 0
            if reported && !result.output.contains("Cabinet") { return .bad("the command failed without a Cabinet error: \(result.summary)") }
            if reported && retry {
                let again = try rerun(work)
                guard again.status == 0 else { return .bad("the command fails again when rerun: \(again.summary)") }
            }
        } else {
            reported = result.output.contains("failed ")
            let expected: Int32 = reported && !retry ? 1 : 0      // 1: stopped after a reported failure
            guard result.status == expected else { return .bad(result.summary) }
        }
        if !reported || retry {
            let outcome = try classify(work, allowOld: false)
            guard outcome == .new else {
                return .bad((reported ? "reported and retried, but the store is " : "the failure was not reported, and the store is ") + "\(outcome)")
            }
            return reported ? .reported : .absorbed
        }
        // Reported, not retried: no trace, or committed and memory agrees.
        let pending = result.output.contains("pending: true"), committed = result.output.contains("pending: false")
        let outcome = try classify(work, allowOld: !committed, allowNew: !pending)
        switch outcome {
        case .old, .new, .partial: return .reported
        default:
            return .bad((pending ? "the save threw and memory keeps the changes pending, but the store is " :
                         committed ? "the save threw and memory says it is committed, but the store is " : "") + "\(outcome)")
        }
    }

    /// Replay's store: save-multi killed just after its journal was written.
    private func leaveJournalPending() throws {
        let log = base.path + "/journal.log", scratch = base.path + "/journal-count"
        try FileManager.default.copyItem(atPath: template, toPath: scratch)
        let environment = ["LD_PRELOAD": KillPointHarness.shim, "CABINET_KILLPOINT_ARM": "wait"]
        _ = try KillPointHarness.launch(KillPointHarness.child, ["run", "save-multi", scratch], environment.merging(["CABINET_KILLPOINT_LOG": log]) { $1 })
        let lines = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n")
        // The journal is decided by its write into the journal file (its state byte and the journal, whole).
        guard let index = lines.firstIndex(where: { $0.contains("write") && $0.hasSuffix("/.cabinet-journal") }) else {
            throw HarnessError("save-multi never writes a journal")
        }
        let killed = try KillPointHarness.launch(KillPointHarness.child, ["run", "save-multi", template],
                                                 environment.merging(["CABINET_KILLPOINT_KILL": "\(index + 2)"]) { $1 })
        guard killed.signaled, (try? TokyoCabinetBackend.hasPendingJournal(inDirectory: template + "/store")) == true else {
            throw HarnessError("save-multi killed after its journal's write left no journal: \(killed.summary)")
        }
    }

    /// Runs a process to its end with `environment` added to ours.
    static func launch(_ executable: String, _ arguments: [String], _ environment: [String: String] = [:]) throws -> ChildResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        // Under `make asan` and `make tsan` the children are sanitized too: leave SIGSEGV to the kernel, so
        // that a crash reads the same as without the sanitizer (see crashedInTokyoCabinetClose).
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("CABINET_KILLPOINT") && $0.key != "LD_PRELOAD" }
            .merging(["ASAN_OPTIONS": "handle_segv=0:symbolize=0", "TSAN_OPTIONS": "handle_segv=0:symbolize=0"]) { $1 }
            // Swift's backtracer hangs on a crashed child built with the sanitizer.
            .merging(KillPointHarness.sanitized ? ["SWIFT_BACKTRACE": "enable=no"] : [:]) { $1 }
            .merging(environment) { $1 }
        // One pipe for both: reading two pipes one after the other could block on a full one.
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return ChildResult(status: process.terminationStatus, signaled: process.terminationReason == .uncaughtSignal,
                           output: String(decoding: printed, as: UTF8.self))
    }
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The first line where two dumps differ, for failure messages.
func difference(_ expected: String, _ found: String) -> String {
    let a = expected.split(separator: "\n", omittingEmptySubsequences: false), b = found.split(separator: "\n", omittingEmptySubsequences: false)
    for index in 0..<max(a.count, b.count) {
        let x = index < a.count ? String(a[index]) : "nothing", y = index < b.count ? String(b[index]) : "nothing"
        if x != y { return "expected \"\(x)\", found \"\(y)\"" }
    }
    return "identical"
}
