import ArgumentParser
import Foundation
import Hummingbird
import Logging

/// The command line both services share: where the data lives, where to listen, what to seed.
public struct ServiceOptions: ParsableArguments, Sendable {
    @Option(help: "The data directory (created if missing).")
    public var data: String

    @Option(help: "The address to listen on.")
    public var host = "127.0.0.1"

    @Option(help: "The port (0: any free one; the one chosen is printed as `listening HOST:PORT`).")
    public var port = 8080

    @Option(help: "Loose notes to create before serving (prints `seeded {json}`).")
    public var seedNotes = 0

    @Option(help: "Notes in one notebook to create before serving.")
    public var seedNotebookNotes = 0

    @Option(help: "trace, debug, info, notice, warning, error or critical (debug logs every request).")
    public var logLevel = "info"

    public init() {}

    /// Opens the repository, seeds it if asked, serves until SIGTERM or SIGINT, then closes it.
    public func run(label: String, open: (String, Logger) async throws -> any NotesRepository) async throws {
        var logger = Logger(label: label)
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        let repository = try await open(data, logger)
        do {
            if seedNotes > 0 || seedNotebookNotes > 0 {
                let start = ContinuousClock.now
                let summary = try await repository.seed(notes: seedNotes, notebookNotes: seedNotebookNotes)
                let json = try String(decoding: JSONEncoder().encode(summary), as: UTF8.self)
                logger.info("seeded", metadata: ["summary": "\(json)", "took": "\(ContinuousClock.now - start)"])
                say("seeded \(json)")
            }
            let app = Application(
                router: makeRouter(repository: repository),
                configuration: .init(address: .hostname(host, port: port), serverName: label),
                onServerRunning: { channel in
                    say("listening \(host):\(channel.localAddress?.port ?? 0)")
                },
                logger: logger
            )
            try await app.runService()
        } catch {
            logger.error("stopping", metadata: ["error": "\(error)"])
            try? await repository.close()
            throw error
        }
        try await repository.close()
        logger.info("closed", metadata: ["data": "\(data)"])
    }
}

/// A line on standard output, written at once (the bench scripts wait for it).
private func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
