// Also linked into the macro package's store tests (Model/Tests/CabinetModelTests/Shared).
import Cabinet
import CabinetRedis
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The Redis server the `.redis` store tests run against: the one
/// `CABINET_REDIS_URL` names, or else a `redis-server` of this test run's own,
/// on a free loopback port, with no persistence, stopped when the tests end
/// (or by the next run, if this one dies first).
/// The servers this test run started, stopped at its exit.
let launchedServers = Mutex<[pid_t]>([])

enum TestRedis {
    static let url: String = {
        if let given = ProcessInfo.processInfo.environment["CABINET_REDIS_URL"], !given.isEmpty { return given }
        return startServer()
    }()

    /// A store name no other test uses.
    static func newStoreName() -> String {
        "t-" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
    }

    /// The options of the tests' backends: a save that changes two or more
    /// records of a table stages them (`RedisBackend.Options.stagingThreshold`,
    /// 4,096 by default), so that the whole store suite runs through big saves'
    /// staging and renaming as well as through plain `MULTI`/`EXEC`.
    static var options: RedisBackend.Options {
        var options = RedisBackend.Options()
        options.stagingThreshold = 2
        return options
    }

    /// A backend on a new, empty store (or on `store`).
    static func backend(store: String? = nil, options: RedisBackend.Options = TestRedis.options) throws -> RedisBackend {
        try RedisBackend(url: url, store: store ?? newStoreName(), options: options)
    }

    /// A port nothing listens on now, below 55,536 (a cluster node also listens on
    /// its port + 10,000, its cluster bus).
    static func freePort() -> Int {
        while true {
            let port = kernelsFreePort()
            if port > 1024 && port + 10_000 <= 65_535 && kernelsPortIsFree(port + 10_000) { return port }
        }
    }

    /// Whether nothing listens on `port` now.
    private static func kernelsPortIsFree(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    /// A port the kernel picks: bound once, then released.
    private static func kernelsFreePort() -> Int {
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

    /// Where each server this test run starts notes its pid and its owner's, so a
    /// later run stops the servers of a run that died without stopping them.
    static let registry = NSTemporaryDirectory() + "cabinet-test-redis"

    /// Starts `redis-server` with `arguments` on a free port (or `port`) and
    /// returns once it answers. It is stopped when this process exits (atexit),
    /// or, if this process dies first, by the next test run (``registry``).
    static func launch(_ arguments: [String] = [], directory: String? = nil, port chosen: Int? = nil) -> (port: Int, process: Process) {
        stopServersOfDeadRuns
        let port = chosen ?? freePort()
        let dir = directory ?? (NSTemporaryDirectory() + "cabinet-redis-" + UUID().uuidString)
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/redis-server")
        process.arguments = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--dir", dir, "--daemonize", "no", "--loglevel", "warning"] + arguments
        // Not this process's output: swift test waits for its pipe to close, which the server would hold open.
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { fatalError("cannot start redis-server (apt-get install redis-server; make deps does): \(error)") }
        let pid = process.processIdentifier
        try? "\(pid) \(getpid())".write(toFile: registry + "/\(pid)", atomically: true, encoding: .utf8)
        launchedServers.withLock { $0.append(pid) }
        for _ in 0..<200 {
            do {
                _ = try RedisBackend(host: "127.0.0.1", port: port, store: "probe")
                return (port, process)
            } catch let error as CabinetError where error.underlying?.code == 0 {
                return (port, process)   // it answers (that it wants a password)
            } catch {}
            usleep(25_000)
        }
        fatalError("redis-server on port \(port) did not answer within 5 s")
    }

    /// Servers started by test runs whose process is gone (or a zombie) are stopped; this run's are stopped at its exit.
    private static let stopServersOfDeadRuns: Void = {
        try? FileManager.default.createDirectory(atPath: registry, withIntermediateDirectories: true)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: registry)) ?? [] {
            let file = registry + "/" + name
            let parts = ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").split(separator: " ").compactMap { pid_t($0) }
            guard parts.count == 2 else { try? FileManager.default.removeItem(atPath: file); continue }
            let status = (try? String(contentsOfFile: "/proc/\(parts[1])/status", encoding: .utf8)) ?? ""
            if status.isEmpty || status.contains("State:\tZ") {
                kill(parts[0], SIGKILL)
                try? FileManager.default.removeItem(atPath: file)
            }
        }
        atexit {
            for pid in launchedServers.withLock({ $0 }) {
                kill(pid, SIGKILL)
                try? FileManager.default.removeItem(atPath: TestRedis.registry + "/\(pid)")
            }
        }
    }()

    private static func startServer() -> String {
        let (port, _) = launch()
        return "redis://127.0.0.1:\(port)/0"
    }
}

extension BackendKind {
    /// A new, empty store of this kind: a Tokyo Cabinet directory under
    /// `directory`, a new in-memory backend, a new store on the test Redis server,
    /// or new dictionary contents.
    func newBackend(in directory: TemporaryDirectory, name: String = "store") throws -> any StorageBackend {
        switch self {
        case .tokyoCabinet: try TokyoCabinetBackend(directory: directory.path + "/" + name)
        case .memory: MemoryBackend(name: name)
        case .redis: try TestRedis.backend()
        case .dictionary: DictionaryBackend(.init(name: name))
        }
    }

    /// The same store as `backend`, opened again (after it was closed).
    func reopen(_ backend: any StorageBackend) throws -> any StorageBackend {
        switch self {
        case .tokyoCabinet: try TokyoCabinetBackend(directory: backend.path)
        case .memory: backend
        case .redis: try RedisBackend(address: (backend as! RedisBackend).address, options: TestRedis.options)
        case .dictionary: DictionaryBackend((backend as! DictionaryBackend).contents)
        }
    }
}
