// The driver of the campaign: a pristine store, its answers, then the rounds.
import Cabinet
import Foundation

final class Campaign: Sendable {
    struct Settings: Sendable {
        var rounds: Int
        var seed: UInt64
        var format: RecordFormat
        /// The files to damage (empty: every file of the store but its lock files).
        var files: [String]
        /// Seconds a round's reads may take before the round counts as a hang.
        var timeout: Double
        /// How many files are damaged and read at once.
        var jobs: Int = 2
    }

    /// How one round ended.
    enum Verdict: String, CaseIterable {
        case unaffected = "no effect"
        case cleanError = "clean error"
        case crash, hang
        case untypedError = "untyped error"
        case silent = "silent answer"

        var isFinding: Bool { self == .crash || self == .hang || self == .untypedError || self == .silent }
    }

    /// The operations whose answers are checks of the store, not data it returns.
    static let checks: Set<String> = ["verify", "verifyIndexes", "info"]

    let settings: Settings
    let root: String
    let pristine: String
    let reference: [String: String]

    init(_ settings: Settings) throws {
        self.settings = settings
        root = FileManager.default.temporaryDirectory.path + "/cabinet-hostile-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        pristine = root + "/pristine"
        try makeStore(at: pristine, format: settings.format)
        // The probe saves: it reads a copy, and every round copies the store as made.
        let undamaged = root + "/undamaged"
        try FileManager.default.copyItem(atPath: pristine, toPath: undamaged)
        let (status, output, _) = Campaign.runProbe(on: undamaged, timeout: 120)
        guard status == .exited(0) else { throw CampaignError("the undamaged store's probe ended with \(status)") }
        reference = Campaign.answers(output)
        if let failed = reference.first(where: { !$0.value.hasPrefix("ok") }) {
            throw CampaignError("the undamaged store answers '\(failed.key)' with '\(failed.value)'")
        }
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    /// Copies the pristine store to `directory` and damages `file` as round `round` does.
    func damagedCopy(file: String, round: Int, at directory: String) throws -> String {
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.copyItem(atPath: pristine, toPath: directory)
        var random = SeededGenerator(seed: settings.seed &* 0x100_0000_01B3 ^ UInt64(round) &+ UInt64(truncatingIfNeeded: file.hashValueStable))
        let damage = Damage.allCases.randomElement(using: &random)!
        let path = directory + "/" + file
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let how = damage.apply(to: &bytes, &random)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return "\(file): \(how)"
    }

    /// Runs every round; true if none ended in a finding.
    func run() throws -> Bool {
        let files = settings.files.isEmpty
            ? try FileManager.default.contentsOfDirectory(atPath: pristine).filter { !$0.hasSuffix("-lock") && !$0.hasPrefix(".cabinet-commit") }.sorted()
            : settings.files
        say("hostile files: \(settings.rounds) rounds per file, seed \(settings.seed), a \(settings.format.rawValue) store; files: \(files.joined(separator: " "))")
        let results = Results(count: files.count)
        DispatchQueue.concurrentPerform(iterations: settings.jobs) { job in
            for index in stride(from: job, to: files.count, by: settings.jobs) {
                let result = Result { try rounds(of: files[index]) }
                results.set(index, result)
                if case .success(let (counts, findings)) = result {
                    say("\(files[index]): " + Verdict.allCases.map { "\(counts[$0] ?? 0) \($0.rawValue)" }.joined(separator: ", ")
                        + findings.prefix(20).map { "\n" + $0 }.joined() + (findings.count > 20 ? "\n  … and \(findings.count - 20) more" : ""))
                }
            }
        }
        var clean = true
        say("\n| file | " + Verdict.allCases.map(\.rawValue).joined(separator: " | ") + " |")
        say("| --- |" + String(repeating: " ---: |", count: Verdict.allCases.count))
        for (file, result) in zip(files, results.all) {
            let (counts, findings) = try result.get()
            say("| \(file) | " + Verdict.allCases.map { "\(counts[$0] ?? 0)" }.joined(separator: " | ") + " |")
            clean = clean && findings.isEmpty
        }
        say(clean ? "no finding" : "findings: see above (replay a round with `replay --seed \(settings.seed) --file FILE --round N`)")
        return clean
    }

    /// Every round of one file: the count of each verdict, and the findings.
    func rounds(of file: String) throws -> ([Verdict: Int], [String]) {
        var counts: [Verdict: Int] = [:]
        var findings: [String] = []
        let work = root + "/work-" + file
        for round in 0..<settings.rounds {
            let how = try damagedCopy(file: file, round: round, at: work)
            let (verdict, detail) = judge(work)
            counts[verdict, default: 0] += 1
            if verdict.isFinding && (verdict != .silent || settings.format == .checksummed) {
                findings.append("  \(verdict.rawValue): round \(round), \(how): \(detail)")
            }
        }
        return (counts, findings)
    }

    /// Each file's outcome, filled in by the jobs.
    final class Results: @unchecked Sendable {
        private let lock = NSLock()
        private var results: [Result<([Verdict: Int], [String]), any Error>?]
        init(count: Int) { results = Array(repeating: nil, count: count) }
        func set(_ index: Int, _ result: Result<([Verdict: Int], [String]), any Error>) { lock.withLock { results[index] = result } }
        var all: [Result<([Verdict: Int], [String]), any Error>] { lock.withLock { results.map { $0 ?? .failure(CampaignError("not run")) } } }
    }

    /// Reads the damaged store at `work` in a child process and judges the round.
    func judge(_ work: String) -> (Verdict, String) {
        let (status, output, errors) = Campaign.runProbe(on: work, timeout: settings.timeout)
        switch status {
        case .timedOut: return (.hang, "no answer in \(settings.timeout) s")
        case .signalled(let signal): return (.crash, "signal \(signal): \(errors.split(separator: "\n").last ?? "")")
        case .exited(let code) where code != 0: return (.crash, "exit \(code): \(errors.split(separator: "\n").last ?? "")")
        case .exited: break
        }
        let answers = Campaign.answers(output)
        if let untyped = answers.first(where: { $0.value.contains("not a CabinetError") }) {
            return (.untypedError, "\(untyped.key): \(untyped.value)")
        }
        // Every operation that answered differently, so one replay shows them all.
        let differing = reference.sorted(by: { $0.key < $1.key }).compactMap { operation, expected -> String? in
            guard !Campaign.checks.contains(operation), let answer = answers[operation] else { return nil }   // not reached: the open failed
            return answer.hasPrefix("ok") && answer != expected ? operation : nil
        }
        if !differing.isEmpty {
            return (.silent, "\(differing.joined(separator: ", ")) answered differently without an error")
        }
        return answers.values.contains { $0.hasPrefix("error") } ? (.cleanError, "") : (.unaffected, "")
    }

    static func answers(_ output: String) -> [String: String] {
        var answers: [String: String] = [:]
        for line in output.split(separator: "\n") {
            let parts = line.split(separator: "\t", maxSplits: 1)
            if parts.count == 2 { answers[String(parts[0])] = String(parts[1]) }
        }
        return answers
    }

    enum Status: Equatable {
        case exited(Int32), signalled(Int32), timedOut
    }

    /// Runs this executable's `probe` on `store`, killing it after `timeout` seconds.
    static func runProbe(on store: String, timeout: Double) -> (Status, String, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
        process.arguments = ["probe", store]
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        let finished = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in finished.signal() }
        do { try process.run() } catch { return (.exited(127), "", "\(error)") }
        // Read while it runs, so a full pipe never blocks it.
        nonisolated(unsafe) var outText = Data(), errText = Data()
        let readers = DispatchGroup()
        DispatchQueue.global().async(group: readers) { outText = output.fileHandleForReading.readDataToEndOfFile() }
        DispatchQueue.global().async(group: readers) { errText = errors.fileHandleForReading.readDataToEndOfFile() }
        // Foundation leaves a pipe's descriptors open until the handles are freed,
        // which a long campaign outruns (the process ran out of descriptors
        // after about 6,000 rounds): closed here, once both readers are done.
        defer {
            for pipe in [output, errors] {
                try? pipe.fileHandleForReading.close()
                try? pipe.fileHandleForWriting.close()
            }
        }
        if finished.wait(timeout: .now() + timeout) == .timedOut {
            kill(process.processIdentifier, SIGKILL)
            finished.wait()
            readers.wait()
            return (.timedOut, "", "")
        }
        readers.wait()
        let status: Status = process.terminationReason == .uncaughtSignal ? .signalled(process.terminationStatus) : .exited(process.terminationStatus)
        return (status, String(decoding: outText, as: UTF8.self), String(decoding: errText, as: UTF8.self))
    }
}

struct CampaignError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension String {
    /// A hash that is the same in every process (Swift's `hashValue` is seeded per process).
    var hashValueStable: UInt64 {
        utf8.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
    }
}

/// Prints a line at once (standard output may be a file, which buffers).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
