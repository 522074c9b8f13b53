// What an app that writes `import Cabinet` and nothing else can name and do
// (docs/PUBLIC-API.md). This target depends on Cabinet alone, so it builds only
// while every app-facing type is reachable through Cabinet's typealiases;
// AppSurfaceTests runs it. Tools/check-public-api.sh checks the other side:
// what `import Cabinet` alone must not show (StorageTable, CRC32, ...).
import Cabinet
import Foundation

final class SurfaceNote: StoredObject {
    @Stored var text = ""

    override func read(from buffer: inout DataBuffer) throws {
        text = try buffer.readString()
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(text)
    }
}

/// Saves a note in memory, backs it up to `directory`, opens the backup with
/// options, verifies it, exports and imports it, and catches a `CabinetError` by
/// its code, all through the names `import Cabinet` gives; returns what each step saw.
public func exerciseAppSurface(in directory: String) throws -> [String] {
    var seen: [String] = []
    let memory: any StorageBackend = MemoryBackend(name: "surface")
    let store = try ObjectStore(backend: memory)
    try store.register(SurfaceNote.self)
    let note = SurfaceNote()
    note.text = "hello"
    store.insert(note)
    let durability: CommitDurability = .flushed
    try store.save(durability: durability)
    var reports: [StoreProgress] = []
    let progress: StoreProgress.Handler = { reports.append($0) }
    try store.backup(to: directory + "/backup", progress: progress)
    store.close()
    seen.append("backup reported \(reports.isEmpty ? "nothing" : "progress")")

    var options = TokyoCabinetBackend.Options()
    options.syncOnCommit = true
    let backend: TokyoCabinetBackend = try TokyoCabinetBackend(directory: directory + "/backup", options: options)
    let disk = try ObjectStore(backend: backend)
    try disk.register(SurfaceNote.self)
    seen.append("notes: " + (try disk.fetchAll(SurfaceNote.self).map(\.text).joined(separator: ",")))
    do {
        _ = try ObjectStore(path: directory + "/backup")
        seen.append("a second writer opened the store")
    } catch CabinetError.Code.storeLocked {
        seen.append("a second writer is refused")
    }
    let order: TokyoCabinetByteOrder = .littleEndian
    try disk.exportStore(to: directory + "/mac", byteOrder: order)
    disk.close()

    let problems: [StorageProblem] = try StoreVerifier.verify(path: directory + "/backup")
    let kinds: [StorageProblem.Kind?] = problems.map(\.kind)
    seen.append("problems: \(kinds.count)")
    let report: StoreImportReport = try ObjectStore.importStore(from: directory + "/mac", to: directory + "/back")
    seen.append("imported: " + report.tables.map { "\($0.name) \($0.records)" }.sorted().joined(separator: ", "))

    _ = FileManager.default.createFile(atPath: directory + "/file", contents: Data())
    do {
        _ = try ObjectStore(path: directory + "/file")
        seen.append("a file opened as a store")
    } catch let error as CabinetError where error.code == .notADirectory {
        let location: RecordLocation? = error.location
        seen.append("not a directory\(location == nil ? "" : " at a record")")
    }
    seen.append("largest value: \(StorageLimits.largestValue > 0)")
    return seen
}
