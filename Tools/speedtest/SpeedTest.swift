import ArgumentParser
import Foundation
import SpeedTestKit
import TerminalProgress

/// `speedtest`: BNRPersistence's speed tests on Cabinet, GRDB and raw Tokyo Cabinet, side by side.
@main
struct SpeedTest: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "speedtest",
        abstract: "Compare Cabinet with SQLite (GRDB) and raw Tokyo Cabinet on BNRPersistence's workloads.",
        discussion: "Every engine × workload runs in a child process of its own, in a fresh temporary directory; the report gives medians.",
        subcommands: [Compare.self, Child.self],
        defaultSubcommand: Compare.self
    )
}

/// Workload sizes, shared by the parent and its children.
struct SizeOptions: ParsableArguments {
    @Option(help: "Songs in simple-insert, simple-fetch and the indexed library (indexed-*, fulltext, inverse).") var songs: Int?
    @Option(help: "Songs in the complex store (complex-*, simple-update).") var complexSongs: Int?
    @Option(help: "Playlists in the complex store.") var playlists: Int?
    @Option(help: "Songs per playlist.") var playlistSize: Int?
    @Option(help: "References in the named buffer.") var bufferReferences: Int?
    @Option(help: "Playlists of the indexed library (inverse), of playlist-size songs each.") var indexedPlaylists: Int?
    @Option(help: "Queries each query workload times (indexed-equal, indexed-range, fulltext, inverse).") var queries: Int?
    @Option(help: "Songs of the observation workloads' library (observe-*).") var liveSongs: Int?
    @Option(help: "Observations of observe-objects and observe-queries (observe-idle has ten times as many).") var observations: Int?

    func sizes(base: Sizes) -> Sizes {
        var sizes = base
        if let songs { sizes.songs = songs }
        if let complexSongs { sizes.complexSongs = complexSongs }
        if let playlists { sizes.playlists = playlists }
        if let playlistSize { sizes.playlistSize = playlistSize }
        if let bufferReferences { sizes.bufferReferences = bufferReferences }
        if let indexedPlaylists { sizes.indexedPlaylists = indexedPlaylists }
        if let queries { sizes.queries = queries }
        if let liveSongs { sizes.liveSongs = liveSongs }
        if let observations { sizes.observations = observations }
        return sizes
    }

    func validate() throws {
        for value in [songs, complexSongs, playlists, playlistSize, bufferReferences, indexedPlaylists, queries, liveSongs, observations].compactMap({ $0 }) where value < 1 {
            throw ValidationError("sizes must be at least 1")
        }
    }
}

struct Compare: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the comparison and print a table (the default).")

    @Flag(help: "Run everything at 1/10 of the default sizes.") var quick = false
    @Option(name: .customLong("repeat"), help: "Runs of each engine × workload; the report gives the median.") var repetitions = 3
    @Flag(name: .shortAndLong, help: "Draw no progress line (none is drawn either when standard error is not a terminal).") var quiet = false
    @Option(parsing: .upToNextOption, help: "Engines to run: cabinet grdb grdb-statement tc-raw cabinet-redis redis-raw redis-per-object.") var engines: [String] = []
    @Option(parsing: .upToNextOption, help: "Workloads to run (default: all).") var workloads: [String] = []
    @Flag(help: "Print one JSON array on standard output instead of a table.") var json = false
    @Flag(help: "Make the Tokyo Cabinet engines fsync every commit, as SQLite does by default.") var sync = false
    @Option(help: ArgumentHelp("Also draw the run as an SVG chart: each engine's time relative to Cabinet's, per workload.",
                               valueName: "file.svg")) var chart: String?
    @OptionGroup var sizeOptions: SizeOptions

    func validate() throws {
        guard repetitions >= 1 else { throw ValidationError("--repeat must be at least 1") }
        for name in engines where SpeedTestKit.engine(named: name) == nil {
            throw ValidationError("unknown engine '\(name)'; choose from \(allEngines.map { $0.name }.joined(separator: ", "))")
        }
        for name in workloads where Workload(rawValue: name) == nil {
            throw ValidationError("unknown workload '\(name)'; choose from \(Workload.allCases.map(\.rawValue).joined(separator: ", "))")
        }
    }

    func run() throws {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let bar = ProgressBar(quiet: quiet, style: .elapsed)
        var plan = Plan(executable: executable)
        plan.sizes = sizeOptions.sizes(base: quick ? Sizes().divided(by: 10) : Sizes())
        plan.repetitions = repetitions
        plan.sync = sync
        if !engines.isEmpty { plan.engines = engines }
        if !workloads.isEmpty { plan.workloads = workloads.compactMap(Workload.init(rawValue:)) }
        // Before the run, so its load average says what else was running, not the run itself.
        var machine = Machine.current()
        let results = try runPlan(plan) { line in
            bar.update(line.text, completed: line.done, total: line.total)
        }
        bar.finish()
        if json {
            print(try jsonReport(results))
        } else {
            print("Engines:")
            for engine in allEngines where plan.engines.contains(engine.name) {
                print("  \(engine.name.padding(toLength: 18, withPad: " ", startingAt: 0))\(engine.summary)")
            }
            print(tableReport(results))
        }
        if let chart {
            machine.loadAverageAtEnd = Machine.current().loadAverage
            let svg = SpeedChart(results: results, machine: machine, sizes: plan.sizes, repetitions: plan.repetitions, sync: sync).svg()
            let directory = URL(fileURLWithPath: chart).deletingLastPathComponent()
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try svg.write(toFile: chart, atomically: true, encoding: .utf8)
            FileHandle.standardError.write(Data("Chart: \(chart)\n".utf8))
        }
    }
}

/// What the parent runs in each child process.
struct Child: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Prepare or measure one run (used by speedtest itself).",
                                                    shouldDisplay: false)

    @Argument(help: "prepare or measure") var step: String
    @Option var engine: String
    @Option var workload: String
    @Option var directory: String
    @OptionGroup var sizeOptions: SizeOptions

    func run() throws {
        guard let engineType = SpeedTestKit.engine(named: engine), let workload = Workload(rawValue: workload) else {
            throw ValidationError("unknown engine or workload")
        }
        let sizes = sizeOptions.sizes(base: Sizes())
        switch step {
        case "prepare":
            try engineType.prepare(workload.preparation, sizes: sizes, directory: directory)
        case "measure":
            let sample = try measure(engineType, workload, sizes: sizes, directory: directory)
            print(String(decoding: try JSONEncoder().encode(sample), as: UTF8.self))
        default:
            throw ValidationError("step must be prepare or measure")
        }
    }
}
