@testable import Cabinet
import Foundation
import Testing

/// The long operations call their progress handler with counts that only grow
/// and end at the total, on every backend; and `cabinet` draws no bar on a pipe.
@Suite struct ProgressTests {
    /// 2,500 songs (past two reporting intervals) and a playlist of them.
    private func fill(_ store: ObjectStore) throws {
        let list = Playlist(); list.title = "P"
        let songs = (0..<2_500).map { i in let song = Song(); song.title = "s\(i)"; return song }
        for song in songs { store.insert(song) }
        list.songs = songs
        store.insert(list)
        try store.save()
    }

    /// The records of every table of `backend` but the index files (which verify checks as a whole).
    private func records(_ backend: any StorageBackend, indexes: Bool = true) throws -> Int {
        try backend.tableNames().filter { indexes || !$0.hasSuffix(ClassIndexes.suffix) }
            .reduce(0) { $0 + (try backend.openTable(named: $1).recordCount) }
    }

    /// Reports that only grow, never pass their total, pass through the
    /// intervals in between, and end with `expected` of `expected`.
    private func check(_ reports: [StoreProgress], end expected: Int, _ operation: String,
                       sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(reports.count >= 2, "\(operation): \(reports)", sourceLocation: sourceLocation)
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.completed <= $1.completed }, "\(operation) went back: \(reports)",
                sourceLocation: sourceLocation)
        #expect(reports.allSatisfy { report in report.total.map { report.completed <= $0 } ?? true }, "\(operation) passed its total: \(reports)",
                sourceLocation: sourceLocation)
        #expect(reports.last == StoreProgress(what: reports.last?.what ?? "", completed: expected, total: expected),
                "\(operation) ended at \(String(describing: reports.last)), not \(expected)", sourceLocation: sourceLocation)
    }

    @Test(arguments: BackendKind.allCases)
    func verifyBackupRestoreAndCompactReportEveryRecord(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open(Song.self, Playlist.self)
        try fill(store)
        let all = try records(store.backend)
        #expect(all > 2_500)

        var reports: [StoreProgress] = []
        let snapshot = MemoryBackend(name: "snapshot")
        try store.backup(into: snapshot) { reports.append($0) }
        check(reports, end: all, "backup(into:)")
        #expect(reports.contains { $0.what == "Song" && $0.completed >= StoreProgress.reportingInterval })

        reports = []
        let directory = try TemporaryDirectory()
        try store.backup(to: directory.path + "/copy") { reports.append($0) }
        check(reports, end: all, "backup(to:)")

        reports = []
        try store.compact { reports.append($0) }
        check(reports, end: all, "compact()")
        #expect(Set(reports.map(\.what)).isSuperset(of: ["Song", "Playlist"]))
        // A Tokyo Cabinet file is copied record by record, and reported so: its start, two intervals, its end.
        #expect(reports.filter { $0.what == "Song" }.count >= (kind == .tokyoCabinet ? 4 : 2), "\(reports)")
        store.close()

        reports = []
        let backend = try fixture.backend()
        #expect(try StoreVerifier.verify(backend) { reports.append($0) }.isEmpty)
        let scanned = try records(backend, indexes: false)
        check(reports, end: scanned, "verify")
        #expect(reports.last?.what == "lists and indexes")

        reports = []
        try ObjectStore.restore(from: snapshot, to: backend) { reports.append($0) }
        check(reports, end: all, "restore(from:to:) of backends")
        backend.close()

        if kind == .tokyoCabinet {
            reports = []
            try ObjectStore.restore(from: directory.path + "/copy", to: fixture.storePath) { reports.append($0) }
            check(reports, end: all, "restore(from:to:) of directories")
            reports = []
            #expect(try StoreVerifier.verify(path: fixture.storePath) { reports.append($0) }.isEmpty)
            check(reports, end: scanned, "verify(path:)")
        }
        let reopened = try fixture.open(Song.self, Playlist.self)
        #expect(try reopened.count(of: Song.self) == 2_500)
        reopened.close()
    }

    @Test(arguments: BackendKind.allCases)
    func upgradeAllReportsTheClassRecords(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        do {
            let store = try fixture.open(PersonV1.self)
            for i in 0..<2_300 { let p = PersonV1(); p.phone = "555-\(i)"; store.insert(p) }
            try store.save()
            store.close()
        }
        let store = try fixture.open(PersonV2.self)
        var reports: [StoreProgress] = []
        #expect(try store.upgradeAll(PersonV2.self, batchSize: 700) { reports.append($0) } == 2_300)
        check(reports, end: 2_300, "upgradeAll")
        #expect(reports.allSatisfy { $0.what == "Person" })
        // Nothing left to rewrite: every record is read again, and reported.
        reports = []
        #expect(try store.upgradeAll(PersonV2.self) { reports.append($0) } == 0)
        check(reports, end: 2_300, "upgradeAll again")
        store.close()
    }

    @Test func aStoreWithoutPerInstanceVersionsReportsItsOneStepUpgrade() throws {
        let fixture = try StoreFixture(.tokyoCabinet)
        let plain = ObjectStore.Options(perInstanceVersioning: false)
        do {
            let store = try fixture.open(PersonV1.self, options: plain)
            for i in 0..<1_500 { let p = PersonV1(); p.phone = "\(i)"; store.insert(p) }
            try store.save()
            store.close()
        }
        let store = try fixture.open(PersonV2.self, options: plain)
        var reports: [StoreProgress] = []
        try store.upgradeAllClassesNeedingUpgrade { reports.append($0) }
        check(reports, end: 1_500, "upgradeAllClassesNeedingUpgrade")
        store.close()
    }

    /// The README's sample: a backup that prints how far it has got.
    @Test func theReadmeSamplePrintsHowFarABackupHasGot() throws {
        let directory = try TemporaryDirectory()
        let store = try ObjectStore(backend: MemoryBackend())
        try store.register(Song.self, Playlist.self)
        try fill(store)
        let backupPath = directory.path + "/backup"
        try store.backup(to: backupPath) { progress in
            print("\(progress.what): \(progress.completed) of \(progress.total ?? 0) records")
        }
        #expect(try StoreVerifier.verify(path: backupPath).isEmpty)
        store.close()
    }

    /// On a pipe (as here) the tool draws nothing: standard error stays empty,
    /// with or without `--quiet` (which every command that reports takes), and
    /// standard output has only the result.
    @Test func theToolDrawsNoProgressOnAPipe() throws {
        let directory = try TemporaryDirectory()
        let store = directory.path + "/store"
        let opened = try ObjectStore(path: store)
        try opened.register(Song.self, Playlist.self)
        try fill(opened)
        opened.close()
        for quiet in [[], ["--quiet"], ["-q"]] {
            let backup = directory.path + "/backup\(quiet.first ?? "")", copy = directory.path + "/copy\(quiet.first ?? "")"
            for command in [["verify", store], ["compact", store], ["backup", store, backup], ["restore", backup, store], ["copy", store, copy]] {
                let result = try runSeparately(cabinetToolPath, command + quiet)
                #expect(result.status == 0, "\(command + quiet): \(result.error)")
                #expect(result.error.isEmpty, "\(command + quiet) wrote on standard error: \(result.error.debugDescription)")
                #expect(result.output.split(separator: "\n").count == 1 && !result.output.contains("\r"),
                        "\(command + quiet): \(result.output.debugDescription)")
            }
        }
    }
}

/// Runs `executable` to its end, with its standard output and standard error apart.
func runSeparately(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String, error: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let output = Pipe(), error = Pipe()
    process.standardOutput = output
    process.standardError = error
    try process.run()
    // One after the other: the tool writes a line or two, far below a pipe's buffer.
    let outputData = output.fileHandleForReading.readDataToEndOfFile()
    let errorData = error.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: outputData, as: UTF8.self), String(decoding: errorData, as: UTF8.self))
}
