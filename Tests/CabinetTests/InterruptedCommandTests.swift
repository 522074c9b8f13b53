@testable import Cabinet
import CabinetStorage
import Foundation
import Testing

/// Ctrl-C during a long `cabinet` command: the process dies of SIGINT (the
/// progress bar's handler only clears its line, then re-raises), and the store
/// is as before, whole, because every write of the command is all or nothing.
/// Each command is interrupted part way through its copy or rewrite, on a pipe
/// (no handler: SIGINT's default action) and on a terminal (the bar's handler).
@Suite(.serialized) struct InterruptedCommandTests {
    /// Enough songs that the debug-built tool needs a second or more to copy them.
    static let songs = 200_000

    /// Where ``template`` is made; removed when the test process exits.
    private static let templatePath = FileManager.default.temporaryDirectory.path + "/cabinet-interrupt-" + UUID().uuidString

    /// A store big enough to interrupt, made once and copied for each test.
    private static let template: Result<String, any Error> = Result {
        let directory = templatePath
        atexit { try? FileManager.default.removeItem(atPath: InterruptedCommandTests.templatePath) }
        let store = try ObjectStore(path: directory)
        try store.register(Song.self)
        store.undoManager.isEnabled = false
        for i in 0..<songs { let s = Song(); s.title = "song \(i) " + String(repeating: "x", count: i % 40); store.insert(s) }
        try store.save()
        store.close()
        return directory
    }

    private func bigStore(in directory: TemporaryDirectory, named name: String = "store") throws -> String {
        let path = directory.path + "/" + name
        try FileManager.default.copyItem(atPath: try Self.template.get(), toPath: path)
        return path
    }

    /// Every table's records, as a count and an order-free sum of their hashes:
    /// equal fingerprints mean the same records (within this process).
    private func fingerprint(_ path: String) throws -> [String: (count: Int, sum: Int)] {
        // A writable open first: it settles what an interrupted command left, as the app's next open would.
        try ObjectStore(path: path, createIfMissing: false).close()
        #expect(try StoreVerifier.verify(path: path).isEmpty, "\(path) does not verify")
        let backend = try TokyoCabinetBackend(directory: path)
        defer { backend.close() }
        var result: [String: (count: Int, sum: Int)] = [:]
        for name in try backend.tableNames() {
            var count = 0, sum = 0
            try backend.openTable(named: name).forEach { key, value in
                var hasher = Hasher()
                hasher.combine(bytes: key)
                hasher.combine(bytes: value)
                count += 1
                sum &+= hasher.finalize()
                return true
            }
            result[name] = (count, sum)
        }
        return result
    }

    private func same(_ a: [String: (count: Int, sum: Int)], _ b: [String: (count: Int, sum: Int)]) -> Bool {
        a.keys.sorted() == b.keys.sorted() && a.allSatisfy { name, value in b[name].map { $0 == value } ?? false }
    }

