@testable import Cabinet
@testable import CabinetStorage
import CTokyoCabinet
import Foundation
import Testing

/// CabinetError is a struct whose codes can grow: apps match the code, read the
/// parts as properties, and print a message that names file, class and row.
@Suite struct ErrorTests {
    @Test func aCodeIsMatchedByComparisonByCatchPatternAndBySwitch() throws {
        let directory = try TemporaryDirectory()
        let first = try ObjectStore(path: directory.path)
        defer { first.close() }

        var matched: [String] = []
        do {
            _ = try ObjectStore(path: directory.path)
        } catch let error as CabinetError where error.code == .storeLocked {
            matched.append("where \(error.path == directory.path && error.pid == getpid())")
        }
        do {
            _ = try ObjectStore(path: directory.path)
        } catch CabinetError.Code.storeClosed {
            matched.append("wrong code")
        } catch CabinetError.Code.storeLocked {
            matched.append("pattern")
        }
        do {
            _ = try ObjectStore(path: directory.path)
        } catch let error as CabinetError {
            switch error.code {
            case .storeClosed: matched.append("wrong case")
            case .storeLocked: matched.append("switch")
            default: matched.append("default")
            }
            #expect(!(CabinetError.Code.storeClosed ~= error))
            #expect(!(CabinetError.Code.storeLocked ~= CocoaError(.fileNoSuchFile)), "another error type is never a match")
        }
        #expect(matched == ["where true", "pattern", "switch"])
        #expect(CabinetError.Code.storeLocked.description == "storeLocked")
        #expect(CabinetError.Code(rawValue: "storeLocked") == .storeLocked)
    }

    @Test func theReadmeSampleCatchesByCode() throws {
        let directory = try TemporaryDirectory()
        let store = try ObjectStore(path: directory.path)
        try store.register(Song.self)
        let song = try store.fault(Song.self, rowID: 7)   // no such row
        var caught: CabinetError.Code?
        do {
            try store.load(song)
        } catch let error as CabinetError where error.code == .missingRecord {
            caught = error.code
            #expect(error.location == RecordLocation(file: directory.path + "/Song", className: "Song", rowID: 7))
            print("no record at row \(error.location?.rowID ?? 0); it was deleted")
        } catch CabinetError.Code.storeClosed {
            print("the store is closed; open it again")
        } catch {
            print(error)   // says what happened, where, and what to do
        }
        #expect(caught == .missingRecord)
        store.close()
        #expect(throws: CabinetError.storeClosed(path: directory.path)) { try store.load(song) }
    }

    /// Tokyo Cabinet's codes and the system's errno are told apart by `underlying.domain`.
    @Test func aTokyoCabinetFailureAndASystemCallFailureCarryDifferentUnderlyingKinds() throws {
        let directory = try makeSongStore(format: .plain)
        let song = directory.path + "/Song"
        // A damaged record header (the metadata row's): reported with Tokyo Cabinet's code for it
        // (Cabinet's own walk finds it: Tokyo Cabinet is never handed a damaged record).
        let hdb = try #require(tchdbnew())
        #expect(tchdbopen(hdb, song, Int32(HDBOREADER)))
        let firstRecord = UInt64(hdb.pointee.frec)
        _ = tchdbclose(hdb)
        tchdbdel(hdb)
        let file = try FileHandle(forUpdating: URL(fileURLWithPath: song))
        try file.seek(toOffset: firstRecord)
        try file.write(contentsOf: [0x41])
        try file.close()
        let reader = try ObjectStore(path: directory.path, readOnly: true)
        let tokyoCabinet = try #require(expectCabinetError({ try reader.register(Song.self) }) { $0.code == .backendFailure })
        #expect(tokyoCabinet.underlying?.domain == .tokyoCabinet && tokyoCabinet.underlying?.code == Int32(TCERHEAD))
        #expect(tokyoCabinet.underlying?.message.hasPrefix("invalid record header at offset \(firstRecord)") == true)
        #expect(tokyoCabinet.location?.file == song && tokyoCabinet.operation == "read")
        reader.close()

        // A journal that is a directory: a file-system problem, with an errno.
        try? FileManager.default.removeItem(atPath: directory.path + "/.cabinet-journal")   // the writer's, holding no journal
        try FileManager.default.createDirectory(atPath: directory.path + "/.cabinet-journal", withIntermediateDirectories: false)
        let system = try #require(expectCabinetError({ _ = try ObjectStore(path: directory.path) }) { $0.code == .systemCallFailure })
        #expect(system.underlying == .posix(errno: EINVAL, message: "it is not a regular file; move it out of the store directory"))
        #expect(system.location?.file == directory.path + "/.cabinet-journal")
        #expect(system.description.contains("(errno \(EINVAL))") && tokyoCabinet.description.contains("(error code \(TCERHEAD))"))
        #expect(system.underlying != tokyoCabinet.underlying)
    }

