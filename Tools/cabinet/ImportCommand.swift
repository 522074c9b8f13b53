import ArgumentParser
import Cabinet

/// `cabinet import`: a store whose Tokyo Cabinet files are in the other byte
/// order (a BNRPersistence store copied from a Mac) into a new store this
/// machine's Tokyo Cabinet reads, through ``ObjectStore/importStore(from:to:)``.
struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Convert a store written on a Mac (little-endian Tokyo Cabinet files) into a new store this machine opens: same rows, classes, versions and bytes.",
        discussion: "cabinet import ~/MacLibrary /var/lib/library. The source is only read; the new store is written whole or not at all, compared record by record with the source, then verified. Damaged records are left out and listed (exit status 1).")
    @Argument(help: "The store copied from a Mac (a BNRPersistence or Cabinet store directory).") var source: String
    @Argument(help: "A new (or empty) directory for the converted store.") var destination: String
    @OptionGroup var progress: ProgressOptions

    func run() throws {
        try reportingErrors {
            let report = try progress.reporting("import") { try ObjectStore.importStore(from: source, to: destination, progress: $0) }
            for table in report.tables {
                print("\(table.name): \(table.records) record\(table.records == 1 ? "" : "s") (\(table.byteOrder) in the source)")
            }
            for note in report.skipped { print("Left out \(note)") }
            guard report.problems.isEmpty else {
                for problem in report.problems { print(problem) }
                print("Imported \(source) into \(destination), but \(report.problems.count) problem\(report.problems.count == 1 ? " was" : "s were") found (above); the records marked 'not imported' are not in the new store")
                throw ExitCode.failure
            }
            print("Imported \(source) into \(destination): \(report.tables.count) files, \(report.tables.reduce(0) { $0 + $1.records }) records, checked against the source")
        }
    }
}

/// `cabinet export`: the other way, a copy of a store whose files a Mac's Tokyo
/// Cabinet (and BNRPersistence on it) reads, through ``ObjectStore/exportStore(to:byteOrder:)``.
struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy a store, as of its last save, into a new directory in the little-endian layout a Mac's Tokyo Cabinet reads (also while an app has it open).",
        discussion: "cabinet export /var/lib/library /srv/to-mac/library. Index files are left out: the next open with the app's classes builds them again.")
    @Argument(help: "The store directory.") var store: String
    @Argument(help: "A new (or empty) directory for the copy.") var destination: String
    @OptionGroup var progress: ProgressOptions

    func run() throws {
        try reportingErrors {
            let opened = try ObjectStore(path: store, readOnly: true)
            defer { opened.close() }
            let notes = try progress.reporting("export") { try opened.exportStore(to: destination, byteOrder: .littleEndian, progress: $0) }
            for note in notes { print("Left out \(note)") }
            print("Exported \(store) to \(destination) in the little-endian layout (a Mac's Tokyo Cabinet)")
        }
    }
}
