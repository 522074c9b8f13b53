/// The names a table may have: a table may be a file in the store directory,
/// so its name must not reach outside it nor collide with the files Cabinet and
/// Tokyo Cabinet keep beside it. Every backend can rely on it.
///
/// Checked where a name comes in: where the layer above names a new table, and
/// in a save journal read from disk, whose table names are untrusted bytes.
package enum TableName {
    /// The longest name a file may have on the file systems Cabinet runs on.
    package static let longestFileName = 255

    /// What Tokyo Cabinet adds to a file's name for its transaction log, which
    /// every writer's open looks for (and a name too long for it fails to open).
    package static let logSuffix = ".wal"

    /// The longest name a table may have: a new or rebuilt table is written as
    /// `.cabinet-tmp.<name>` first, and that file's log name must fit too.
    package static let maximumLength = longestFileName - DirectoryFiles.temporaryPrefix.utf8.count - logSuffix.utf8.count

    /// The room a Tokyo Cabinet optimize of a B+ tree file needs after its name:
    /// it writes and opens `<name>.tmp.<inode>` (the inode up to 20 digits), whose
    /// log name must fit too.
    package static let optimizeSuffixLength = ".tmp.".utf8.count + 20 + logSuffix.utf8.count

    /// Why `name` cannot name a table, or `nil` if it can: a phrase that follows
    /// the name ("'Song.wal' may not end in '.wal', …").
    package static func problem(with name: String) -> String? {
        if name.isEmpty || name.utf8.count > maximumLength {
            return "must be 1 to \(maximumLength) bytes long, not \(name.utf8.count): Cabinet writes a new or rebuilt file as '\(DirectoryFiles.temporaryPrefix)' and the name, Tokyo Cabinet looks for that file's log, '…\(logSuffix)', and a file's name has at most \(longestFileName) bytes"
        }
        // Bytes, not `String.contains(_:)`: Foundation's general substring search
        // was a visible part of a journal replay, which checks every table name
        // (BENCHMARKS.md, "What the code's shape was chosen against").
        if name.utf8.first == UInt8(ascii: ".") || name.utf8.contains(where: { $0 == UInt8(ascii: "/") || $0 == 0 || $0 == UInt8(ascii: "\n") }) {
            return "may not start with '.' or contain '/' or a newline (it would name a file outside the store, or one of Cabinet's own)"
        }
        if name.hasSuffix(".wal") {
            return "may not end in '.wal', the name of another file's Tokyo Cabinet transaction log"
        }
        if isRebuildTemporary(name) {
            return "may not end in '.tmp.' and a number, the name of Tokyo Cabinet's temporary copy of another file"
        }
        return nil
    }

    /// Whether `name` is `<file>.tmp.<digits>`, the copy Tokyo Cabinet's optimize writes before renaming it over `<file>`.
    static func isRebuildTemporary(_ name: String) -> Bool {
        rebuiltFile(ofTemporary: name) != nil
    }

    /// The file a `<file>.tmp.<digits>` temporary is a copy of, or `nil` if `name` is no such temporary.
    static func rebuiltFile(ofTemporary name: String) -> String? {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 3, parts[parts.count - 2] == "tmp", let number = parts.last, !number.isEmpty,
              number.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        let file = parts.dropLast(2).joined(separator: ".")
        return file.isEmpty ? nil : file
    }
}
