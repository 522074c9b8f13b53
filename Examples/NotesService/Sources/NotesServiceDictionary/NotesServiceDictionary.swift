import ArgumentParser
import NotesAPI

/// The notes API over dictionaries in memory: the ceiling `make service-bench`
/// measures the two stores' services against (`--data` is accepted and unused).
@main
struct NotesServiceDictionary: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notes-service-dictionary",
        abstract: "The notes JSON API over Swift dictionaries in memory: no store, nothing kept."
    )

    @OptionGroup var options: ServiceOptions

    func run() async throws {
        try await options.run(label: "notes-service-dictionary") { _, logger in
            DictionaryNotes(logger: logger)
        }
    }
}
