/// What `cabinet verify` reports about the store directory itself: every entry
/// that is not a readable table, each with what to do about it.
extension TokyoCabinetBackend {
    /// Tokyo Cabinet's leftovers (a transaction log of a killed writer, a
    /// rebuild's temporary copy) and foreign entries (random bytes, an empty
    /// file, a link, a directory) among the store's files. Dot files are
    /// Cabinet's own and are not listed.
    public func storageProblems() throws -> [StorageProblem] {
        let entries = try TokyoCabinetDirectory.entries(of: path)
        return entries.compactMap { entry in
            switch entry {
            case .table, .transactionLog(_, _, pending: false):
                return nil
            case .transactionLog(let name, let table, pending: true):
                return StorageProblem(location: RecordLocation(file: filePath(forTable: name), className: table),
                                      reason: "a transaction of \(table) did not finish (its writer was killed) and is kept in this log; \(table) is not checked until it is rolled back: open the store writable once (the app, or `cabinet compact`)")
            case .rebuildTemporary(let name, let file):
                let hasOriginal = entries.contains(.table(file))
                let advice = hasOriginal
                    ? "\(file) is still there, so this copy is not needed: delete it"
                    : "\(file) is missing, so this may be its only copy: rename it to \(file) (or open the store writable, which recovers it)"
                return StorageProblem(location: RecordLocation(file: filePath(forTable: name)),
                                      reason: "a leftover of a rebuild of \(file) (Tokyo Cabinet's optimize) that did not finish; \(advice)")
            case .foreign(let name, let what):
                return StorageProblem(location: RecordLocation(file: filePath(forTable: name)),
                                      reason: "\(what), where only the store's tables belong: a table of this name cannot be read. If it was a table, restore it from a backup; if it is not part of the store, move it out of the store directory")
            }
        }
    }
}
