// ObjectStore.importStore(from:to:) and exportStore(to:): each writes a new store
// whole or not at all, and only reads its source.
import Cabinet
import Foundation

/// Exports the save-multi store in the Mac's layout to `work.backup`. The source
/// must not change; the export must be absent, or import back to exactly the source.
struct ExportScenario: Scenario {
    let name = "export"
    let classes: [StoredObject.Type] = [Song.self, Playlist.self]
    let bufferNames = ["Favorite"]
    func prepare(_ work: Work) throws { try SaveMulti().prepare(work) }
    func run(_ work: Work, _ steps: Steps) throws {
        let store = try open(work.store)
        defer { store.close() }
        steps.arm()
        try steps.step("export") { try store.exportStore(to: work.backup) }
    }
    func dumpAfter(_ work: Work, source: [String]) throws -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: work.backup)) ?? []
        if entries.isEmpty { return ["backup: none"] }
        // A directory at the destination is a whole export: it must import.
        let imported = work.dir + "/reimported"
        try? FileManager.default.removeItem(atPath: imported)
        defer { try? FileManager.default.removeItem(atPath: imported) }
        do {
            let report = try ObjectStore.importStore(from: work.backup, to: imported)
            guard report.problems.isEmpty else { return ["backup: BAD the export imports with problems: \(report.problems)"] }
        } catch {
            return ["backup: BAD an export is in place but does not import: \(error)"]
        }
        return try BackupScenario().checkBackup(at: imported, scratch: work.dir + "/restored", source: source)
    }
}

/// Imports a Mac-layout copy of the save-multi store (made by `prepare` in
/// `work.dir/mac`) into `work.backup`: absent, or exactly the source's objects.
struct ImportScenario: Scenario {
    let name = "import"
    let classes: [StoredObject.Type] = [Song.self, Playlist.self]
    let bufferNames = ["Favorite"]
    func prepare(_ work: Work) throws {
        try SaveMulti().prepare(work)
        let store = try open(work.store)
        defer { store.close() }
        try store.exportStore(to: work.dir + "/mac")
    }
    func run(_ work: Work, _ steps: Steps) throws {
        steps.arm()
        try steps.step("import") { _ = try ObjectStore.importStore(from: work.dir + "/mac", to: work.backup) }
    }
    func dumpAfter(_ work: Work, source: [String]) throws -> [String] {
        try BackupScenario().checkBackup(at: work.backup, scratch: work.dir + "/restored", source: source)
    }
}
