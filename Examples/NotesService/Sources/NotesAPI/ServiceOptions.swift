import ArgumentParser
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle

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

    /// Opens the repository, seeds it if asked, then serves until SIGTERM or SIGINT:
    /// the app and the store's service (made by `lifecycle`) in the group that
    /// `makeServiceGroup` makes.
    public func run<Repository: NotesRepository>(
        label: String,
        open: (String, Logger) async throws -> Repository,
        lifecycle: (Repository, Logger) -> any Service = { RepositoryService(repository: $0, logger: $1) }
    ) async throws {
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
        } catch {
            // No group runs yet, so nothing else would close it.
            logger.error("stopping", metadata: ["error": "\(error)"])
            try? await repository.close()
            throw error
        }
        let group = makeServiceGroup(
            repository: repository, storeService: lifecycle(repository, logger), label: label,
            host: host, port: port, stopsOnSignals: true, logger: logger
        ) { [host] port in
            say("listening \(host):\(port)")
        }
        do {
            try await group.run()
        } catch {
            // The group cancelled the store's service, which closed the store before returning.
            logger.error("stopping", metadata: ["error": "\(error)"])
            throw error
        }
    }
}

/// The app on `repository` and `storeService` (which closes the repository
/// once graceful shutdown begins) in one `ServiceGroup`, as `ServiceOptions.run`
/// serves them; the tests run the same group in process.
///
/// The store is listed first because a group shuts its services down in
/// reverse order: the app stops accepting and finishes the requests in flight
/// (a live stream ends at graceful shutdown) before the store closes under them.
public func makeServiceGroup<Repository: NotesRepository>(
    repository: Repository, storeService: any Service, label: String, host: String, port: Int,
    stopsOnSignals: Bool, logger: Logger, onListening: @escaping @Sendable (Int) async -> Void
) -> ServiceGroup {
    let app = Application(
        router: makeRouter(repository: repository),
        configuration: .init(address: .hostname(host, port: port), serverName: label),
        onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
        logger: logger
    )
    return ServiceGroup(
        configuration: .init(
            services: [
                .init(service: storeService, serviceName: "store"),
                // If the app returns by itself, the store still closes in order, not cancelled.
                .init(service: app, successTerminationBehavior: .gracefullyShutdownGroup, serviceName: "http"),
            ],
            // SIGTERM and SIGINT start graceful shutdown (tests call `triggerGracefulShutdown()` instead).
            gracefulShutdownSignals: stopsOnSignals ? [.sigterm, .sigint] : [],
            logger: logger
        )
    )
}

/// A repository's lifetime as a service: waits for graceful shutdown, then closes
/// the repository (the GRDB service's; the Cabinet service has its own, `StorePoolService`).
public struct RepositoryService: Service {
    let repository: any NotesRepository
    let logger: Logger

    public init(repository: any NotesRepository, logger: Logger) {
        self.repository = repository
        self.logger = logger
    }

    public func run() async throws {
        // Returns when graceful shutdown begins; throws if the group is cancelled
        // instead (the app failed). The store is closed either way.
        try? await gracefulShutdown()
        try await repository.close()
        logger.info("closed", metadata: ["engine": "\(type(of: repository))"])
    }
}

/// A line on standard output, written at once (the bench scripts wait for it).
private func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
