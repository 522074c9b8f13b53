#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The file operations a journal needs, with errors that name the file.
enum JournalFile {
    private static func failure(_ operation: String, _ path: String) -> CabinetError {
        .backendFailure(RecordLocation(file: path), operation: operation, code: errno, message: String(cString: strerror(errno)))
    }

    static func write(_ bytes: [UInt8], to path: String, sync: Bool) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw failure("create journal", path) }
        defer { close(fd) }
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, $0.count - written) }
            if result < 0 {
                if errno == EINTR { continue }
                throw failure("write journal", path)
            }
            written += result
        }
        if sync && fsync(fd) != 0 { throw failure("sync journal", path) }
    }

    static func rename(_ from: String, to: String, directory: String, sync: Bool) throws {
        guard Glibc.rename(from, to) == 0 else { throw failure("rename journal", to) }
        if sync { try syncDirectory(directory) }
    }

    static func read(_ path: String) throws -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw failure("open journal", path)
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure("read journal", path)
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }

    static func remove(_ path: String, directory: String, sync: Bool) throws {
        if unlink(path) != 0 && errno != ENOENT { throw failure("remove journal", path) }
        if sync { try syncDirectory(directory) }
    }

    private static func syncDirectory(_ directory: String) throws {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw failure("open directory", directory) }
        defer { close(fd) }
        if fsync(fd) != 0 { throw failure("sync directory", directory) }
    }
}
