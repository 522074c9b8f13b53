import Cabinet
import Foundation
import Testing

/// Readers in other processes (`cabinet backup`, a read-only store, anyone who
/// can open `.cabinet-commit`) hold the commit lock shared. They never stall a
/// pool's read blocks, and delay its writer only for the reads already running
/// when it asks, however many readers come after. Checked with real processes
/// holding real locks (`flock(1)`).
@Suite(.serialized) struct PoolOutsideReaderTests {
    /// Runs `script` in `sh`, with the store's path as `$1`, and waits for its first
    /// line; the script's standard input is the returned pipe, so closing it can end it.
    private static func shell(_ script: String, store: String) throws -> (process: Process, firstLine: String, input: Pipe) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script, "sh", store]
        let output = Pipe(), input = Pipe()
        process.standardOutput = output
        process.standardInput = input
        try process.run()
        return (process, String(decoding: output.fileHandleForReading.availableLine(), as: UTF8.self), input)
    }

    private static func song(_ title: String) -> @Sendable (ObjectStore) throws -> Void {
        { store in let song = Song(); song.title = title; store.insert(song) }
    }

    /// A watchdog for work that must not wait on the outside readers: after five
    /// minutes it lets them go (so a regression fails instead of hanging) and says
    /// so. Generous: a whole suite under a sanitizer on two busy cores can keep a
    /// test's task from running for a long while.
    private final class Watchdog: @unchecked Sendable {
        private let lock = NSLock()
        private var fired = false
        private var done = false
        init(_ release: @escaping @Sendable () -> Void) {
            DispatchQueue.global().asyncAfter(deadline: .now() + 300) { [self] in
                let fire = lock.withLock { () -> Bool in
                    guard !done else { return false }
                    fired = true
                    return true
                }
                if fire { release() }
            }
        }
        /// Whether the work finished before the watchdog let the readers go.
        func finish() -> Bool { lock.withLock { done = true; return !fired } }
    }

    @Test func aReadBlockRunsWhileTheWriterWaitsForAnOutsideReader() async throws {
        let fixture = try StoreFixture(.tokyoCabinet)
        let pool = try fixture.pool(Song.self)
        try await pool.write(Self.song("first"))
        // Anyone who can read the store can hold its commit lock shared, for as long as they like:
        // this one until its input ends.
        let (holder, line, input) = try Self.shell("exec flock -s \"$1/.cabinet-commit\" sh -c 'echo held; cat >/dev/null'", store: fixture.storePath)
        #expect(line == "held")
        let release: @Sendable () -> Void = { try? input.fileHandleForWriting.close() }
        let write = Task { try await pool.write(Self.song("second")) }
        try await Task.sleep(for: .milliseconds(300))          // the writer is waiting for the lock by now
        let watchdog = Watchdog(release)
        let count = try await pool.read { store in try store.fetchAll(Song.self).count }
        #expect(watchdog.finish(), "a read block waited behind a writer that waits for an outside reader")
        #expect(count == 1, "the write is not committed yet: the outside reader still holds the lock")
        #expect(holder.isRunning)
        release()
        try await write.value
        holder.waitUntilExit()
        #expect(try await pool.read { store in try store.fetchAll(Song.self).count } == 2)
        try await pool.close()
    }

    /// Outside readers that overlap, one after another, for as long as the test
    /// lets them: the writer waits for the reads running when it asked, then writes.
    @Test func aWriterBehindOverlappingOutsideReadersWaitsOnlyForTheRunningOnes() async throws {
        let fixture = try StoreFixture(.tokyoCabinet)
        let pool = try fixture.pool(Song.self)
        try await pool.write(Self.song("first"))
        // Each reader takes its turn as Cabinet's readers do (the turn lock, if the
        // store has one, then the commit lock shared), and reads for 0.4 s; a new
        // one starts every 0.1 s until the file `stop` appears, so there are always readers.
        let readers = """
            reader() {
                (
                    exec 9<"$1/.cabinet-commit"
                    if [ -e "$1/.cabinet-commit-turn" ]; then exec 8<"$1/.cabinet-commit-turn"; flock -x 8; fi
                    flock -s 9
                    if [ -e "$1/.cabinet-commit-turn" ]; then flock -u 8; exec 8<&-; fi
                    sleep 0.4
                ) &
            }
            reader "$1"; sleep 0.1; echo reading
            while [ ! -e "$1.stop" ]; do reader "$1"; sleep 0.1; done
            wait
            """
        let stop = fixture.storePath + ".stop"
        let (chain, line, _) = try Self.shell(readers, store: fixture.storePath)
        #expect(line == "reading")
        let watchdog = Watchdog { _ = FileManager.default.createFile(atPath: stop, contents: nil) }
        try await pool.write(Self.song("second"))
        #expect(watchdog.finish(), "a write waited behind outside readers that kept coming")
        #expect(chain.isRunning, "the readers kept coming while the writer wrote")
        _ = FileManager.default.createFile(atPath: stop, contents: nil)
        chain.waitUntilExit()
        try await pool.close()
    }
}
