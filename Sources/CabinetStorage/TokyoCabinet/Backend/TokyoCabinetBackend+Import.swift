import Foundation

/// What an import did: the tables it wrote, and what it could not read.
///
/// ```swift
/// let report = try ObjectStore.importStore(from: "/mnt/mac/library", to: "/var/lib/library")
/// for table in report.tables { print(table.name, table.records) }
/// for problem in report.problems { print(problem) }   // records missing from the new store
/// ```
public struct StoreImportReport: Sendable {
    /// One file of the source, written into the new store.
    public struct Table: Sendable, Equatable {
        /// The table's name: the class's stored name, or `NamedBuffers`.
        public var name: String
        /// The records written (the class metadata row included).
        public var records: Int
        /// The layout the source file was in.
        public var byteOrder: TokyoCabinetByteOrder
    }

    /// The store that was read.
    public var source: String
    /// The new store.
    public var destination: String
    /// Every table written, in name order.
    public var tables: [Table] = []
    /// Each damaged record or place of the source, with its file, class, row
    /// (when its key could be read) and offset: what is missing from the new store.
    /// Empty for a sound source.
    public var problems: [StorageProblem] = []
    /// Files of the source left out on purpose, each with why (a Mac's `.DS_Store`,
    /// an empty transaction log, a lock file).
    public var skipped: [String] = []
}

/// Importing a store whose Tokyo Cabinet files are in the other byte order (a
/// store written on a Mac, read on Debian), or in this one: every record is read
/// without Tokyo Cabinet (`TokyoCabinetHashFileReader`) and written into a new
/// store by this machine's Tokyo Cabinet, then checked record by record against
/// the source and by `verify`, all before the new store is renamed into place:
/// whole and checked, or not there at all.
extension TokyoCabinetBackend {
    /// Writes a new store at `destination` (a new or empty directory) with every
    /// sound record of the store at `source`, which is only read. The new store
    /// gets the source's format marker, or `defaultFormatMarker` if it has none;
    /// `verify` checks the written store (its path) before it is put in place, and
    /// its findings join the report's problems.
    ///
    /// Damaged records are left out and listed in the report's problems (at most
    /// ``TokyoCabinetHashFileReader/damageReportLimit`` per file); a source with
    /// files that are not part of a store, an unfinished transaction or save is
    /// refused before anything is written.
    package static func importStore(from source: String, to destination: String, defaultFormatMarker: String,
                                    progress: StoreProgress.Handler? = nil,
                                    verify: (String) throws -> [StorageProblem]) throws -> StoreImportReport {
        let contents = try ImportSource(directory: source)
        var report = StoreImportReport(source: source, destination: destination, problems: contents.unreadable, skipped: contents.skipped)
        try TokyoCabinetDirectory.publishDirectory(at: destination, what: "an import") { staging in
            var surveys: [TokyoCabinetHashFileReader.Survey] = []
            for (name, reader) in contents.tables {
                surveys.append(reader.survey { report.problems.append(problem($0, table: name, file: reader.path)) })
            }
            var counter = ProgressCounter(progress, total: surveys.reduce(0) { $0 + $1.count })
            try writeStore(into: staging) { target in
                try target.services.writeFormatMarker(contents.formatMarker ?? defaultFormatMarker)
                for ((name, reader), survey) in zip(contents.tables, surveys) {
                    counter.begin(name)
                    let table = try target.openTable(named: name)
                    try table.reserveCapacity(survey.count)
                    var keys = Set<[UInt8]>()
                    try target.writeRecords(toTable: name) { put in
                        try reader.forEachRecord(in: survey) { key, value in
                            counter.advance()
                            guard keys.insert(Array(key)).inserted else {
                                let duplicate = TokyoCabinetHashFileReader.Damage(offset: 0, key: Array(key), reason: "a second record with the same key (the first one read is imported)")
                                return report.problems.append(problem(duplicate, table: name, file: reader.path))
                            }
                            try put(key, value)
                        }
                    }
                    report.tables.append(.init(name: name, records: keys.count, byteOrder: reader.header.byteOrder))
                }
                if let catalog = contents.catalog { try target.services.writeCatalog(catalog) }
            }
            counter.finish()
            try compare(contents, surveys, withStoreAt: staging, report: report)
            report.problems += try verify(staging)
        }
        return report
    }

    /// Reads every record of the written store back and compares it with the source's.
    private static func compare(_ contents: ImportSource, _ surveys: [TokyoCabinetHashFileReader.Survey],
                                withStoreAt path: String, report: StoreImportReport) throws {
        var reading = Options()
        reading.readOnly = true
        reading.createIfMissing = false
        let copy = try TokyoCabinetBackend(directory: path, options: reading)
        defer { copy.close() }
        for (((name, reader), survey), written) in zip(zip(contents.tables, surveys), report.tables) {
            let table = try copy.openTable(named: name)
            func differs(_ why: String) -> CabinetError {
                .malformedRecord(RecordLocation(file: reader.path, className: name),
                                 reason: "the imported copy differs from the source (\(why)), so nothing was imported. Check that nothing writes to the source, then import again")
            }
            let records = try table.recordCount
            guard records == written.records else {
                throw differs("\(records) records written, \(written.records) read")
            }
            var keys = Set<[UInt8]>()
            try reader.forEachRecord(in: survey) { key, value in
                guard keys.insert(Array(key)).inserted else { return }
                let same = try table.withValue(forKey: key) { $0.elementsEqual(value) }
                guard same == true else { throw differs(same == nil ? "a record is missing" : "a record's bytes differ") }
            }
        }
    }

