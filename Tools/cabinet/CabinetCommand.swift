import ArgumentParser
import Cabinet
import Foundation

/// `cabinet`: look after a store from the command line. Every subcommand is a
/// thin layer over the library's public API.
@main
struct CabinetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cabinet",
        abstract: "Inspect, verify, back up, restore and compact a Cabinet store.",
        subcommands: [Info.self, Verify.self, Backup.self, Restore.self, Copy.self, Compact.self, Reindex.self, Import.self, Export.self]
    )
}

/// Runs `body`, turning a CabinetError into its message and exit status 1.
func reportingErrors(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as CabinetError {
        FileHandle.standardError.write(Data("\(error)\n".utf8))
        throw ExitCode.failure
    }
}

struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the store's classes: rows, versions, sizes, format.")
    @Argument(help: "The store directory, or a redis:// URL.") var store: String

    func run() throws {
        try reportingErrors {
            let info = StoreLocation.isRedis(store) ? try StoreInfo(backend: StoreLocation.source(store)) : try StoreInfo(path: store)
            print("Store: \(info.path) (\(info.recordFormat.rawValue) records)")
            let header = ["file", "rows", "last row", "version", "class ID", "bytes", "format"]
            var rows = [header]
            for table in info.tables {
                let isClass = table.lastRowID != nil
                rows.append([table.name, "\(max(table.records - (isClass ? 1 : 0), 0))",
                             table.lastRowID.map(String.init) ?? "-", table.classVersion.map(String.init) ?? "-",
                             table.classID.map(String.init) ?? "-", "\(table.bytes)",
                             table.transactionPending ? "transaction to roll back" : table.metadataFormat ?? "-"])
            }
            let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
            for row in rows {
                print(row.enumerated().map { $1.padding(toLength: widths[$0] + 2, withPad: " ", startingAt: 0) }.joined())
            }
            for pending in info.pendingRecovery {
                print("Pending: \(pending). The next writable open (the app, or `cabinet compact`) finishes it.")
            }
        }
    }
}

struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Read every record, read-only; exit 1 and name what is damaged or out of place.")
    @Argument(help: "The store directory, or a redis:// URL.") var store: String
    @OptionGroup var progress: ProgressOptions

    func run() throws {
        try reportingErrors {
            let problems = try progress.reporting("verify") { handler in
                StoreLocation.isRedis(store) ? try StoreVerifier.verify(StoreLocation.source(store), progress: handler)
                                             : try StoreVerifier.verify(path: store, progress: handler)
            }
            // A plain store's records carry no checksum: a changed byte inside one that still decodes can't be seen.
            // (A store too damaged for StoreInfo still gets its problems listed, without the note.)
            let info = StoreLocation.isRedis(store) ? try? StoreInfo(backend: StoreLocation.source(store)) : try? StoreInfo(path: store)
            let scope = info?.recordFormat == .plain
                ? " (a plain, BNRPersistence-format store: its records carry no checksums, so verify checks their structure only, not their content)"
                : ""
            guard !problems.isEmpty else {
                print("\(store): no damage found\(scope)")
                return
            }
            for problem in problems { print(problem) }
            print("\(problems.count) problem\(problems.count == 1 ? "" : "s") found\(scope)")
            throw ExitCode.failure
        }
    }
}

struct Backup: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Copy the store, as of its last save, to a new directory (also while an app has it open).")
    @Argument(help: "The store directory, or a redis:// URL.") var store: String
    @Argument(help: "A new (or empty) directory for the copy, or a redis:// URL (its store is replaced).") var destination: String
    @OptionGroup var progress: ProgressOptions

    func run() throws {
        try reportingErrors {
            if StoreLocation.isRedis(store) || StoreLocation.isRedis(destination) {
                // A store on a server has no lock to wait for: its saves are whole, and the copy reads them.
                let source = try StoreLocation.source(store)
                defer { source.close() }
                let opened = try ObjectStore(backend: source)
                defer { opened.close() }
                if StoreLocation.isRedis(destination) {
                    let target = try StoreLocation.target(destination)
                    defer { target.close() }
                    try progress.reporting("backup") { try opened.backup(into: target, progress: $0) }
                } else {
                    try progress.reporting("backup") { try opened.backup(to: destination, progress: $0) }
                }
                print("Backed up \(store) to \(destination)")
                return
            }
            let opened: ObjectStore
            do {
                // A reader: alongside the app that has the store open, as of its last save.
                opened = try ObjectStore(path: store, readOnly: true)
            } catch CabinetError.Code.recoveryPending {
                // A killed writer left a save to finish: a writable open finishes it first.
                opened = try ObjectStore(path: store, createIfMissing: false)   // a typo must not become a store
            }
            defer { opened.close() }
            try progress.reporting("backup") { try opened.backup(to: destination, progress: $0) }
            print("Backed up \(store) to \(destination)")
        }
    }
}

