import AsyncHTTPClient
@testable import Cabinet
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NotesAPI
@testable import NotesServiceCabinet
import ServiceLifecycle
import Synchronization
import Testing

/// The Cabinet notes service in this process: the group `notes-service` runs
/// (the app and the pool's `StorePoolService`), on a free loopback port, over
/// a store in a directory of its own.
final class RunningService: Sendable {
    let notes: CabinetNotes
    let port: Int
    let directory: String
    private let group: ServiceGroup
    private let running: Task<Void, any Error>
    private let stopped: Flag

    private init(notes: CabinetNotes, port: Int, directory: String, group: ServiceGroup, running: Task<Void, any Error>, stopped: Flag) {
        self.notes = notes
        self.port = port
        self.directory = directory
        self.group = group
        self.running = running
        self.stopped = stopped
    }

    /// Opens a store (in `directory`, or a new one) and serves it until ``shutdown()``.
    static func start(directory: String? = nil) async throws -> RunningService {
        let directory = directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("notes-live-\(UUID().uuidString)").path
        var logger = Logger(label: "notes-service-test")
        logger.logLevel = .warning
        let notes = try CabinetNotes(directory: directory, logger: logger)
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        let group = makeServiceGroup(
            repository: notes, storeService: StorePoolService(pool: notes.pool, logger: logger), label: "notes-service-test",
            host: "127.0.0.1", port: 0, stopsOnSignals: false, logger: logger
        ) { port in
            listening.yield(port)
            listening.finish()
        }
        let stopped = Flag()
        let running = Task {
            defer { stopped.set() }
            try await group.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            try await running.value
            throw HTTPClientError.remoteConnectionClosed
        }
        return RunningService(notes: notes, port: port, directory: directory, group: group, running: running, stopped: stopped)
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Graceful shutdown, as SIGTERM starts it: the app drains, then the pool
    /// closes. Returns when the group has; if it has not within `seconds` (a
    /// stream the drain waits for), cancels it, as a second SIGTERM would, and throws.
    func shutdown(within seconds: Double = 10) async throws {
        await group.triggerGracefulShutdown()
        guard await eventually(within: seconds, { stopped.isSet }) else {
            running.cancel()
            _ = await running.result
            throw ShutdownTimedOut(seconds: seconds)
        }
        try await running.value
    }

    /// Whether the pool refuses a read block: it is closed.
    var poolIsClosed: Bool {
        get async {
            do {
                _ = try await notes.pool.read { _ in 0 }
                return false
            } catch {
                return true
            }
        }
    }

    /// Live observations on the pool now.
    var observations: Int { notes.pool.core.hub.count }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// A flag one task sets and others read.
final class Flag: Sendable {
    private let value = Atomic(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}

/// The service did not stop within its time after graceful shutdown began.
struct ShutdownTimedOut: Error {
    let seconds: Double
}

/// One request, its whole body read.
func send(_ client: HTTPClient, _ method: HTTPMethod, _ url: String, json: String? = nil) async throws -> (status: UInt, body: ByteBuffer) {
    var request = HTTPClientRequest(url: url)
    request.method = method
    if let json {
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: json))
    }
    let response = try await client.execute(request, timeout: .seconds(30))
    return (response.status.code, try await response.body.collect(upTo: 1 << 24))
}

/// One request whose 2xx answer decodes as `T`.
func send<T: Decodable>(_ client: HTTPClient, _ method: HTTPMethod, _ url: String, json: String? = nil, as type: T.Type) async throws -> T {
    let (status, body) = try await send(client, method, url, json: json)
    try #require((200..<300).contains(status), "\(method) \(url) answered \(status): \(String(buffer: body))")
    return try JSONDecoder().decode(T.self, from: Data(buffer: body))
}

/// One server-sent event: its `event` field and its `data` (lines joined by newlines).
struct ServerSentEvent: Sendable, Equatable {
    var name: String
    var data: String
}

/// Splits a text/event-stream body into events as its bytes arrive, as a
/// browser's `EventSource` does: an event ends at a blank line; `event:` and
/// `data:` fields, one optional space after the colon; comments (`:`) skipped.
struct EventStreamParser {
    private var pending: [UInt8] = []

    mutating func feed(_ buffer: ByteBuffer) -> [ServerSentEvent] {
        pending.append(contentsOf: buffer.readableBytesView)
        var events: [ServerSentEvent] = []
        while let end = blankLine() {
            let block = String(decoding: pending[..<end.lowerBound], as: UTF8.self)
            pending.removeSubrange(..<end.upperBound)
            var name = "message", data: [String] = []
            for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
                guard !line.hasPrefix(":"), let colon = line.firstIndex(of: ":") else { continue }
                var value = line[line.index(after: colon)...]
                if value.hasPrefix(" ") { value = value.dropFirst() }
                switch line[..<colon] {
                case "event": name = String(value)
                case "data": data.append(String(value))
                default: break
                }
            }
            if !data.isEmpty { events.append(ServerSentEvent(name: name, data: data.joined(separator: "\n"))) }
        }
        return events
    }

    private func blankLine() -> Range<Int>? {
        guard pending.count >= 2 else { return nil }
        for index in 0..<(pending.count - 1) where pending[index] == 10 && pending[index + 1] == 10 {
            return index..<(index + 2)
        }
        return nil
    }
}

/// A client of `GET /notebooks/:id/live` on a connection of its own: a task
/// reads the body and hands out its events; ``disconnect()`` drops the connection.
final class LiveConnection: Sendable {
    let status: UInt
    let contentType: String?
    let events: AsyncThrowingStream<ServerSentEvent, any Error>
    private let client: HTTPClient
    private let reader: Task<Void, Never>

    private init(status: UInt, contentType: String?, events: AsyncThrowingStream<ServerSentEvent, any Error>, client: HTTPClient, reader: Task<Void, Never>) {
        self.status = status
        self.contentType = contentType
        self.events = events
        self.client = client
        self.reader = reader
    }

    static func open(_ url: String) async throws -> LiveConnection {
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            let response = try await client.execute(HTTPClientRequest(url: url), timeout: .minutes(10))
            let (events, continuation) = AsyncThrowingStream.makeStream(of: ServerSentEvent.self)
            let reader = Task {
                var parser = EventStreamParser()
                do {
                    for try await buffer in response.body {
                        for event in parser.feed(buffer) { continuation.yield(event) }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            return LiveConnection(status: response.status.code, contentType: response.headers.first(name: "Content-Type"),
                                  events: events, client: client, reader: reader)
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    /// Stops reading and closes the connection, as a browser tab that goes away does.
    func disconnect() async {
        reader.cancel()
        await reader.value
        try? await client.shutdown()
    }

    /// After the stream ended by itself.
    func close() async {
        await reader.value
        try? await client.shutdown()
    }

    /// A test that failed before ``disconnect()`` still lets the client go
    /// (its deinit traps if it was never shut down); a second shutdown only fails.
    deinit {
        reader.cancel()
        _ = client.shutdown()
    }
}

/// Waits until `condition` holds, checking every 10 ms, for at most `seconds`; whether it did.
func eventually(within seconds: Double = 10, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let end = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < end {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return try await condition()
}
