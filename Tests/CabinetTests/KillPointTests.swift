import Foundation
import Synchronization
import Testing

/// Every operation that writes, killed (SIGKILL) just before each of its
/// file-changing system calls and made to fail at each of them (ENOSPC), through
/// the LD_PRELOAD shim of Tests/Helpers/KillPointShim. After a kill the store must
/// open cleanly, verify, and hold exactly its old or its new state; after a
/// failure the operation must report it, keep memory, and succeed when retried
/// (or, not retried, leave no trace). `make test` runs a subset of the points
/// (every structural call, and writes spread evenly); `make crashpoints`
/// (CABINET_KILLPOINTS=all) runs every point. See docs/CRASHPOINTS.md.
@Suite struct KillPointTests {
    static let cases: [KillPointCase] = [
        KillPointCase(name: "save-one", scenario: "save-one"),
        KillPointCase(name: "save-multi", scenario: "save-multi"),
        KillPointCase(name: "pool-group", scenario: "pool-group", pointsVary: true),
        KillPointCase(name: "pool-list", scenario: "pool-list", pointsVary: true),
        KillPointCase(name: "save-grow", scenario: "save-grow"),
        KillPointCase(name: "save-synced", scenario: "save-synced"),
        KillPointCase(name: "save-flushed", scenario: "save-flushed"),
        KillPointCase(name: "save-first", scenario: "save-first", expectation: .changes),
        KillPointCase(name: "save-new-class", scenario: "save-new-class"),
        KillPointCase(name: "save-list", scenario: "save-list", expectation: .everyClassChanges),
        KillPointCase(name: "save-indexed", scenario: "save-indexed", expectation: .everyClassChanges),
        KillPointCase(name: "compact", scenario: "compact", expectation: .keepsContent),
        KillPointCase(name: "backup", scenario: "backup", expectation: .changes),
        KillPointCase(name: "restore", scenario: "restore"),
        KillPointCase(name: "upgrade", scenario: "upgrade", expectation: .changes),
        KillPointCase(name: "replay", scenario: "replay", expectation: .keepsContent),
        KillPointCase(name: "cabinet compact", scenario: "compact", tool: ["compact", "{store}"], expectation: .keepsContent),
        KillPointCase(name: "cabinet backup", scenario: "backup", tool: ["backup", "{store}", "{backup}"], expectation: .changes),
        KillPointCase(name: "cabinet restore", scenario: "restore", tool: ["restore", "{backup}", "{store}"]),
        KillPointCase(name: "export", scenario: "export", expectation: .changes),
        KillPointCase(name: "import", scenario: "import", expectation: .changes),
        KillPointCase(name: "cabinet export", scenario: "export", tool: ["export", "{store}", "{backup}"], expectation: .changes),
        KillPointCase(name: "cabinet import", scenario: "import", tool: ["import", "{work}/mac", "{backup}"], expectation: .changes),
    ]

    /// The cases to run: all, or those CABINET_KILLPOINT_CASES names (comma-separated), to run one alone.
    static let selectedCases: [KillPointCase] = {
        guard let names = ProcessInfo.processInfo.environment["CABINET_KILLPOINT_CASES"]?.split(separator: ",").map(String.init) else { return cases }
        return cases.filter { names.contains($0.name) }
    }()

    @Test(arguments: selectedCases)
    func everyPointEndsOldOrNewAndEveryFailureIsRecoverable(_ testCase: KillPointCase) throws {
        let harness = try KillPointHarness(testCase)
        try harness.measure()
        try checkScenario(harness)
        let points = KillPointTests.points(harness.calls)
        let errno = Int32(ProcessInfo.processInfo.environment["CABINET_KILLPOINT_ERRNO"] ?? "") ?? ENOSPC
        var row = KillPointRow(name: testCase.name, points: harness.calls.count, tried: points.count)
        for k in points {
            row.kill.add(try harness.kill(at: k), point: k, harness: harness, mode: "killed before")
            row.retry.add(try harness.fail(at: k, errno: errno, retry: true), point: k, harness: harness, mode: "failed (retried) at")
            row.noRetry.add(try harness.fail(at: k, errno: errno, retry: false), point: k, harness: harness, mode: "failed (not retried) at")
            guard k <= harness.calls.count, harness.calls[k - 1].contains(".wal"), harness.calls[k - 1].contains("write") else { continue }
            for later in [1, 2, 3, 5, 8, 13] {
                row.failKill.add(try harness.failThenKill(at: k, later: later, errno: errno), point: k, harness: harness,
                                 mode: "failed, then killed \(later) calls later, at")
            }
        }
        KillPointTable.shared.record(row)
        // Guards the harness: a point no run reaches is "finished first" only when the
        // shim says the run ended before it; were that record missing, a kill would be bad here.
        let beyond = harness.calls.count + 1_000
        for outcome in [try harness.kill(at: beyond), try harness.fail(at: beyond, errno: errno, retry: false)] where outcome != .finishedFirst {
            Issue.record("\(testCase.name): a point beyond every run's end is \(outcome), not finished first")
        }
        // And the count the shim gives at the end is the run's: the counting run's, give or take what a pool varies.
        let slack = testCase.pointsVary ? 8 : 0
        if let end = harness.lastEnd, abs(end - harness.calls.count) > slack {
            Issue.record("\(testCase.name): a run that went to its end counted \(end) points, the counting run \(harness.calls.count)")
        }
        // Guards the harness: if the shim stopped failing calls, every point would pass as absorbed.
        if row.retry.tally["reported", default: 0] == 0 && row.retry.bad == 0 {
            Issue.record("\(testCase.name): no injected failure was ever reported: is the shim failing calls?")
        }
    }

