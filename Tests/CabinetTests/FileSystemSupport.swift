import Cabinet
import CTokyoCabinet
import Foundation

/// Everything a directory holds, byte for byte: each entry's kind, size, mode,
/// inode, modification time and content (or a link's target), and the
/// directory's own modification time. Two equal snapshots mean nothing was
/// created, removed, renamed, written or even truncated to the same bytes.
struct DirectorySnapshot: Equatable, CustomStringConvertible {
    struct Entry: Equatable {
        var mode: UInt32
        var size: Int64
        var inode: UInt64
        var modified: timespec
        var content: [UInt8]

        static func == (a: Entry, b: Entry) -> Bool {
            a.mode == b.mode && a.size == b.size && a.inode == b.inode && a.content == b.content
                && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
        }
    }

    var directoryModified: Int
    var entries: [String: Entry]

    init(_ path: String) throws {
        var status = stat()
        guard lstat(path, &status) == 0 else { throw CocoaError(.fileReadNoSuchFile) }
        directoryModified = status.st_mtim.tv_sec * 1_000_000_000 + status.st_mtim.tv_nsec
        entries = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: path) {
            let file = path + "/" + name
            guard lstat(file, &status) == 0 else { continue }
            let content: [UInt8]
            switch status.st_mode & S_IFMT {
            case S_IFREG: content = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
            case S_IFLNK: content = Array(try FileManager.default.destinationOfSymbolicLink(atPath: file).utf8)
            default: content = []
            }
            entries[name] = Entry(mode: status.st_mode, size: Int64(status.st_size), inode: UInt64(status.st_ino),
                                  modified: status.st_mtim, content: content)
        }
    }

    var description: String {
        entries.keys.sorted().map { "\($0) (\(entries[$0]!.size) bytes)" }.joined(separator: ", ")
    }
}

/// A store of `songs` songs titled s0, s1, …, one playlist "P" of them all, and
/// a named buffer "Favorite" that refers to them, saved and closed.
func makeSongStore(songs: Int = 3, format: RecordFormat = .checksummed) throws -> TemporaryDirectory {
    let directory = try TemporaryDirectory()
    let store = try ObjectStore(path: directory.path, options: .init(recordFormat: format))
    try store.register(Song.self, Playlist.self)
    let list = Playlist(); list.title = "P"
    for i in 0..<songs { let s = Song(); s.title = "s\(i)"; store.insert(s); list.songs.append(s) }
    store.insert(list)
    var favorites = DataBuffer(); favorites.writeReferences(list.songs)
    try store.setNamedBuffer(favorites, forName: "Favorite")
    try store.save()
    store.close()
    return directory
}

/// Runs `executable` as a user who may not write the store: `nobody` when the
/// tests run as root (for whom permissions do not stop writes), else the
/// current user, after the store has been made read-only.
func runAsReader(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
    if getuid() == 0 {
        return try run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", executable] + arguments)
    }
    return try run(executable, arguments)
}

/// Starts `cabinet-test-holder` on `path` (a reader with `reading`), which holds
/// the store until its input is closed; returns it, its input and its first line.
func startHolder(_ path: String, reading: Bool = false) throws -> (process: Process, input: Pipe, line: String) {
    let holder = Process()
    holder.executableURL = URL(fileURLWithPath: buildProductsDirectory + "/cabinet-test-holder")
    holder.arguments = reading ? [path, "read"] : [path]
    let input = Pipe(), output = Pipe()
    holder.standardInput = input
    holder.standardOutput = output
    try holder.run()
    return (holder, input, String(decoding: output.fileHandleForReading.availableLine(), as: UTF8.self))
}

/// Makes a store directory and its files read-only (and readable by anyone).
func makeReadOnly(_ path: String) throws {
    for name in try FileManager.default.contentsOfDirectory(atPath: path) {
        chmod(path + "/" + name, 0o444)
    }
    chmod(path, 0o555)
}

/// Gives a read-only store back its write permission, so it can be cleaned up.
func makeWritable(_ path: String) {
    chmod(path, 0o755)
    for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
        chmod(path + "/" + name, 0o644)
    }
}

extension RawTokyoCabinet {
    /// Leaves the class file at `path` as a writer killed inside a transaction
    /// leaves it: the changes in `records` half-made in the file, the old bytes
    /// in `<path>.wal`, and the header's "open" flag set. (Captured while the
    /// transaction is open, then the handle is aborted and the capture written back.)
    static func leaveInterruptedTransaction(_ path: String, _ records: [([UInt8], [UInt8])]) throws {
        guard let hdb = tchdbnew() else { fatalError("tchdbnew") }
        defer { tchdbdel(hdb) }
        precondition(tchdbopen(hdb, path, Int32(HDBOWRITER)), "open \(path)")
        precondition(tchdbtranbegin(hdb), "begin")
        for (key, value) in records {
            precondition(tchdbput(hdb, key, Int32(key.count), value, Int32(value.count)), "put")
        }
        _ = tchdbmemsync(hdb, false)
        let file = try Data(contentsOf: URL(fileURLWithPath: path))
        let log = try Data(contentsOf: URL(fileURLWithPath: path + ".wal"))
        precondition(tchdbtranabort(hdb) && tchdbclose(hdb))
        try file.write(to: URL(fileURLWithPath: path))
        try log.write(to: URL(fileURLWithPath: path + ".wal"))
    }
}
