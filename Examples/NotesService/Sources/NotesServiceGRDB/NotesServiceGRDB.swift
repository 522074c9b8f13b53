import ArgumentParser
import NotesAPI

/// The notes API on GRDB's DatabasePool: the comparison for `make service-bench`.
@main
struct NotesServiceGRDB: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notes-service-grdb",
        abstract: "The notes JSON API on GRDB's DatabasePool (SQLite, WAL)."
    )

    @OptionGroup var options: ServiceOptions

    func run() async throws {
        try await options.run(label: "notes-service-grdb") { directory, logger in
            try GRDBNotes(directory: directory, logger: logger)
        }
    }
}
