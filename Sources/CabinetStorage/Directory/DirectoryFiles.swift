#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The file-system steps that make a file appear whole or not at all: write it
/// under a temporary name in the same directory, then rename it over its final
/// name (rename is atomic within a directory), then, for power-loss durability,
/// flush the directory. Errors name the file and say what failed.
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
}
