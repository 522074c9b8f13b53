import Foundation

/// Files an interrupted operation leaves in a store directory, and how a writer
/// tidies them when it opens the store.
extension TokyoCabinetBackend {
    /// Whether `name` is a file Tokyo Cabinet keeps beside a table's file, never a table of its own:
    /// its write-ahead log (`Song.wal`) or a temporary of its optimize (`Song.tmp.<n>`).
    static func isLeftover(_ name: String) -> Bool {
        name.hasSuffix(".wal") || TableName.isRebuildTemporary(name)
    }

    /// Removes Cabinet's own temporaries (a file being created or rebuilt when
    /// the process died: the original is still in place), and settles the
    /// temporaries of Tokyo Cabinet's optimize, which older versions of Cabinet
    /// used: `tchdboptimize` unlinks `Song` only once `Song.tmp.<n>` is complete,
    /// so when `Song` is missing the temporary is the only copy and becomes
    /// `Song`; otherwise it is a partial copy and goes.
    static func tidyLeftovers(in directory: String) throws {
        for name in try TokyoCabinetDirectory.allNames(in: directory) {
            let path = directory + "/" + name
            if name.hasPrefix(DirectoryFiles.temporaryPrefix) {
                try DirectoryFiles.remove(path)
            } else if name == restoreStagingName + ".partial" {
                // A restore that was not yet decided: the store is as it was.
                do {
                    try FileManager.default.removeItem(atPath: path)
                } catch {
                    throw CabinetError.cannotAccessDirectory(path: directory, reason: "cannot remove an interrupted restore's copy '\(path)': \(error.localizedDescription); check its permissions")
                }
            } else if let base = TableName.rebuiltFile(ofTemporary: name), TableName.problem(with: base) == nil {
                if !DirectoryFiles.exists(directory + "/" + base) && TokyoCabinetTable.hasMagic(atPath: path) {
                    try DirectoryFiles.replace(directory + "/" + base, with: path, directory: directory, sync: true)
                } else {
                    try DirectoryFiles.remove(path)
                }
            }
        }
    }
}
