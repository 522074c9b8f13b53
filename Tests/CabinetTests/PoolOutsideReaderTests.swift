import Cabinet
import Foundation
import Testing

/// Readers in other processes (`cabinet backup`, a read-only store, anyone who
/// can open `.cabinet-commit`) hold the commit lock shared. They never stall a
/// pool's read blocks, and delay its writer only for the reads already running
/// when it asks, however many readers come after. Checked with real processes
/// holding real locks (`flock(1)`).
@Suite(.serialized) struct PoolOutsideReaderTests {
    private static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// Runs `script` in `sh`, with the store's path as `$1`, and waits for its first line.
    private static func shell(_ script: String, store: String) throws -> (process: Process, firstLine: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script, "sh", store]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        return (process, String(decoding: output.fileHandleForReading.availableLine(), as: UTF8.self))
    }

    private static func song(_ title: String) -> @Sendable (ObjectStore) throws -> Void {
        { store in let song = Song(); song.title = title; store.insert(song) }
    }

    @Test func aReadBlockRunsWhileTheWriterWaitsForAnOutsideReader() async throws {
        let fixture = try StoreFixture(.tokyoCabinet)
        let pool = try fixture.pool(Song.self)
        try await pool.write(Self.song("first"))
        // Anyone who can read the store can hold its commit lock shared, for as long as they like.
        let (holder, line) = try Self.shell("exec flock -s \"$1/.cabinet-commit\" sh -c 'echo held; sleep 3'", store: fixture.storePath)
        #expect(line == "held")
        let write = Task { try await pool.write(Self.song("second")) }
        try await Task.sleep(for: .milliseconds(300))          // the writer waits for the lock by now
        let start = ContinuousClock.now
        let count = try await pool.read { store in try store.fetchAll(Song.self).count }
        let readTook = Self.seconds(since: start)
        #expect(count == 1, "the write is not committed yet")
        #expect(readTook < 1, "a read block took \(readTook) s behind a writer waiting for an outside reader")
        #expect(holder.isRunning, "the outside reader still holds the lock")
        try await write.value
        holder.waitUntilExit()
        #expect(try await pool.read { store in try store.fetchAll(Song.self).count } == 2)
        try await pool.close()
    }

    /// Outside readers that overlap, one after another, for longer than the
    /// bound: the writer waits for the reads running when it asked, then writes.
    @Test func aWriterBehindOverlappingOutsideReadersWaitsOnlyForTheRunningOnes() async throws {
        let fixture = try StoreFixture(.tokyoCabinet)
        let pool = try fixture.pool(Song.self)
        try await pool.write(Self.song("first"))
        // Each reader takes its turn as Cabinet's readers do (the turn lock, if the
        // store has one, then the commit lock shared), and reads for 0.4 s; a new
        // one starts every 0.1 s, for 8 s, so there are always readers.
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
            i=0; while [ $i -lt 80 ]; do reader "$1"; sleep 0.1; i=$((i + 1)); done
            wait
            """
        let (chain, line) = try Self.shell(readers, store: fixture.storePath)
        #expect(line == "reading")
        let start = ContinuousClock.now
        try await pool.write(Self.song("second"))
        let writeTook = Self.seconds(since: start)
        #expect(writeTook < 2, "a write waited \(writeTook) s behind overlapping outside readers")
        #expect(chain.isRunning, "the readers kept coming while the writer wrote")
        chain.waitUntilExit()
        try await pool.close()
    }
}
