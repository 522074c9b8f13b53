import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The Redis server the Redis engines run against: the one
/// `CABINET_SPEEDTEST_REDIS` names, or else a `redis-server` this process
/// starts on a free loopback port with persistence off (`--save "" --appendonly
/// no`: the run measures the client, the protocol and the server's work, not a
/// disk), stopped when this process exits. Children find it through the
/// environment, which this process sets before it starts them.
public enum SpeedTestRedis {
    public static let environmentKey = "CABINET_SPEEDTEST_REDIS"

    private static let started = Mutex<String?>(nil)

    /// The server's URL, starting one on first use if the environment names none.
    public static func url() throws -> String {
        if let given = ProcessInfo.processInfo.environment[environmentKey], !given.isEmpty { return given }
        return try started.withLock { url in
            if let url { return url }
            let made = try startServer()
            setenv(environmentKey, made, 1)
            url = made
            return made
        }
    }

    /// The store a run in `directory` uses: its own, named after the directory, so runs never meet.
    static func storeName(for directory: String) -> String {
        URL(fileURLWithPath: directory).lastPathComponent.lowercased()
    }

    private static let serverPID = Mutex<pid_t?>(nil)

    private static func startServer() throws -> String {
        let executable = "/usr/bin/redis-server"
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw SpeedTestError("the Redis engines need redis-server (make deps installs it), or \(environmentKey)=redis://host:port")
        }
        let port = freeLoopbackPort()
        let directory = NSTemporaryDirectory() + "speedtest-redis-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--dir", directory, "--daemonize", "no", "--loglevel", "warning"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        serverPID.withLock { $0 = process.processIdentifier }
        atexit {
            if let pid = SpeedTestRedis.serverPID.withLock({ $0 }) { kill(pid, SIGKILL) }
        }
        let url = "redis://127.0.0.1:\(port)"
        for _ in 0..<200 {
            if let client = try? RawRedisClient(url: url), (try? client.call([Array("PING".utf8)]) { _ in }) != nil { return url }
            usleep(25_000)
        }
        throw SpeedTestError("redis-server on port \(port) did not answer within 5 s")
    }

    /// A port the kernel hands out for a moment: bound, read back, released.
    private static func freeLoopbackPort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
