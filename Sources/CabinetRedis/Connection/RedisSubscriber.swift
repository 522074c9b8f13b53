#if canImport(Glibc)
import Glibc
#endif
import CabinetStorage
import Foundation

/// Listens, on a thread and a connection of its own, to the channel where
/// every save of the store is announced (`PUBLISH {store}/saves TOKEN`,
/// docs/FORMAT.md): a save of another process raises ``othersHaveSaved``
/// (which the store asks, without I/O, before it reads), and, if a handler
/// observes, is read from the store's log and handed to it.
///
/// A dropped connection is connected again; since messages sent meanwhile are
/// lost, ``othersHaveSaved`` is raised then too, and the handler's log read
/// picks up every save since the last it reported. The thread stops within a
/// quarter of a second of ``stop()``.
final class RedisSubscriber: @unchecked Sendable {
    // @unchecked: the state below is guarded by `lock`; the connection and
    // `reportedVersion` are touched only by the subscriber's thread.
    private let session: RedisSession
    private let connection: RedisConnection
    private let lock = PlainMutex()
    private var raised = false
    private var stopped = false
    private var handler: (@Sendable (OthersSave) -> Void)?
    /// The store's version up to which the handler has been told.
    private var reportedVersion: Int64 = 0

    init(session: RedisSession, address: RedisAddress, connectTimeout: Duration) {
        self.session = session
        // Waiting for messages is not a command that times out: a quarter-second poll instead.
        connection = RedisConnection(address: address, connectTimeout: connectTimeout, commandTimeout: .seconds(5))
    }

    /// Subscribes now, on the caller's thread: the backend does so before it
    /// reads the store's version, so no save after that read goes unheard.
    func subscribe() throws {
        try connection.subscribe(to: session.keys.saves, operation: "listen for other processes' saves")
    }

    /// Starts the thread, which listens on the connection ``subscribe()`` made.
    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "Cabinet Redis subscriber"
        thread.start()
    }

    func stop() { lock.withLock { stopped = true } }

    var othersHaveSaved: Bool { lock.withLock { raised } }

    /// Clears ``othersHaveSaved`` before the store reads the log, so that a save
    /// announced during the read raises it again.
    func lower() { lock.withLock { raised = false } }

    /// Raises ``othersHaveSaved`` again (a log read that failed).
    func raise() { lock.withLock { raised = true } }

    func observe(_ handler: (@Sendable (OthersSave) -> Void)?) {
        let version = handler == nil ? nil : try? session.currentVersion()
        lock.withLock {
            self.handler = handler
            // Saves from now on; the thread reads this only when the handler is set.
            if let version { reportedVersion = version }
        }
    }

    private func run() {
        var subscribed = connection.isConnected
        var failures = subscribed ? 0 : 1
        while !lock.withLock({ stopped }) {
            do {
                if !subscribed {
                    try connection.subscribe(to: session.keys.saves, operation: "listen for other processes' saves")
                    if failures > 0 { raiseAndReport() }   // messages may have been lost while it was down
                    subscribed = true
                    failures = 0
                }
                guard let token = try connection.nextMessage(waiting: 250, operation: "listen for other processes' saves") else { continue }
                if let bytes = RedisSubscriber.bytes(ofHex: token), session.isOwnToken(bytes) { continue }
                raiseAndReport()
            } catch {
                connection.disconnect()
                subscribed = false
                failures += 1
                usleep(useconds_t(min(failures, 8) * 250_000))
            }
        }
        connection.disconnect()
    }

    private func raiseAndReport() {
        let handler: (@Sendable (OthersSave) -> Void)? = lock.withLock {
            raised = true
            return self.handler
        }
        guard let handler else { return }
        let since = lock.withLock { reportedVersion }
        guard let (entries, version) = try? session.saves(since: since) else { return }   // the next message tries again
        lock.withLock { reportedVersion = max(reportedVersion, version) }
        for entry in entries where !session.isOwnToken(entry.token) {
            handler(OthersSave(tables: entry.tables, wholeStore: entry.wholeStore))
        }
    }

    /// The token a save announced (hex), as bytes.
    static func bytes(ofHex text: [UInt8]) -> [UInt8]? {
        guard text.count == 32 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: 32, by: 2) {
            guard let byte = UInt8(String(decoding: text[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }
}