struct Restore: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Replace a store with a backup (the store must not be open).")
    @Argument(help: "The backup directory.") var backup: String
    @Argument(help: "The store directory to replace.") var store: String
    @OptionGroup var progress: ProgressOptions

    func run() throws {
        try reportingErrors {
            try progress.reporting("restore") { try ObjectStore.restore(from: backup, to: store, progress: $0) }
            print("Restored \(store) from \(backup)")
        }
    }
}

struct Copy: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy a store between a directory and a Redis server (or between any two): the target's content is replaced, all or nothing.",
        discussion: "cabinet copy /var/lib/music redis://127.0.0.1:6379/0/music, and back. A password goes in the URL (redis://:PASSWORD@host…) or in CABINET_REDIS_PASSWORD.")
    @Argument(help: "The store to copy: a directory, or a redis:// URL.") var source: String
    @Argument(help: "Where the copy goes: a directory (created if missing), or a redis:// URL.") var target: String
    @OptionGroup var progress: ProgressOptions

    func run() throws {
        try reportingErrors {
            let from = try StoreLocation.source(source)
            defer { from.close() }
            let to = try StoreLocation.target(target)
            defer { to.close() }
            try progress.reporting("copy") { try ObjectStore.restore(from: from, to: to, progress: $0) }
            let records = try from.tableNames().reduce(0) { $0 + (try from.openTable(named: $1).recordCount) }
            print("Copied \(from.path) to \(to.path): \(try from.tableNames().count) tables, \(records) records")
        }
    }
}

struct Compact: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Rewrite every file without its free space.")
    @Argument(help: "The store directory.") var store: String
    @OptionGroup var progress: ProgressOptions

    func run() throws {
        try reportingErrors {
            let opened = try ObjectStore(path: store, createIfMissing: false)   // a typo must not become a store
            defer { opened.close() }
            let before = try StoreInfoSummary.bytes(of: store)
            try progress.reporting("compact") { try opened.compact(progress: $0) }
            print("Compacted \(store): \(before) → \(try StoreInfoSummary.bytes(of: store)) bytes")
        }
    }
}

struct Reindex: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Remove the index files (of one class, if named): the app's next open of the store builds them again from the records.",
        discussion: "The indexes are defined by the app's classes, which this command does not have: it removes the files, which repairs a damaged one, and the app rebuilds them when it registers the classes.")
    @Argument(help: "The store directory.") var store: String
    @Argument(help: "A class's stored name (all classes when left out).") var className: String?

    func run() throws {
        try reportingErrors {
            let opened = try ObjectStore(path: store, createIfMissing: false)   // a typo must not become a store
            defer { opened.close() }
            let removed = try opened.dropIndexes(ofClass: className)
            if removed.isEmpty {
                print("\(store): no index file\(className.map { " of \($0)" } ?? "") to rebuild")
            } else {
                for file in removed { print("Removed \(file)") }
                print("The app's next open of \(store) builds \(removed.count == 1 ? "it" : "them") again from the records.")
            }
        }
    }
}

/// The total size of a store's files.
enum StoreInfoSummary {
    static func bytes(of path: String) throws -> UInt64 {
        let names = try FileManager.default.contentsOfDirectory(atPath: path)
        return names.reduce(0) { total, name in
            let size = (try? FileManager.default.attributesOfItem(atPath: path + "/" + name)[.size] as? UInt64) ?? 0
            return total + size
        }
    }
}
