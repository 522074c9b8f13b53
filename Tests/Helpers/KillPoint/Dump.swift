// The canonical text of a store: what the app reads back (every object, every
// field, the named buffers), the classes' metadata and the files in the
// directory. The test compares it with the dumps of the old and new states.
import Cabinet
import Foundation

/// Every object of the scenario's classes, sorted by row ID, and its named buffers.
/// Also used on a live store, to check that memory survives a failed operation.
func describe(_ store: ObjectStore, _ scenario: any Scenario) throws -> [String] {
    var lines: [String] = []
    for type in scenario.classes {
        let objects = try store.fetchAll(type).sorted { $0.rowID < $1.rowID }
        lines.append("class \(type.storedName): \(objects.count) objects")
        for object in objects {
            let fields = (object as? any Dumpable)?.fields ?? "?"
            lines.append("  \(type.storedName) \(object.rowID) \(fields)")
        }
    }
    for name in scenario.bufferNames {
        let bytes = try store.namedBuffer(forName: name)?.allBytes
        lines.append("buffer \(name): " + (bytes.map { $0.map { String(format: "%02x", $0) }.joined() } ?? "none"))
    }
    return lines
}

/// Prints the dump of `work.store`. Exit status 3: the store does not open (or a
/// class does not register, or an object does not read); 4: verify finds damage.
func dump(_ scenario: any Scenario, _ work: Work) throws {
    if scenario.emptyIsAbsent && !FileManager.default.fileExists(atPath: work.store) {
        say("no store")
        return
    }
    var lines: [String]
    do {
        let store = try scenario.open(work.store)
        defer { store.close() }
        lines = try describe(store, scenario) + scenario.dumpExtra(store)
    } catch {
        quit(3, "the store does not open cleanly: \(error)")
    }
    if scenario.emptyIsAbsent && lines.allSatisfy({ $0.hasSuffix(": 0 objects") || $0.hasSuffix(": none") }) {
        say("no store")
        return
    }
    do {
        lines += try metadata(work.store)
    } catch {
        quit(3, "StoreInfo cannot read the store: \(error)")
    }
    let problems: [StoreVerifier.Problem]
    do {
        problems = try StoreVerifier.verify(path: work.store)
    } catch {
        quit(4, "verify cannot read the store: \(error)")
    }
    if !problems.isEmpty { quit(4, "verify finds damage: " + problems.map(\.description).joined(separator: "; ")) }
    lines += try scenario.dumpAfter(work, source: lines)
    say(lines.joined(separator: "\n"))
}

/// Each file's metadata (rows, last row ID, version, class ID) and the names of
/// the files in the directory: a class recreated empty, a class ID that moved or a
/// leftover temporary file all show here. Tokyo Cabinet's `*.wal` files are left
/// out: a transaction killed as it began leaves an empty one, which the next
/// open finds nothing in and leaves in place (one with content is rolled back
/// from and removed).
func metadata(_ path: String) throws -> [String] {
    let info = try StoreInfo(path: path)
    var lines = ["format \(info.recordFormat.rawValue)"]
    for table in info.tables {
        lines.append("table \(table.name) records=\(table.records) lastRow=\(table.lastRowID.map(String.init) ?? "-")"
                     + " version=\(table.classVersion.map(String.init) ?? "-") classID=\(table.classID.map(String.init) ?? "-")")
    }
    // The journal file holding no journal is the writer's, as the lock file is: listed only while it holds one.
    let journalPending = try TokyoCabinetBackend.hasPendingJournal(inDirectory: path)
    let files = try FileManager.default.contentsOfDirectory(atPath: path).filter {
        $0 != ".cabinet-lock" && !$0.hasSuffix(".wal") && ($0 != TokyoCabinetBackend.journalFileName || journalPending)
    }.sorted()
    lines.append("files \(files.joined(separator: " "))")
    return lines
}
