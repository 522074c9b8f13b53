@testable import Cabinet
import CabinetStorage
import Foundation
import Logging
import Synchronization
import Testing

/// What a store cannot throw goes to its swift-log `Logger`, with where it happened.
@Suite struct LoggingTests {
    /// Keeps every message logged through the handlers it makes.
    final class Captured: Sendable {
        struct Entry: Sendable { var level: Logger.Level; var message: String; var metadata: [String: String] }
        let entries = Mutex<[Entry]>([])
        var all: [Entry] { entries.withLock { $0 } }
        func logger() -> Logger { Logger(label: "test") { _ in Handler(captured: self) } }
    }

    struct Handler: LogHandler {
        let captured: Captured
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            let flat = (event.metadata ?? [:]).mapValues { "\($0)" }
            captured.entries.withLock { $0.append(.init(level: event.level, message: "\(event.message)", metadata: flat)) }
        }
    }

    @Test func aFaultThatCannotLoadIsLoggedWithItsClassAndRow() throws {
        let directory = try makeSongStore(songs: 2)
        RawTokyoCabinet.write(directory.path + "/Song", [(RawTokyoCabinet.rowKey(2), [1, 0xFF, 0xFF, 0, 0])])
        let captured = Captured()
        let store = try ObjectStore(path: directory.path, logger: captured.logger())
        defer { store.close() }
        try store.register(Song.self, Playlist.self)
        let song = try store.fault(Song.self, rowID: 2)
        #expect(song.title == "")
        let errors = captured.all.filter { $0.level == .error }
        #expect(errors.count == 1)
        #expect(errors.first?.metadata["cabinet.class"] == "Song" && errors.first?.metadata["cabinet.row"] == "2")
        #expect(errors.first?.message.contains("row 2") == true)
    }

    @Test func aSaveFinishedFromItsJournalAtOpenIsLogged() throws {
        let directory = try makeSongStore(songs: 2)
        var journal = WriteBatch()
        RawTokyoCabinet.rowKey(9).withUnsafeBytes { key in journal.set(nil, forKey: key, inTable: "Playlist") }
        try Data(journal.encoded()).write(to: URL(fileURLWithPath: directory.path + "/" + TokyoCabinetBackend.journalFileName))
        let captured = Captured()
        let store = try ObjectStore(path: directory.path, logger: captured.logger())
        store.close()
        let notices = captured.all.filter { $0.level == .notice }
        #expect(notices.count == 1 && notices.first?.message.contains("journal") == true)
        #expect(notices.first?.metadata["cabinet.path"] == directory.path)
        let quiet = Captured()
        try ObjectStore(path: directory.path, logger: quiet.logger()).close()
        #expect(quiet.all.isEmpty, "nothing to finish, nothing logged")
    }
}
