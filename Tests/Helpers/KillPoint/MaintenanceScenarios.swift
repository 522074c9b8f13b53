// compact(), backup(to:), ObjectStore.restore(from:to:) and the journal replay at open.
import Cabinet
import Foundation

/// Rewrites every file without its free space; the content must not change.
struct Compact: Scenario {
    let name = "compact"
    let classes: [StoredObject.Type] = [Song.self, Playlist.self]
    let bufferNames = ["Favorite"]
    func prepare(_ work: Work) throws {
        try SaveMulti().prepare(work)
        let store = try open(work.store)
        defer { store.close() }
        let songs = insertSongs(60, "filler", into: store)
        try store.save()
        for song in songs where song.rowID % 3 == 0 { song.title = String(repeating: "longer ", count: 12) }
        for song in songs where song.rowID % 3 == 1 { store.delete(song) }
        try store.save()                // moved and deleted records leave free blocks to compact away
    }
    func run(_ work: Work, _ steps: Steps) throws {
        let store = try open(work.store)
        defer { store.close() }
        steps.arm()
        try steps.step("compact", memory: { try describe(store, self) }) { try store.compact() }
    }
}

/// A backup of the save-multi store to `work.backup`. The source must not change;
/// the copy must be whole, or refused both by verify and by restore.
struct BackupScenario: Scenario {
    let name = "backup"
    let classes: [StoredObject.Type] = [Song.self, Playlist.self]
    let bufferNames = ["Favorite"]
    func prepare(_ work: Work) throws { try SaveMulti().prepare(work) }
    func run(_ work: Work, _ steps: Steps) throws {
        let store = try open(work.store)
        defer { store.close() }
        steps.arm()
        try steps.step("backup") { try store.backup(to: work.backup) }
    }
    func dumpAfter(_ work: Work, source: [String]) throws -> [String] {
        try checkBackup(at: work.backup, scratch: work.dir + "/restored", source: source)
    }

    /// What a user gets from the backup directory: "none" (absent, empty, or
    /// refused by both verify and restore), "complete" (restores to exactly the
    /// source's objects), or a line starting "BAD" that says what is wrong.
    func checkBackup(at backup: String, scratch: String, source: [String]) throws -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: backup)) ?? []
        if entries.allSatisfy({ $0 == ".cabinet-lock" }) { return ["backup: none"] }
        var problems: [String]
        do {
            problems = try StoreVerifier.verify(path: backup).map(\.description)
        } catch {
            problems = ["\(error)"]
        }
        try? FileManager.default.removeItem(atPath: scratch)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        do {
            try ObjectStore.restore(from: backup, to: scratch)
        } catch {
            return problems.isEmpty ? ["backup: BAD verify passes it but restore refuses it: \(error)"] : ["backup: none"]
        }
        let restored: [String]
        do {
            let store = try open(scratch)
            defer { store.close() }
            restored = try describe(store, self)
        } catch {
            return ["backup: BAD restore accepts it but the restored store does not open: \(error)"]
        }
        let objects = source.prefix { !$0.hasPrefix("format ") }
        if let (expected, found) = firstDifference(Array(objects), restored) {
            return ["backup: BAD \(problems.isEmpty ? "verify passes and " : "")restore accepts a copy that differs from the source: expected \(expected), found \(found)"]
        }
        let metadataLines = try metadata(scratch), sourceMetadata = Array(source.drop { !$0.hasPrefix("format ") })
        let differs = firstDifference(sourceMetadata, metadataLines)
        return ["backup: complete"] + (differs.map { ["backup: restored metadata differs: source \($0.0), copy \($0.1)"] } ?? [])
    }
}

/// Replaces the save-multi store with a backup of a different store.
struct RestoreScenario: Scenario {
    let name = "restore"
    let classes: [StoredObject.Type] = [Song.self, Playlist.self]
    let bufferNames = ["Favorite"]
    func prepare(_ work: Work) throws {
        let other = Work(dir: work.dir + "/other")
        let store = try open(other.store)
        let songs = insertSongs(4, "from the backup", into: store)
        let list = Playlist()
        list.title = "backed up"
        list.songs = songs.reversed()
        store.insert(list)
        try store.setNamedBuffer(favorites([songs[3]], "backup"), forName: "Favorite")
        try store.save()
        try store.backup(to: work.backup)
        store.close()
        try FileManager.default.removeItem(atPath: other.dir)
        try SaveMulti().prepare(work)
    }
    func run(_ work: Work, _ steps: Steps) throws {
        steps.arm()
        try steps.step("restore") { try ObjectStore.restore(from: work.backup, to: work.store) }
    }
}

/// Opening a store whose last save was killed with its journal in place (the
/// test makes it: save-multi killed just after the journal's write). The
/// opening replays the journal; every point must end at save-multi's new state.
struct Replay: Scenario {
    let name = "replay"
    let classes: [StoredObject.Type] = [Song.self, Playlist.self]
    let bufferNames = ["Favorite"]
    func prepare(_ work: Work) throws { try SaveMulti().prepare(work) }
    func run(_ work: Work, _ steps: Steps) throws {
        steps.arm()
        var opened: ObjectStore?
        try steps.step("open") { opened = try ObjectStore(path: work.store, logger: childLogger) }
        guard let store = opened else { return }
        defer { store.close() }
        try steps.step("register") { try store.register(Song.self, Playlist.self) }
    }
}
