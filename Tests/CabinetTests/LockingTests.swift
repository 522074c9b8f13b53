import Cabinet
import Foundation
import Testing

/// One writer per store, and readers beside it in other processes, checked with real processes.
@Suite struct LockingTests {
    @Test func aSecondStoreInTheSameProcessIsRefused() throws {
        let directory = try TemporaryDirectory()
        let first = try ObjectStore(path: directory.path)
        #expect(throws: CabinetError.storeLocked(path: directory.path, pid: getpid())) {
            _ = try ObjectStore(path: directory.path)
        }
        first.close()
        let second = try ObjectStore(path: directory.path)   // the lock went with the close
        second.close()
    }

    @Test func anotherProcessHoldingTheStoreIsNamedByItsPID() throws {
        let directory = try TemporaryDirectory()
        let (holder, _, line) = try startHolder(directory.path)
        #expect(line == "locked \(holder.processIdentifier)")

        #expect(throws: CabinetError.storeLocked(path: directory.path, pid: holder.processIdentifier)) {
            _ = try ObjectStore(path: directory.path)
        }
        let message = "\(CabinetError.storeLocked(path: directory.path, pid: holder.processIdentifier))"
        #expect(message.contains("process \(holder.processIdentifier)"))

        kill(holder.processIdentifier, SIGKILL)     // a crashed holder leaves no stale lock
        holder.waitUntilExit()
        let store = try ObjectStore(path: directory.path)
        store.close()
    }
}

@Suite struct ReadOnlyTests {
    private func makeStore() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        let store = try ObjectStore(path: directory.path)
        try store.register(Song.self)
        let song = Song(); song.title = "shared"; store.insert(song)
        try store.save()
        store.close()
        return directory
    }

    private func startHolder(_ path: String, reading: Bool) throws -> (Process, Pipe) {
        let (holder, input, line) = try CabinetTests.startHolder(path, reading: reading)
        #expect(line == "locked \(holder.processIdentifier)")
        return (holder, input)
    }

    /// Tokyo Cabinet opens a file once per process: a second open of a class file
    /// this process reads already says so and what to use, and that works.
    @Test func aSecondHandleInOneProcessIsRefusedWithWhatToUseInstead() throws {
        let directory = try makeStore()
        var options = TokyoCabinetBackend.Options()
        options.readOnly = true
        let backend = try TokyoCabinetBackend(directory: directory.path, options: options)
        let reader = try ObjectStore(backend: backend)
        defer { reader.close() }
        try reader.register(Song.self)
        let error = #expect(throws: CabinetError.self) { try StoreInfo(path: directory.path) }
        let message = error.map(String.init(describing:)) ?? ""
        #expect(message.contains("open already") && message.contains("StoreInfo(backend:)"), "\(message)")
        let info = try StoreInfo(backend: backend)
        #expect(info.tables.first { $0.name == "Song" }?.records == 2)
    }

    @Test func readersShareAStoreWithEachOtherAndWithAWriterElsewhere() throws {
        let directory = try makeStore()
        let (holder, input) = try startHolder(directory.path, reading: true)     // another process reads
        let reader = try ObjectStore(path: directory.path, readOnly: true)
        try reader.register(Song.self)
        #expect(try reader.fetchAll(Song.self).map(\.title) == ["shared"])
        // Inside one process a store is open for reading or for writing, not both.
        #expect(throws: CabinetError.storeLocked(path: directory.path, pid: nil)) { _ = try ObjectStore(path: directory.path) }
        let song = Song(); reader.insert(song)
        #expect(throws: CabinetError.self) { try reader.save() }       // read-only: nothing is written
        reader.close()
        let writer = try ObjectStore(path: directory.path)             // the other process still reads
        try writer.register(Song.self)
        writer.insert(Song())
        try writer.save()
        #expect(throws: CabinetError.storeLocked(path: directory.path, pid: getpid())) {
            _ = try ObjectStore(path: directory.path, readOnly: true)
        }
        try input.fileHandleForWriting.close()
        holder.waitUntilExit()
        #expect(try writer.count(of: Song.self) == 2)
        writer.close()
    }

    @Test func aReaderReadsWhileAnotherProcessWrites() throws {
        let directory = try makeStore()
        let (holder, input) = try startHolder(directory.path, reading: false)
        let reader = try ObjectStore(path: directory.path, readOnly: true)
        try reader.register(Song.self)
        #expect(try reader.fetchAll(Song.self).map(\.title) == ["shared"])
        reader.close()
        try input.fileHandleForWriting.close()
        holder.waitUntilExit()
    }

    @Test func aReadOnlyStoreCreatesNothing() throws {
        let directory = try makeStore()
        #expect(throws: CabinetError.self) { _ = try ObjectStore(path: directory.path + "/missing", readOnly: true) }
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/missing"))
        let reader = try ObjectStore(path: directory.path, readOnly: true)
        #expect(throws: CabinetError.self) { try reader.register(Playlist.self) }   // it has no file
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/Playlist"))
        reader.close()
    }
}

extension FileHandle {
    /// Reads up to the first newline (without it).
    func availableLine() -> Data {
        var line = Data()
        while true {
            let byte = readData(ofLength: 1)
            if byte.isEmpty || byte == Data("\n".utf8) { return line }
            line.append(byte)
        }
    }
}