    /// A backend that is neither Tokyo Cabinet nor the system (a key-value server)
    /// reports its own failures in its own domain, not as Tokyo Cabinet codes.
    @Test func anyBackendReportsAFailureInItsOwnDomain() {
        let redis = CabinetError.Underlying.Domain(rawValue: "foundationdb")
        let location = RecordLocation(file: "redis://host/music/Song")
        let error = CabinetError.backendFailure(location, operation: "GET",
                                                underlying: CabinetError.Underlying(domain: redis, code: 1, message: "connection lost"))
        #expect(error.code == .backendFailure && error.location == location && error.operation == "GET")
        #expect(error.underlying?.domain == redis && error.underlying?.code == 1)
        #expect("\(error)" == "Cabinet: GET failed on 'redis://host/music/Song': connection lost (foundationdb error code 1).")
        #expect(CabinetError.backendFailure(location, operation: "GET", underlying: .tokyoCabinet(code: 9, message: "m"))
            == .backendFailure(location, operation: "GET", code: 9, message: "m"), "the Tokyo Cabinet factory is this one in its domain")
    }

    /// Messages are built from the parts, word for word as before, naming file, class and row.
    @Test func descriptionsNameTheFileClassAndRowAndSayWhatToDo() {
        let row = RecordLocation(file: "/tmp/music/Song", className: "Song", rowID: 2)
        #expect("\(CabinetError.truncatedRecord(row, offset: 6, needed: 4, available: 1))"
            == "Cabinet: the record at '/tmp/music/Song', class Song, row 2 is truncated: reading 4 bytes at offset 6, only 1 left. The record is damaged or was written by a different class layout.")
        #expect("\(CabinetError.missingRecord(row))"
            == "Cabinet: there is no record at '/tmp/music/Song', class Song, row 2. The object was deleted, or a reference to it is damaged.")
        #expect("\(CabinetError.storeLocked(path: "/tmp/music", pid: 4242))"
            == "Cabinet: the store '/tmp/music' is locked by process 4242. Close it there first, or open a copy.")
        #expect("\(CabinetError.storeLocked(path: "/tmp/music", pid: nil))".contains("locked by another process."))
        #expect("\(CabinetError.missingClassFile(RecordLocation(file: "/tmp/music/Song", className: "Song"), classID: 0))"
            .hasPrefix("Cabinet: '/tmp/music/Song', class Song is missing: the store's catalog lists the class (class ID 0), but its file is gone."))
        #expect("\(CabinetError.backendFailure(RecordLocation(file: "/tmp/music/Song"), operation: "write", code: 9, message: "write error"))"
            == "Cabinet: write failed on '/tmp/music/Song': write error (error code 9).")
        #expect("\(CabinetError.systemCallFailure(RecordLocation(file: "/tmp/music/.cabinet-journal"), operation: "sync journal", errno: 5, message: "Input/output error"))"
            == "Cabinet: sync journal failed on '/tmp/music/.cabinet-journal': Input/output error (errno 5).")
        #expect("\(CabinetError.invalidStoredName(className: "Log", name: "Song.wal", reason: "is a transaction log's name"))"
            == "Cabinet: cannot register Log: its stored name 'Song.wal' is a transaction log's name. Give the class another storedName.")
        #expect("\(CabinetError.noStoreForReferences)".hasPrefix("Cabinet: this DataBuffer belongs to no store"))
        #expect("\(CabinetError(CabinetError.Code(rawValue: "future"), location: row, reason: "something new"))"
            == "Cabinet: future at '/tmp/music/Song', class Song, row 2: something new.")
    }

    /// The sites whose case used to mean two things now say which.
    @Test func aBadStoredNameAndAFullStoreAreNotClassConflicts() throws {
        final class Log: StoredObject { override class var storedName: String { "Song.wal" } }
        final class Twin: StoredObject { override class var storedName: String { "Song" } }
        let backend = MemoryBackend()
        try backend.writeCatalog(StoreCatalog(tables: Dictionary(uniqueKeysWithValues: (0...255).map { ("C\($0)", UInt8?(UInt8($0))) })))
        let store = try ObjectStore(backend: backend)
        let badName = try #require(expectCabinetError({ try store.register(Log.self) }) { $0.code == .invalidStoredName })
        #expect(badName.name == "Song.wal" && badName.className == "\(Log.self)" && badName.reason?.contains("'.wal'") == true)
        let full = try #require(expectCabinetError({ try store.register(Song.self) }) { $0.code == .tooManyClasses })
        #expect(full.className == "Song" && full.limit == 256)
        #expect("\(full)".contains("the store already has 256 classes"))

        let roomy = try ObjectStore(backend: MemoryBackend())
        try roomy.register(Song.self)
        let conflict = try #require(expectCabinetError({ try roomy.register(Twin.self) }) { $0.code == .classConflict })
        #expect(conflict.className == "\(Twin.self)" && conflict.reason?.contains("stored name 'Song'") == true)
    }

    @Test func anUndoWithoutItsStoreNamesTheStore() throws {
        let store = try ObjectStore(backend: MemoryBackend(name: "undo-store"))
        try store.register(Song.self)
        store.insert(Song())
        store.undoManager.store = nil    // as after a close, with a group still to undo
        #expect(throws: CabinetError.storeClosed(path: "undo-store")) { try store.undoManager.undo() }
        store.undoManager.store = store
    }

    @Test func errorsAreEqualWhenAllTheirPartsAre() {
        let row = RecordLocation(file: "f", className: "Song", rowID: 2)
        #expect(CabinetError.malformedRecord(row, reason: "bad") == .malformedRecord(row, reason: "bad"))
        #expect(CabinetError.malformedRecord(row, reason: "bad") != .malformedRecord(row, reason: "worse"))
        #expect(CabinetError.malformedRecord(row, reason: "bad") != .checksumMismatch(row, reason: "bad"))
        #expect(CabinetError.malformedRecord(row, reason: "bad") != .malformedRecord(RecordLocation(file: "f", className: "Song", rowID: 3), reason: "bad"))
        #expect(CabinetError.storeLocked(path: "p", pid: 1) != .storeLocked(path: "p", pid: 2))
        #expect(CabinetError.storeLocked(path: "p", pid: nil) != .storeLocked(path: "p", pid: 2))
        #expect(CabinetError.backendFailure(row, operation: "write", code: 28, message: "full")
            != .systemCallFailure(row, operation: "write", errno: 28, message: "full"), "the same number in another domain")
        #expect(CabinetError.newerVersion(row, recordVersion: 3, classVersion: 2) == .newerVersion(row, recordVersion: 3, classVersion: 2))
        #expect(CabinetError.newerVersion(row, recordVersion: 3, classVersion: 2) != .newerVersion(row, recordVersion: 3, classVersion: 1))
    }

    /// The caller's own process holds the store: the message says so, and what to use instead.
    @Test func theSameStoreOpenedTwiceInOneProcessSaysItIsThisProcess() throws {
        let directory = try TemporaryDirectory()
        let first = try ObjectStore(path: directory.path)
        defer { first.close() }
        let error = try #require(expectCabinetError({ _ = try ObjectStore(path: directory.path) }) { $0.code == .storeLocked })
        #expect("\(error)".contains("this process already has the store") && "\(error)".contains("StorePool"), "\(error)")
        #expect(!"\(error)".contains("locked by process"), "\(error)")
    }

    /// A forgotten `write(to:)` would save empty records and lose every value:
    /// refused at register, naming the properties and what to do.
    @Test func aClassThatDeclaresStoredPropertiesButWritesNothingIsRefused() throws {
        final class Forgotten: StoredObject {
            @Stored var title = ""
            @Stored var plays: UInt32 = 0
        }
        final class Empty: StoredObject {}      // nothing to store: fine
        let directory = try TemporaryDirectory()
        let store = try ObjectStore(path: directory.path)
        defer { store.close() }
        let before = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        let error = try #require(expectCabinetError({ try store.register(Forgotten.self) }) { $0.code == .invalidModel })
        #expect(error.className == "Forgotten")
        #expect("\(error)".contains("title, plays") && "\(error)".contains("override read(from:) and write(to:)") && "\(error)".contains("@StoredModel"), "\(error)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == before, "no file was made for it")
        try store.register(Empty.self)
    }

    /// Fields read in another order than written: the record passed its
    /// checksum, so the error points at read(from:), not at the disk.
    @Test func aRecordThatReadsInAnotherOrderThanItWasWrittenNamesReadFrom() throws {
        final class Swapped: StoredObject {
            @Stored var title = ""
            @Stored var plays: UInt32 = 0
            override func read(from buffer: inout DataBuffer) throws {
                plays = try buffer.readUInt32()
                title = try buffer.readString()
            }
            override func write(to buffer: inout DataBuffer) {
                buffer.writeString(title)
                buffer.writeUInt32(plays)
            }
        }
        let directory = try TemporaryDirectory()
        do {
            let store = try ObjectStore(path: directory.path)
            try store.register(Swapped.self)
            let object = Swapped(); object.title = "hello"; store.insert(object)
            try store.save()
            store.close()
        }
        let store = try ObjectStore(path: directory.path)
        defer { store.close() }
        try store.register(Swapped.self)
        let error = try #require(expectCabinetError({ _ = try store.fetchAll(Swapped.self) }) {
            $0.code == .truncatedRecord || $0.code == .malformedRecord
        })
        #expect("\(error)".contains("Swapped.read(from:) does not read what Swapped.write(to:) writes") && "\(error)".contains("version 1"), "\(error)")
    }

    /// An index is named by its declaration, never by a key path's `<computed 0x…>`.
    @Test func aMissingOrRefusedIndexIsNamedByItsDeclaration() throws {
        let store = try ObjectStore(backend: MemoryBackend())
        defer { store.close() }
        try store.register(Track.self)
        let missing = try #require(expectCabinetError({ _ = try store.fetch(Track.self, where: \.title, equals: "x") }) { $0.code == .noSuchIndex })
        #expect(!"\(missing)".contains("<computed") && "\(missing)".contains("String property")
                && "\(missing)".contains("Track.indexes[0] (a value index of String)"), "\(missing)")
        let track = Track("nan", by: "a"); track.score = .nan
        store.insert(track)
        let refused = try #require(expectCabinetError({ try store.save() }) { $0.code == .unindexableValue })
        #expect(refused.name == "Track.indexes[3] (a value index of Double)", "\(refused)")
    }
}
