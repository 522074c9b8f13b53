import ArgumentParser
import NotesAPI

/// The notes API on Cabinet's StorePool.
@main
struct NotesService: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notes-service",
        abstract: "The notes JSON API on Cabinet's StorePool (Tokyo Cabinet)."
    )

    @OptionGroup var options: ServiceOptions

    func run() async throws {
        try await options.run(label: "notes-service") { directory, logger in
            try CabinetNotes(directory: directory, logger: logger)
        } lifecycle: { notes, logger in
            StorePoolService(pool: notes.pool, logger: logger)
        }
    }
}
