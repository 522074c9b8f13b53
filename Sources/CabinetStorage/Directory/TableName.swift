/// The names a table may have: a table may be a file in the store directory,
/// so its name must not reach outside it nor collide with the files Cabinet and
/// Tokyo Cabinet keep beside it. Every backend can rely on it.
///
/// Checked where a name comes in: where the layer above names a new table, and
/// in a save journal read from disk, whose table names are untrusted bytes.
package enum TableName {
    /// Why `name` cannot name a table, or `nil` if it can.
    package static func problem(with name: String) -> String? {
        if name.isEmpty || name.utf8.count > 255 {
            return "a table's name must be 1 to 255 bytes"
        }
        // Bytes, not `String.contains(_:)`: Foundation's substring search cost a
        // journal replay 17,000 instructions a table name: 51,000 of a one-block
        // commit's 395,000 (poolbench pool-list-append, one caller).
        if name.utf8.first == UInt8(ascii: ".") || name.utf8.contains(where: { $0 == UInt8(ascii: "/") || $0 == 0 || $0 == UInt8(ascii: "\n") }) {
            return "'\(name)' may not start with '.' or contain '/' or a newline (it would name a file outside the store, or one of Cabinet's own)"
        }
        if name.hasSuffix(".wal") {
            return "'\(name)' ends in '.wal', the name of another file's Tokyo Cabinet transaction log"
        }
        if isRebuildTemporary(name) {
            return "'\(name)' ends in '.tmp.' and a number, the name of Tokyo Cabinet's temporary copy of another file"
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