    /// The scenario itself must be meaningful: old and new differ where the operation writes.
    private func checkScenario(_ harness: KillPointHarness) throws {
        let name = harness.testCase.name
        if harness.calls.isEmpty { Issue.record("\(name): the operation made no file-changing call") }
        let wrong = harness.newDump.split(separator: "\n").filter { $0.contains("BAD") || $0.contains("differs") }
        if !wrong.isEmpty { Issue.record("\(name): the unkilled operation's result is wrong: \(wrong.joined(separator: "; "))") }
        switch harness.testCase.expectation {
        case .keepsContent:
            if harness.oldDump != harness.newDump { Issue.record("\(name): the content changed: \(difference(harness.oldDump, harness.newDump))") }
        case .changes:
            if harness.oldDump == harness.newDump { Issue.record("\(name): old and new states are the same") }
        case .everyClassChanges:
            let sections = { (dump: String) -> [String: String] in
                var result: [String: String] = [:], current = ""
                for line in dump.split(separator: "\n") {
                    if line.hasPrefix("class ") { current = String(line.split(separator: ":")[0]) }
                    else if !line.hasPrefix("  ") { current = "" }
                    if !current.isEmpty { result[current, default: ""] += line + "\n" }
                }
                return result
            }
            let old = sections(harness.oldDump), new = sections(harness.newDump)
            if old.isEmpty { Issue.record("\(name): the old state has no class") }
            for (section, text) in old where new[section] == text {
                Issue.record("\(name): \(section) is the same before and after: the scenario does not test that file")
            }
        }
    }

    /// Every point with CABINET_KILLPOINTS=all (or when there are few); otherwise
    /// every call that is not a plain data write (opens, truncates, renames,
    /// unlinks, syncs), the first and last three, and a dozen writes spread evenly.
    static func points(_ calls: [String]) -> [Int] {
        let n = calls.count
        guard n > 0 else { return [] }
        if ProcessInfo.processInfo.environment["CABINET_KILLPOINTS"] == "all" || n <= 30 { return Array(1...n) }
        var chosen = Set([1, 2, 3, n - 2, n - 1, n])
        for (index, call) in calls.enumerated() where !["write ", "pwrite ", "pwrite64 "].contains(where: call.hasPrefix) {
            chosen.insert(index + 1)
        }
        for i in 0..<12 { chosen.insert(1 + (n - 1) * i / 11) }
        return chosen.sorted()
    }
}

/// One line of the table: how many points of each kind ended how.
struct KillPointRow: Sendable {
    struct Counts: Sendable {
        var tally: [String: Int] = [:]
        var bad = 0
        var badIssues = 0
        mutating func add(_ outcome: KillPointOutcome, point k: Int, harness: KillPointHarness, mode: String) {
            guard case .bad(let reason) = outcome else {
                tally["\(outcome)", default: 0] += 1
                return
            }
            bad += 1
            // Every bad point is a failure; the first ten of each kind say what went wrong.
            let message: String
            if badIssues < 10 {
                message = "\(harness.testCase.name): \(mode) \(harness.describe(point: k)): \(reason)"
            } else if badIssues == 10 {
                message = "\(harness.testCase.name): more points \(mode) are bad (see the table)"
            } else {
                return
            }
            badIssues += 1
            Issue.record(Comment(rawValue: message))
        }
        func text(_ kinds: [String]) -> String {
            (kinds.map { "\(tally[$0, default: 0]) \($0)" } + ["\(bad) bad"]).joined(separator: ", ")
        }
    }
    let name: String
    let points: Int
    let tried: Int
    var kill = Counts(), retry = Counts(), noRetry = Counts(), failKill = Counts()

    var markdown: String {
        "| \(name) | \(points) | \(tried) | \(kill.text(["old", "new", "partial", "finished first"])) | \(retry.text(["reported", "absorbed", "TC-close crash", "finished first"])) | \(noRetry.text(["reported", "absorbed", "TC-close crash", "finished first"])) | \(failKill.text(["old", "new", "finished first"])) |"
    }
}

/// The table of every case run so far, printed whole when the last case finishes.
final class KillPointTable: Sendable {
    static let shared = KillPointTable()
    private let rows = Mutex<[String: KillPointRow]>([:])

    func record(_ row: KillPointRow) {
        print("kill points: \(row.markdown)")
        let all: [KillPointRow]? = rows.withLock { rows in
            rows[row.name] = row
            return rows.count == KillPointTests.selectedCases.count ? KillPointTests.selectedCases.compactMap { rows[$0.name] } : nil
        }
        guard let all else { return }
        let header = """
            | operation | points | tried | killed: old / new / partial / finished first / bad | failed, retried: reported / absorbed / TC-close crash / finished first / bad | failed, not retried: reported / absorbed / TC-close crash / finished first / bad | a .wal write failed, then killed during recovery: old / new / finished first / bad |
            | --- | ---: | ---: | --- | --- | --- | --- |
            """
        print("\n" + ([header] + all.map(\.markdown)).joined(separator: "\n") + "\n")
    }
}

extension KillPointOutcome: CustomStringConvertible {
    var description: String {
        switch self {
        case .old: "old"
        case .new: "new"
        case .partial: "partial"
        case .finishedFirst: "finished first"
        case .reported: "reported"
        case .absorbed: "absorbed"
        case .crashedInTokyoCabinetClose: "TC-close crash"
        case .bad(let reason): reason
        }
    }
}
