import Cabinet
import CabinetRedis
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The Redis server the `.redis` store tests run against: the one
/// `CABINET_REDIS_URL` names, or else a `redis-server` of this test run's own,
/// on a free loopback port, with no persistence, stopped when the tests end
/// (a watchdog shell stops it within a second even if the test process dies).
enum TestRedis {
    static let url: String = {
        if let given = ProcessInfo.processInfo.environment["CABINET_REDIS_URL"], !given.isEmpty { return given }
        return startServer()
    }()

    /// A store name no other test uses.
    static func newStoreName() -> String {
        "t-" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
    }

    /// A backend on a new, empty store (or on `store`).
    static func backend(store: String? = nil, options: RedisBackend.Options = .init()) throws -> RedisBackend {
        try RedisBackend(url: url, store: store ?? newStoreName(), options: options)
    }

    /// A port nothing listens on now: bound once by the kernel's choice, then released.
    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Starts `redis-server` with `arguments` on a free port under a watchdog
    /// that stops it when this process ends; returns the port once it answers.
    static func launch(_ arguments: [String] = [], directory: String? = nil) -> (port: Int, process: Process) {
        let port = freePort()
        let dir = directory ?? (NSTemporaryDirectory() + "cabinet-redis-" + UUID().uuidString)
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let server = (["redis-server", "--port", String(port), "--bind", "127.0.0.1", "--save", "''", "--appendonly", "no",
                       "--dir", dir, "--daemonize", "no", "--loglevel", "warning"] + arguments).joined(separator: " ")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        // The watchdog: the server lives while this test process does.
        process.arguments = ["-c", "\(server) & r=$!; trap 'kill $r 2>/dev/null; exit 0' TERM; while kill -0 \(getpid()) 2>/dev/null && kill -0 $r 2>/dev/null; do sleep 1; done; kill $r 2>/dev/null"]
        // Not this process's output: swift test waits for its pipe to close, which the server would hold open.
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { fatalError("cannot start redis-server (apt-get install redis-server; make deps does): \(error)") }
        for _ in 0..<200 {
            if (try? RedisBackend(host: "127.0.0.1", port: port, store: "probe")) != nil { return (port, process) }
            usleep(25_000)
        }
        fatalError("redis-server on port \(port) did not answer within 5 s")
    }

    private static func startServer() -> String {
        let (port, _) = launch()
        return "redis://127.0.0.1:\(port)/0"
    }
}

extension BackendKind {
    /// A new, empty store of this kind: a Tokyo Cabinet directory under
    /// `directory`, a new in-memory backend, or a new store on the test Redis server.
    func newBackend(in directory: TemporaryDirectory, name: String = "store") throws -> any StorageBackend {
        switch self {
        case .tokyoCabinet: try TokyoCabinetBackend(directory: directory.path + "/" + name)
        case .memory: MemoryBackend(name: name)
        case .redis: try TestRedis.backend()
        }
    }

    /// The same store as `backend`, opened again (after it was closed).
    func reopen(_ backend: any StorageBackend) throws -> any StorageBackend {
        switch self {
        case .tokyoCabinet: try TokyoCabinetBackend(directory: backend.path)
        case .memory: backend
        case .redis: try RedisBackend(address: (backend as! RedisBackend).address)
        }
    }
}
