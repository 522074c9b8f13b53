@testable import Cabinet
import Foundation
import Testing

/// Runs the misuse helper; how it ended and what it wrote to standard error.
private func runMisuse(_ mode: String) throws -> (signaled: Bool, status: Int32, stderr: String) {
    let directory = try TemporaryDirectory()
    let process = Process()
    process.executableURL = URL(fileURLWithPath: buildProductsDirectory + "/cabinet-misuse")
    process.arguments = [mode, directory.path + "/store"]
    // No crash backtracer: the message is what matters, and under AddressSanitizer
    // the backtracer's reads of the dead process's stack are reported and hang it.
    var environment = ProcessInfo.processInfo.environment
    environment["SWIFT_BACKTRACE"] = "enable=no"
    process.environment = environment
    let errors = Pipe()
    process.standardError = errors
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    let data = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationReason == .uncaughtSignal, process.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// Collects what a store's fault error handler is told.
private final class Reports {
    var errors: [CabinetError] = []
}

/// Misuse is reported, not silent: a fault of a closed store, a change made
/// while the store saves, a store used from two threads at once.
@Suite struct MisuseTests {
    @Test(arguments: BackendKind.allCases)
    func readingAFaultOfAClosedStoreTellsTheFaultErrorHandler(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        var store = try fixture.open()
        let song = Song(); song.title = "on disk"; song.seconds = 7
        let list = Playlist(); list.title = "L"; list.songs = [song]
        store.insert(song); store.insert(list)
        try store.save()
        store.close()

        store = try fixture.open()
        let fault = try #require(try store.fetchAll(Playlist.self).first?.songs.first)
        #expect(!fault.hasContent)
        let reports = Reports()
        store.faultErrorHandler = { reports.errors.append($0) }
        store.close()

        #expect(fault.title == "", "a fault of a closed store has no content to show")
        #expect(reports.errors == [.storeClosed(path: store.path)], "and the handler is told why")
        #expect(fault.seconds == 0)
        #expect(reports.errors.count == 1, "once, not at every read")
        #expect(throws: CabinetError.storeClosed(path: store.path)) { try store.load(fault) }
        #expect(fault.store == nil)
    }

    @Test(arguments: BackendKind.allCases)
    func aFaultOutlivingItsFreedStoreReportsTooAndFreesCleanly(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        var store: ObjectStore? = try fixture.open()
        let song = Song(); song.title = "on disk"
        store!.insert(song)
        try store!.save()
        store = nil

        store = try fixture.open()
        let reports = Reports()
        store!.faultErrorHandler = { reports.errors.append($0) }
        let path = store!.path
        var faults: [Song]? = [try store!.fault(Song.self, rowID: song.rowID), try store!.fault(Song.self, rowID: 99)]
        store = nil                                       // freed: its class entries stay only for the faults
        #expect(faults![0].title == "")
        #expect(faults![1].seconds == 0)
        #expect(reports.errors == [.storeClosed(path: path), .storeClosed(path: path)])
        faults = nil                                      // the last fault lets the entry go (AddressSanitizer checks it is freed once)
    }

    @Test func insertingFromWriteDuringSaveStopsTheProgramNamingIt() throws {
        let result = try runMisuse("insert-during-save")
        #expect(result.signaled, "it stopped (status \(result.status)): \(result.stderr)")
        #expect(result.stderr.contains("insert(_:) during save()"), "\(result.stderr)")
    }

    @Test func changingAnotherObjectFromWriteDuringSaveStopsTheProgramNamingIt() throws {
        let result = try runMisuse("change-during-save")
        #expect(result.signaled, "it stopped (status \(result.status)): \(result.stderr)")
        #expect(result.stderr.contains("a change to Item row 3 (a @Stored setter or willUpdate(_:)) during save()"), "\(result.stderr)")
    }

    @Test func savingFromWriteDuringSaveStopsTheProgramNamingIt() throws {
        let result = try runMisuse("save-during-save")
        #expect(result.signaled, "it stopped (status \(result.status)): \(result.stderr)")
        #expect(result.stderr.contains("save() during save()"), "\(result.stderr)")
    }

    @Test func writingATableInsideAReadOfItStopsTheProgramNamingIt() throws {
        // The read's bytes are in Tokyo Cabinet's map, where the write may move the record.
        let result = try runMisuse("write-inside-read")
        #expect(result.signaled, "it stopped (status \(result.status)): \(result.stderr)")
        #expect(result.stderr.contains("was written or closed inside a read of one of its records"), "\(result.stderr)")
    }

    @Test func closingFromAnEnumerateBodyStopsTheProgramNamingIt() throws {
        // The scan would go on adopting objects into the closed store's bookkeeping,
        // which they would then outlive.
        let result = try runMisuse("close-during-enumerate")
        #expect(result.signaled, "it stopped (status \(result.status)): \(result.stderr)")
        #expect(result.stderr.contains("close() was called from inside another call on the store"), "\(result.stderr)")
    }

    @Test func twoThreadsUsingOneStoreStopTheProgramNamingItNotCorruptingTheHeap() throws {
        let result = try runMisuse("two-threads")
        #expect(result.signaled, "it stopped (status \(result.status)): \(result.stderr)")
        #expect(result.stderr.contains("was used from two threads at once") && result.stderr.contains("StorePool"), "\(result.stderr)")
        #expect(!result.stderr.contains("AddressSanitizer") && !result.stderr.contains("malloc"), "\(result.stderr)")
    }

    @Test func readingAStoresBufferOnAnotherThreadWhileTheStoreIsInUseStopsTheProgram() throws {
        let result = try runMisuse("buffer-on-two-threads")
        #expect(result.signaled, "it stopped (status \(result.status)): \(result.stderr)")
        #expect(result.stderr.contains("was used from two threads at once"), "\(result.stderr)")
        #expect(!result.stderr.contains("AddressSanitizer") && !result.stderr.contains("malloc"), "\(result.stderr)")
    }

    @Test(arguments: BackendKind.allCases)
    func handingAStoreFromThreadToThreadBetweenOperationsIsFine(_ kind: BackendKind) async throws {
        // An actor's work may run on a different thread each time: only overlap is misuse.
        let fixture = try StoreFixture(kind)
        let box = StoreBox(try fixture.open())
        for round in 0..<20 {
            let thread = Thread { box.insertAndSave(round) }
            thread.start()
            while !thread.isFinished { try await Task.sleep(nanoseconds: 1_000_000) }
        }
        #expect(try box.store.fetchAll(Song.self).count == 20)
        box.store.close()
    }
}

/// A store handed between threads one at a time (allowed), for the test above.
private final class StoreBox: @unchecked Sendable {
    let store: ObjectStore
    init(_ store: ObjectStore) { self.store = store }
    func insertAndSave(_ round: Int) {
        let song = Song(); song.title = "round \(round)"
        store.insert(song)
        try? store.save()
    }
}