    private static func problem(_ damage: TokyoCabinetHashFileReader.Damage, table: String, file: String) -> StorageProblem {
        let row = damage.key.flatMap { $0.count == 4 ? $0.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)) } : nil }
        let place = damage.offset > 0 ? "at offset \(damage.offset): " : ""
        return StorageProblem(location: RecordLocation(file: file, className: table, rowID: row),
                              reason: place + damage.reason + (damage.recordLost ? "; not imported" : ""))
    }
}

/// The source directory of an import, sorted out before anything is written:
/// its tables (opened and mapped), its format marker and catalog, and what is
/// left out. Anything it cannot account for stops the import.
private struct ImportSource {
    var tables: [(name: String, reader: TokyoCabinetHashFileReader)] = []
    var formatMarker: String?
    var catalog: StoreCatalog?
    var skipped: [String] = []
    /// Files that start like Tokyo Cabinet's but cannot be read at all.
    var unreadable: [StorageProblem] = []

    init(directory: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CabinetError.notAStore(path: directory, reason: "there is no directory at that path")
        }
        func refuse(_ reason: String) -> CabinetError { .unsupportedFormat(path: directory, reason: reason) }
        for name in try TokyoCabinetDirectory.allNames(in: directory) {
            let path = directory + "/" + name
            switch name {
            case TokyoCabinetBackend.formatFileName:
                formatMarker = try DirectoryFiles.read(path).map { String(decoding: $0, as: UTF8.self) }
            case TokyoCabinetBackend.catalogFileName:
                catalog = try DirectoryFiles.read(path).map { try StoreCatalog(encoded: $0, file: path) }
            case StoreLock.fileName, CommitLock.fileName, CommitLock.turnFileName:
                skipped.append("\(name): a lock file of the app that wrote the store")
            case CommitAnnouncements.fileName:
                skipped.append("\(name): the last commit's announcement to readers, not part of the data")
            case ".DS_Store":
                skipped.append("\(name): the Mac Finder's folder settings")
            case _ where name.hasPrefix("._"):
                skipped.append("\(name): a Mac's extended attributes of \(name.dropFirst(2))")
            case _ where name.hasPrefix(".cabinet"):
                throw refuse("it holds \(name), a save or restore that Cabinet did not finish; open the store once with Cabinet where it was written (which finishes it), then copy it again")
            case _ where name.hasPrefix("."):
                skipped.append("\(name): a hidden file, not part of a store")
            default:
                try add(name, path: path, refuse)
            }
        }
        guard !tables.isEmpty else {
            throw CabinetError.notAStore(path: directory, reason: unreadable.isEmpty ? "it holds no Tokyo Cabinet file" : "none of its files can be read: \(unreadable.map(\.description).joined(separator: "; "))")
        }
    }

    private mutating func add(_ name: String, path: String, _ refuse: (String) -> CabinetError) throws {
        switch TokyoCabinetDirectory.classify(name, in: URL(fileURLWithPath: path).deletingLastPathComponent().path) {
        case .table:
            if let problem = TableName.problem(with: name) { throw refuse("the table '\(name)' \(problem)") }
            // Only a file named as Cabinet names index files: a class file whose type byte
            // is damaged must be reported, not left out.
            if name.hasSuffix(".index"), TokyoCabinetHashHeader.read(path: path)?.type == TokyoCabinetHashHeader.bTreeType {
                skipped.append("\(name): an index file, built again from the records when the store is opened with its classes")
                return
            }
            do {
                tables.append((name, try TokyoCabinetHashFileReader(path: path)))
            } catch let error as CabinetError where error.code == .notADatabase {
                // A file whose header is damaged: the rest of the store is still worth having.
                unreadable.append(StorageProblem(location: RecordLocation(file: path, className: name),
                                                 reason: "the whole file could not be read: \(error.reason ?? "\(error)"); not imported"))
            }
        case .transactionLog(_, let table, _):
            var status = stat()
            guard lstat(path, &status) == 0, status.st_size == 0 else {
                throw refuse("\(name) holds a transaction Tokyo Cabinet did not finish in \(table); open the store once where it was written (its Tokyo Cabinet rolls it back), then copy it again")
            }
            skipped.append("\(name): an empty transaction log")
        case .rebuildTemporary(_, let file):
            skipped.append("\(name): a copy of \(file) that Tokyo Cabinet's optimize left behind")
        case .foreign(_, let what):
            throw refuse("'\(name)' is \(what), and a store holds only Tokyo Cabinet files and Cabinet's own; move it out of the copy")
        }
    }
}
