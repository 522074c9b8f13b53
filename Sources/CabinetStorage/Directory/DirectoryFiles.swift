#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The file-system steps that make a file appear whole or not at all: write it
/// under a temporary name in the same directory, then rename it over its final
/// name (rename is atomic within a directory), then, for power-loss durability,
/// flush the directory. Errors name the file and say what failed. The Tokyo
/// Cabinet backend keeps its format marker and catalog this way (its journal
/// file is written in place: `TokyoCabinetJournalFile`), and reads all three here.
///
/// None of them follows a symbolic link: a link planted in a store directory
/// in place of one of these files must not make Cabinet read, truncate or
/// overwrite what it points to. Temporaries are created exclusively (after
/// removing any leftover), so a link or a hard link in their place is replaced,
/// never written through.
package enum DirectoryFiles {
    /// The prefix of every temporary file Cabinet writes in a store directory.
    /// Table names cannot start with a dot (see `TableName`), so a temporary never
    /// collides with a table's file, and a writer removes any left over by a killed process.
    package static let temporaryPrefix = ".cabinet-tmp."

    package static func failure(_ operation: String, _ path: String, code: Int32 = errno) -> CabinetError {
        let message = code == ELOOP ? "it is a symbolic link, which Cabinet does not follow in a store" : String(cString: strerror(code))
        return .systemCallFailure(RecordLocation(file: path), operation: operation, errno: code, message: message)
    }

    /// Whether anything (a file, a directory, a link, which is not followed) is at `path`.
    package static func exists(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }

    /// Renames `from` over `to`, replacing it atomically; with `sync`, flushes the directory after.
    package static func replace(_ to: String, with from: String, directory: String, sync: Bool) throws {
        guard rename(from, to) == 0 else { throw failure("rename \(from) to", to) }
        if sync { try syncDirectory(directory) }
    }

    /// Removes the file at `path`; a file that is already gone is not an error.
    package static func remove(_ path: String) throws {
        if unlink(path) != 0 && errno != ENOENT { throw failure("remove", path) }
    }

    /// Flushes a directory's entries (new names, renames, removals) to the disk.
    package static func syncDirectory(_ directory: String) throws {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw failure("open directory", directory) }
        defer { close(fd) }
        if fsync(fd) != 0 { throw failure("sync directory", directory) }
    }

    /// Flushes the file at `path` (not followed if it is a link); a file that is
    /// gone is not an error.
    package static func syncFile(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return }
            throw failure("open", path)
        }
        defer { close(fd) }
        if fsync(fd) != 0 { throw failure("sync", path) }
    }

    /// Creates `path` afresh and writes `bytes` to it. `path` is a temporary that is renamed into place.
    package static func write(_ bytes: [UInt8], to path: String, sync: Bool) throws {
        if unlink(path) != 0 && errno != ENOENT { throw failure("remove leftover", path) }
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw failure("create", path) }
        defer { close(fd) }
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { writeSome(fd, $0.baseAddress! + written, $0.count - written) }
            if result < 0 {
                if errno == EINTR { continue }
                throw failure("write", path)
            }
            written += result
        }
        if sync && fsync(fd) != 0 { throw failure("sync", path) }
    }

    /// Writes `bytes` to `final` whole or not at all: to `final.tmp`, then renamed
    /// over `final` (which, if it is a link, is replaced, not followed).
    package static func writeWhole(_ bytes: [UInt8], to final: String, directory: String, sync: Bool) throws {
        try write(bytes, to: final + ".tmp", sync: sync)
        try DirectoryFiles.replace(final, with: final + ".tmp", directory: directory, sync: sync)
    }

    /// The whole content of `path`, or `nil` if there is no such file. A link, a
    /// directory or a device in its place is an error, not something to read.
    package static func read(_ path: String) throws -> [UInt8]? {
        try ReadHandle(path)?.read(upTo: .max)
    }

    /// A file opened for reading: never through a link, never a FIFO or a
    /// device (an error naming the file); closed when the handle goes.
    package final class ReadHandle {
        let path: String
        private let fd: Int32
        /// The file's device and inode, as opened: a caller keeping the handle
        /// compares them with the path's to see the file replaced or removed.
        package let identity: (device: UInt64, inode: UInt64)
        /// Where the next read starts (reads are positional: `rewind()` costs no call).
        private var offset = 0

        /// `nil` if there is no file at `path`.
        package init?(_ path: String) throws {
            self.path = path
            // O_NONBLOCK: a FIFO in the file's place must not hang the open.
            let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            if descriptor < 0 {
                if errno == ENOENT { return nil }
                throw failure("open", path)
            }
            var status = stat()
            let statFailure = fstat(descriptor, &status) == 0 ? nil : failure("stat", path)
            if statFailure != nil || (status.st_mode & S_IFMT) != S_IFREG {
                closeDescriptor(descriptor)
                throw statFailure ?? CabinetError.systemCallFailure(RecordLocation(file: path), operation: "open", errno: EINVAL,
                                                                    message: "it is not a regular file; move it out of the store directory")
            }
            fd = descriptor
            identity = (UInt64(status.st_dev), UInt64(status.st_ino))
        }

        /// The next read starts at the file's beginning again.
        package func rewind() { offset = 0 }

        deinit { closeDescriptor(fd) }

        /// Up to `count` bytes from where the last read stopped (fewer only at the file's end).
        package func read(upTo count: Int) throws -> [UInt8] {
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: Swift.min(count, 1 << 16))
            while bytes.count < count {
                let wanted = Swift.min(chunk.count, count - bytes.count)
                let got = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, wanted, off_t(offset)) }
                if got < 0 {
                    if errno == EINTR { continue }
                    throw failure("read", path)
                }
                if got == 0 { break }
                offset += got
                bytes.append(contentsOf: chunk[0..<got])
            }
            return bytes
        }
    }
}

// The C library's write, read and close, named apart: inside `DirectoryFiles`
// (and types with a `close()` of their own) they are hidden, and qualifying
// them (`Glibc.write`) would tie the file to one C library.
private func writeSome(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int { write(fd, bytes, count) }
func closeDescriptor(_ fd: Int32) { _ = close(fd) }
