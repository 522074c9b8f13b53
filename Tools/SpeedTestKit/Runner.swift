import Foundation

/// What to run: which workloads and engines, how big, how often.
public struct Plan: Sendable {
    public var workloads: [Workload] = Workload.allCases
    public var engines: [String] = allEngines.map { $0.name }
    public var sizes = Sizes()
    public var repetitions = 3
    /// This program, run again as the child that prepares and measures.
    public var executable: String
    /// Where the temporary stores go.
    public var scratchDirectory = FileManager.default.temporaryDirectory.path
    /// Whether the Tokyo Cabinet engines fsync at every commit (see ``Durability``).
    public var sync = false

    public init(executable: String) {
        self.executable = executable
    }
}

/// Several runs of one engine on one workload, summed up: the median wall time,
/// CPU time, peak RSS and query time, with the disk size and outcome of the last run.
public struct Result: Sendable {
    public var median: Sample
    public var samples: Int

    public init(median: Sample, samples: Int) {
        self.median = median
        self.samples = samples
    }
}

/// Where a plan is when a run starts: the runs done, of how many, and the one starting.
public struct PlanProgress: Sendable, CustomStringConvertible {
    /// Runs finished (of every engine × workload × repetition).
    public var done: Int
    public var total: Int
    /// The run starting: "simple-insert × cabinet, run 2 of 3".
    public var text: String
    public var description: String { "[\(done + 1)/\(total)] \(text)" }
}

/// Runs every engine × workload of `plan` in child processes, each in a fresh
/// directory, interleaving engines (A B C A B C) so drift hits all alike. An
/// engine that does not run a workload (``Engine/supports(_:)``) is left out of it.
/// `progress` is told as each run starts.
public func runPlan(_ plan: Plan, progress: (PlanProgress) -> Void) throws -> [Result] {
    var results: [Result] = []
    if plan.engines.contains(where: { engine(named: $0)?.usesRedis ?? false }) {
        _ = try SpeedTestRedis.url()   // started here, so every child uses this one server
    }
    func engines(for workload: Workload) -> [String] {
        plan.engines.filter { engine(named: $0)?.supports(workload) ?? true }
    }
    let total = plan.workloads.reduce(0) { $0 + plan.repetitions * engines(for: $1).count }
    var done = 0
    for workload in plan.workloads {
        var samples: [String: [Sample]] = [:]
        for repetition in 1...plan.repetitions {
            for engine in engines(for: workload) {
                progress(PlanProgress(done: done, total: total, text: "\(workload.rawValue) × \(engine), run \(repetition) of \(plan.repetitions)"))
                done += 1
                samples[engine, default: []].append(try runChild(engine, workload, plan))
            }
        }
        for engine in engines(for: workload) {
            let runs = samples[engine] ?? []
            guard let last = runs.last else { continue }
            guard runs.allSatisfy({ $0.outcome == last.outcome }) else {
                throw SpeedTestError("\(engine) gave different results for \(workload.rawValue) across runs")
            }
            var summary = last
            summary.wallSeconds = median(runs.map(\.wallSeconds))
            summary.cpuSeconds = median(runs.map(\.cpuSeconds))
            summary.rssBytes = Int(median(runs.map { Double($0.rssBytes) }))
            if let timing = last.outcome.queries {
                let timings = runs.compactMap(\.outcome.queries)
                func medianOf(_ part: KeyPath<QueryTiming, Double?>) -> Double? {
                    let values = timings.compactMap { $0[keyPath: part] }
                    return values.isEmpty ? nil : median(values)
                }
                summary.outcome.queries = QueryTiming(count: timing.count, seconds: median(timings.map(\.seconds)),
                                                      commitSeconds: medianOf(\.commitSeconds), plainCommitSeconds: medianOf(\.plainCommitSeconds),
                                                      afterReturnSeconds: medianOf(\.afterReturnSeconds))
            }
            results.append(Result(median: summary, samples: runs.count))
        }
    }
    return results
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// Prepares (in one child) and measures (in another) one run, in a directory removed afterwards.
func runChild(_ engine: String, _ workload: Workload, _ plan: Plan) throws -> Sample {
    let directory = plan.scratchDirectory + "/speedtest-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer {
        try? SpeedTestKit.engine(named: engine)?.cleanUp(directory: directory)
        try? FileManager.default.removeItem(atPath: directory)
    }
    let common = ["--engine", engine, "--workload", workload.rawValue, "--directory", directory] + sizeArguments(plan.sizes)
    if workload.preparation != .none {
        _ = try launch(plan.executable, ["child", "prepare"] + common, sync: plan.sync)
    }
    let output = try launch(plan.executable, ["child", "measure"] + common, sync: plan.sync)
    guard let line = output.split(separator: "\n").last,
          let sample = try? JSONDecoder().decode(Sample.self, from: Data(line.utf8)) else {
        throw SpeedTestError("the \(engine) child for \(workload.rawValue) printed no result: \(output)")
    }
    return sample
}

/// The command-line options that give a child `sizes`.
public func sizeArguments(_ sizes: Sizes) -> [String] {
    ["--songs", "\(sizes.songs)", "--complex-songs", "\(sizes.complexSongs)", "--playlists", "\(sizes.playlists)",
     "--playlist-size", "\(sizes.playlistSize)", "--buffer-references", "\(sizes.bufferReferences)",
     "--indexed-playlists", "\(sizes.indexedPlaylists)", "--queries", "\(sizes.queries)",
     "--live-songs", "\(sizes.liveSongs)", "--observations", "\(sizes.observations)"]
}

/// Runs a child to completion; its standard output, or an error with its output if it failed.
func launch(_ executable: String, _ arguments: [String], sync: Bool) throws -> String {
    let process = Process()
    var environment = ProcessInfo.processInfo.environment
    environment[Durability.environmentKey] = sync ? "1" : "0"
    if let redis = getenv(SpeedTestRedis.environmentKey) { environment[SpeedTestRedis.environmentKey] = String(cString: redis) }
    process.environment = environment
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let text = String(decoding: data, as: UTF8.self)
    guard process.terminationStatus == 0 else {
        throw SpeedTestError("\(arguments.prefix(2).joined(separator: " ")) failed (status \(process.terminationStatus)): \(text)")
    }
    return text
}