    /// Runs `cabinet arguments`, waits until `started` says it is part way (and
    /// `delay` more microseconds), sends SIGINT, and returns whether it died of it
    /// (rather than finishing first) and what it drew.
    private func interrupt(_ arguments: [String], onTerminal: Bool, delay: useconds_t = 0,
                           started: (String) -> Bool) throws -> (interrupted: Bool, drawn: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: cabinetToolPath)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        let drawn = TerminalOutput()
        var terminal: (master: Int32, slave: Int32)?
        if onTerminal {
            terminal = try PseudoTerminal.open()
            let slave = terminal!.slave
            process.standardError = FileHandle(fileDescriptor: slave, closeOnDealloc: false)
            drawn.startReading(terminal!.master)
        } else {
            process.standardError = FileHandle.nullDevice
        }
        // The child starts with SIGINT unblocked, as a shell starts a command: the test's
        // threads may block it, and a child inherits the mask of the thread that starts it.
        var interrupt = sigset_t(), mask = sigset_t()
        sigemptyset(&interrupt)
        sigaddset(&interrupt, SIGINT)
        pthread_sigmask(SIG_UNBLOCK, &interrupt, &mask)
        defer { pthread_sigmask(SIG_SETMASK, &mask, nil) }
        try process.run()
        if let terminal { close(terminal.slave) }      // the child has its own; the master sees EOF when it exits
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning && !started(drawn.text) && Date() < deadline { usleep(2_000) }
        usleep(delay)
        if process.isRunning { kill(process.processIdentifier, SIGINT) }
        process.waitUntilExit()
        if let terminal { drawn.waitForEnd(); close(terminal.master) }
        return (process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGINT, drawn.text)
    }

    private func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    @Test(arguments: [false, true])
    func aBackupInterruptedLeavesTheStoreAndNoBackup(onTerminal: Bool) throws {
        let directory = try TemporaryDirectory()
        let store = try bigStore(in: directory)
        let before = try fingerprint(store)
        let staging = directory.path + "/.backup.cabinet-partial"
        // Part way through the songs: on a terminal the bar says so; on a pipe, a moment after the copy began.
        let interrupted = try interrupt(["backup", store, directory.path + "/backup"], onTerminal: onTerminal, delay: onTerminal ? 0 : 100_000) { drawn in
            onTerminal ? drawn.contains("backup Song  [#") : exists(staging)
        }
        #expect(interrupted.interrupted, "the backup finished before the interrupt; make the store bigger")
        if onTerminal { #expect(interrupted.drawn.hasSuffix("\r\u{1B}[K"), "the bar's line was not cleared: \(interrupted.drawn.suffix(200).debugDescription)") }
        #expect(!exists(directory.path + "/backup"), "an interrupted backup left a directory that could pass for one")
        #expect(try same(fingerprint(store), before))
        // What it left is hidden and partial, and the next backup removes it, says so, and starts afresh.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).allSatisfy { $0 == "store" || $0 == ".backup.cabinet-partial" })
        let next = try run(cabinetToolPath, ["backup", store, directory.path + "/backup"])
        #expect(next.status == 0 && next.output.contains("removed the partial copy an interrupted backup left at \(staging)"), "\(next.output)")
        let copied = try fingerprint(directory.path + "/backup")
        #expect(!exists(staging) && same(copied, before))
    }

    @Test(arguments: [false, true])
    func aCompactionInterruptedLeavesTheStoreAsItWas(onTerminal: Bool) throws {
        let directory = try TemporaryDirectory()
        let store = try bigStore(in: directory)
        let before = try fingerprint(store)
        let run = try interrupt(["compact", store], onTerminal: onTerminal) { _ in
            // Part way through the rewrite of the songs' file, which goes to a temporary file beside it.
            (try? FileManager.default.contentsOfDirectory(atPath: store).contains { $0.hasPrefix(DirectoryFiles.temporaryPrefix) }) ?? false
        }
        #expect(run.interrupted, "the compaction finished before the interrupt; make the store bigger")
        #expect(try same(fingerprint(store), before))
    }

    @Test(arguments: [false, true])
    func aRestoreInterruptedLeavesTheStoreAsItWasOrRestoredWhole(onTerminal: Bool) throws {
        let directory = try TemporaryDirectory()
        let backup = try bigStore(in: directory, named: "backup")
        let store = directory.path + "/store"
        do {
            let small = try ObjectStore(path: store)
            try small.register(Song.self)
            let song = Song(); song.title = "the store before"; small.insert(song)
            try small.save()
            small.close()
        }
        let before = try fingerprint(store), restored = try fingerprint(backup)
        let run = try interrupt(["restore", backup, store], onTerminal: onTerminal, delay: onTerminal ? 0 : 100_000) { drawn in
            onTerminal ? drawn.contains("restore Song  [#") : exists(store + "/" + TokyoCabinetBackend.restoreStagingName + ".partial")
        }
        #expect(run.interrupted, "the restore finished before the interrupt; make the store bigger")
        // Interrupted while copying, before the restore was decided: the store is as it was.
        let after = try fingerprint(store)
        #expect(same(after, before), "after an interrupted restore the store is \(same(after, restored) ? "restored whole" : "neither before nor restored")")
    }
}

/// What a child draws on a pseudo-terminal, read on a thread of its own so the child never blocks on a full terminal.
final class TerminalOutput: @unchecked Sendable {
    private let lock = NSLock()
    private var bytes: [UInt8] = []
    private let ended = DispatchSemaphore(value: 0)

    var text: String { lock.withLock { String(decoding: bytes, as: UTF8.self) } }

    func startReading(_ master: Int32) {
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(master, $0.baseAddress, $0.count) }
                if count <= 0 { break }          // EIO once the child, the last holder of the terminal, is gone
                lock.withLock { bytes += buffer[..<count] }
            }
            ended.signal()
        }
    }

    func waitForEnd() { ended.wait() }
}

/// A pseudo-terminal, for a child whose standard error must be a terminal.
/// glibc's posix_openpt, grantpt, unlockpt and ptsname are declared only under
/// _XOPEN_SOURCE, which the Swift module of the C library leaves out: they are looked up.
enum PseudoTerminal {
    private typealias OpenFunction = @convention(c) (Int32) -> Int32
    private typealias NameFunction = @convention(c) (Int32) -> UnsafeMutablePointer<CChar>?
    struct Failure: Error { let message: String }

    static func open() throws -> (master: Int32, slave: Int32) {
        func function<F>(_ name: String, as type: F.Type) throws -> F {
            guard let symbol = dlsym(dlopen(nil, RTLD_NOW), name) else { throw Failure(message: "no function \(name)") }
            return unsafeBitCast(symbol, to: type)
        }
        let master = try function("posix_openpt", as: OpenFunction.self)(O_RDWR | O_NOCTTY)
        guard master >= 0, try function("grantpt", as: OpenFunction.self)(master) == 0,
              try function("unlockpt", as: OpenFunction.self)(master) == 0,
              let name = try function("ptsname", as: NameFunction.self)(master) else {
            throw Failure(message: "no pseudo-terminal")
        }
        let slave = Glibc.open(name, O_RDWR | O_NOCTTY)
        guard slave >= 0 else { throw Failure(message: "cannot open \(String(cString: name))") }
        return (master, slave)
    }
}
