import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A TCP proxy in this process between Cabinet and a real `redis-server`,
/// which answers the commands a test picks with forged replies: a real server
/// can't be made to lie, and what a client does with a lying one is what these
/// tests are about. Every other command goes to the server and its reply back.
/// Commands are passed one at a time (a pipeline's replies come back in order,
/// as from the server); after a `SUBSCRIBE` the connection is passed through.
final class HostileRedisProxy: Sendable {
    /// What the proxy does with one command.
    enum Answer: Sendable {
        /// The server runs it and its reply goes back.
        case forward
        /// The server never sees it; the client gets these bytes.
        case forge(String)
        /// The server runs it; the client gets these bytes instead of its reply.
        case runThenForge(String)
        /// Both connections are closed, the command not sent.
        case hangUp
    }

    typealias Rule = @Sendable (_ command: [String]) -> Answer

    let port: Int
    private let listener: Int32
    private let upstreamPort: Int
    private let rule: Rule
    private let stopped = Atomic<Bool>(false)
    /// How many commands the rule forged or hung up on.
    let tampered = Atomic<Int>(0)

    /// A proxy to the test server (``TestRedis/url``) on a port of its own.
    convenience init(rule: @escaping Rule) throws {
        let url = TestRedis.url
        let port = Int(url.split(separator: ":").last!.split(separator: "/").first!)!
        try self.init(upstreamPort: port, rule: rule)
    }

    init(upstreamPort: Int, rule: @escaping Rule) throws {
        self.upstreamPort = upstreamPort
        self.rule = rule
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard bound == 0, listen(fd, 64) == 0 else { close(fd); throw POSIXError(.EADDRINUSE) }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let proxy = self
        Thread.detachNewThread { proxy.acceptLoop() }
    }

    /// The URL of `store` through this proxy.
    func url(store: String) -> String { "redis://127.0.0.1:\(port)/0/\(store)" }

    /// Stops accepting; connections already made end with their clients.
    func stop() {
        stopped.store(true, ordering: .sequentiallyConsistent)
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func acceptLoop() {
        while !stopped.load(ordering: .sequentiallyConsistent) {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { if errno == EINTR { continue } else { return } }
            let proxy = self
            Thread.detachNewThread { proxy.serve(client) }
        }
    }

    private func serve(_ client: Int32) {
        let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(client); close(server) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(upstreamPort).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return }
        let fromClient = SocketReader(client), fromServer = SocketReader(server)
        while let (raw, words) = fromClient.command() {
            let answer = words.isEmpty ? .forward : rule(words)
            if case .forward = answer {} else { tampered.add(1, ordering: .sequentiallyConsistent) }
            switch answer {
            case .forward:
                guard SocketReader.write(raw, to: server), let reply = fromServer.reply(), SocketReader.write(reply, to: client) else { return }
                if words.first?.uppercased() == "SUBSCRIBE" { return passThrough(client, fromServer, server, fromClient) }
            case .forge(let text):
                guard SocketReader.write(Array(text.utf8), to: client) else { return }
            case .runThenForge(let text):
                guard SocketReader.write(raw, to: server), fromServer.reply() != nil,
                      SocketReader.write(Array(text.utf8), to: client) else { return }
            case .hangUp:
                shutdown(client, Int32(SHUT_RDWR))
                return
            }
        }
    }

    /// A subscribed connection: the server's messages go to the client as they come.
    private func passThrough(_ client: Int32, _ fromServer: SocketReader, _ server: Int32, _ fromClient: SocketReader) {
        let done = Atomic<Bool>(false)
        let pump = Thread {
            while !done.load(ordering: .sequentiallyConsistent), let reply = fromServer.reply() {
                guard SocketReader.write(reply, to: client) else { break }
            }
        }
        pump.start()
        while let (raw, _) = fromClient.command() {
            guard SocketReader.write(raw, to: server) else { break }
        }
        done.store(true, ordering: .sequentiallyConsistent)
        shutdown(server, Int32(SHUT_RDWR))
    }
}

/// Reads RESP from a socket: a client's commands (arrays of bulk strings, as
/// hiredis sends them) and a server's replies (RESP2), each as its raw bytes.
private final class SocketReader: @unchecked Sendable {
    private let fd: Int32
    private var buffer: [UInt8] = []
    private var start = 0

    init(_ fd: Int32) { self.fd = fd }

    static func write(_ bytes: [UInt8], to fd: Int32) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    private func fill() -> Bool {
        if start > 0 { buffer.removeFirst(start); start = 0 }
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            buffer.append(contentsOf: chunk[..<count])
            return true
        }
    }

    /// One line without its CRLF, and the raw bytes consumed are appended to `raw`.
    private func line(into raw: inout [UInt8]) -> [UInt8]? {
        while true {
            if let end = buffer[start...].firstIndex(of: 10), end > start, buffer[end - 1] == 13 {
                let text = Array(buffer[start..<end - 1])
                raw += buffer[start...end]
                start = end + 1
                return text
            }
            guard fill() else { return nil }
        }
    }

    private func bytes(_ count: Int, into raw: inout [UInt8]) -> [UInt8]? {
        while buffer.count - start < count + 2 { guard fill() else { return nil } }
        let body = Array(buffer[start..<start + count])
        raw += buffer[start..<start + count + 2]
        start += count + 2
        return body
    }

    func command() -> (raw: [UInt8], words: [String])? {
        var raw: [UInt8] = []
        guard let header = line(into: &raw) else { return nil }
        guard header.first == UInt8(ascii: "*"), let count = Int(String(decoding: header.dropFirst(), as: UTF8.self)) else {
            return (raw, [])   // an inline command: passed on as it is
        }
        var words: [String] = []
        for _ in 0..<max(count, 0) {
            guard let size = line(into: &raw), size.first == UInt8(ascii: "$"),
                  let length = Int(String(decoding: size.dropFirst(), as: UTF8.self)), length >= 0,
                  let word = bytes(length, into: &raw) else { return nil }
            words.append(String(decoding: word, as: UTF8.self))
        }
        return (raw, words)
    }

    func reply() -> [UInt8]? {
        var raw: [UInt8] = []
        return reply(into: &raw) ? raw : nil
    }

    private func reply(into raw: inout [UInt8]) -> Bool {
        guard let header = line(into: &raw), let kind = header.first else { return false }
        let number = Int(String(decoding: header.dropFirst(), as: UTF8.self))
        switch kind {
        case UInt8(ascii: "$"):
            guard let number else { return false }
            return number < 0 || bytes(number, into: &raw) != nil
        case UInt8(ascii: "*"):
            guard let number else { return false }
            for _ in 0..<max(number, 0) where !reply(into: &raw) { return false }
            return true
        default:
            return true
        }
    }
}

/// Runs `body` on a thread of its own and waits up to `seconds` for it: a test
/// of a client that might hang fails instead of hanging the test run (the
/// thread is left behind). `nil` if it did not return in time.
func finishing<T: Sendable>(within seconds: Double, _ body: @escaping @Sendable () throws -> T) -> Result<T, any Error>? {
    let outcome = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        let result = Result { try body() }
        outcome.withLock { $0 = result }
        done.signal()
    }
    guard done.wait(timeout: .now() + seconds) == .success else { return nil }
    return outcome.withLock { $0 }
}
