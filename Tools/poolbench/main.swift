import Cabinet
import Foundation
import GRDB

// poolbench: what one small write block costs. Runs N `pool.write { }` blocks
// (insert one note, or update one), and the same on a plain ObjectStore with a
// save per op, timing each phase. Under callgrind, toggle collection on
// `*poolbench7measure*` to count only the measured loop.
//
// The grdb-* modes do the same on GRDB's DatabasePool as the notes service
// uses it (WAL, synchronous = NORMAL, a Codable record).
//
// pool-owner-touch is the notebook append without the append: the note inserted
// and the notebook's record rewritten (its `touches` counted up), its list left
// as it is. Two class files change, as for an append, but no list node: the
// floor of what an append to a notebook can cost (BENCHMARKS.md, "Targets and
// ceilings").
//
//   poolbench [pool-insert|pool-update|pool-list-append|pool-owner-touch|pool-read|store-insert|store-update|store-list-append|grdb-insert|grdb-update|grdb-read|all] [count] [directory]

final class Note: StoredObject {
    @Stored var title = ""
    @Stored var body = ""

    override func read(from buffer: inout DataBuffer) throws {
        title = try buffer.readString()
        body = try buffer.readString()
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(title)
        buffer.writeString(body)
    }
}

/// A notebook: its notes a `StoredList` (out of line past 256).
final class Notebook: StoredObject {
    @Stored var touches: UInt32 = 0
    @Stored var notes = StoredList<Note>()

    override func read(from buffer: inout DataBuffer) throws {
        touches = try buffer.readUInt32()
        notes = try buffer.readList(of: Note.self)
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeUInt32(touches)
        buffer.writeList(notes)
    }
    override func dissolveAllRelationships() { notes = [] }
}

let body = String(repeating: "Some words of a note. ", count: 10)

/// How many callers run at once (POOLBENCH_CALLERS, default 1): each of them
/// calls the blocks one after another, as a service's connections do.
let callers = Int(ProcessInfo.processInfo.environment["POOLBENCH_CALLERS"] ?? "1") ?? 1

/// Runs `body` for 0..<count, split among `callers` tasks.
func concurrently(_ count: Int, _ body: @escaping @Sendable (Int) async throws -> Void) async throws {
    if callers == 1 {
        for index in 0..<count { try await body(index) }
        return
    }
    try await withThrowingTaskGroup(of: Void.self) { group in
        for caller in 0..<callers {
            group.addTask {
                for index in stride(from: caller, to: count, by: callers) { try await body(index) }
            }
        }
        try await group.waitForAll()
    }
}

@inline(never)
func measure(_ label: String, count: Int, _ work: () async throws -> Void) async throws {
    let start = DispatchTime.now().uptimeNanoseconds
    try await work()
    let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e3
    print(String(format: "%-14@ %8d ops %10.0f µs  %7.2f µs/op", label as NSString, count, elapsed, elapsed / Double(count)))
}

func freshDirectory(_ base: String?, _ name: String) -> String {
    let root = base ?? NSTemporaryDirectory()
    let path = root + "/poolbench-\(name)-\(getpid())"
    try? FileManager.default.removeItem(atPath: path)
    return path
}

/// Inserts a notebook of `count` new notes.
func insertNotebook(of count: Int, into store: ObjectStore) -> Notebook {
    let notebook = Notebook()
    notebook.notes = StoredList((0..<count).map { index in
        let note = Note(); note.title = "Note \(index)"; note.body = body
        store.insert(note)
        return note
    })
    store.insert(notebook)
    return notebook
}

func runPool(_ mode: String, count: Int, base: String?) async throws {
    let path = freshDirectory(base, mode)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let pool = try StorePool(path: path, classes: [Note.self, Notebook.self])
    let seed: UInt32 = try await pool.write { store in
        let note = Note(); note.title = "seed"; note.body = body
        store.insert(note)
        return note.rowID
    }
    switch mode {
    case "pool-insert":
        try await measure(mode, count: count) {
            try await concurrently(count) { index in
                _ = try await pool.write { store in
                    let note = Note(); note.title = "Note \(index)"; note.body = body
                    store.insert(note)
                    return note.rowID
                }
            }
        }
    case "pool-update":
        try await measure(mode, count: count) {
            try await concurrently(count) { index in
                _ = try await pool.write { store in
                    let note = try store.fetch(Note.self, rowID: seed)!
                    note.title = "Title \(index)"
                    return note.rowID
                }
            }
        }
    case "pool-list-append", "pool-owner-touch":
        // The notes service's POST /notebooks/:id/notes: a note appended to a notebook of 100,000
        // (or, touching, the notebook's record rewritten instead).
        let notebookID: UInt32 = try await pool.write { store in insertNotebook(of: 100_000, into: store).rowID }
        let appends = mode == "pool-list-append"
        try await measure(mode, count: count) {
            try await concurrently(count) { index in
                _ = try await pool.write { store in
                    let notebook = try store.fetch(Notebook.self, rowID: notebookID)!
                    let note = Note(); note.title = "Appended \(index)"; note.body = body
                    store.insert(note)
                    if appends { notebook.notes.append(note) } else { notebook.touches &+= 1 }
                    return note.rowID
                }
            }
        }
    case "pool-read":
        try await measure(mode, count: count) {
            try await concurrently(count) { _ in
                _ = try await pool.read { store in try store.fetch(Note.self, rowID: seed)!.title }
            }
        }
    default: fatalError("unknown mode \(mode)")
    }
    try await pool.close()
}

struct NoteRow: Codable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "note"
    var id: Int64?
    var title: String
    var body: String

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

func runGRDB(_ mode: String, count: Int, base: String?) async throws {
    let path = freshDirectory(base, mode)
    defer { try? FileManager.default.removeItem(atPath: path) }
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    var configuration = Configuration()
    configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
    let pool = try DatabasePool(path: path + "/notes.sqlite", configuration: configuration)
    try await pool.write { db in
        try db.create(table: "note") { t in
            t.autoIncrementedPrimaryKey("id")
            t.column("title", .text).notNull()
            t.column("body", .text).notNull()
        }
    }
    let seed: Int64 = try await pool.write { db in
        var row = NoteRow(id: nil, title: "seed", body: body)
        try row.insert(db)
        return row.id!
    }
    switch mode {
    case "grdb-insert":
        try await measure(mode, count: count) {
            try await concurrently(count) { index in
                _ = try await pool.write { db in
                    var row = NoteRow(id: nil, title: "Note \(index)", body: body)
                    try row.insert(db)
                    return row.id!
                }
            }
        }
    case "grdb-update":
        try await measure(mode, count: count) {
            try await concurrently(count) { index in
                _ = try await pool.write { db in
                    var row = try NoteRow.fetchOne(db, key: seed)!
                    row.title = "Title \(index)"
                    try row.update(db)
                    return row.id!
                }
            }
        }
    case "grdb-read":
        try await measure(mode, count: count) {
            try await concurrently(count) { _ in
                _ = try await pool.read { db in try NoteRow.fetchOne(db, key: seed)!.title }
            }
        }
    default: fatalError("unknown mode \(mode)")
    }
    try pool.close()
}

func runStore(_ mode: String, count: Int, base: String?) async throws {
    let path = freshDirectory(base, mode)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let store = try ObjectStore(path: path)
    try store.register(Note.self, Notebook.self)
    // POOLBENCH_NO_UNDO=1: without undo snapshots (which encode a StoredList whole, inline).
    if ProcessInfo.processInfo.environment["POOLBENCH_NO_UNDO"] != nil { store.undoManager.isEnabled = false }
    let seed = Note(); seed.title = "seed"; seed.body = body
    store.insert(seed)
    try store.save()
    switch mode {
    case "store-insert":
        try await measure(mode, count: count) {
            for index in 0..<count {
                let note = Note(); note.title = "Note \(index)"; note.body = body
                store.insert(note)
                try store.save()
            }
        }
    case "store-insert-10":
        // Ten inserts per save: what a save's fixed cost (transaction, locks) is worth.
        try await measure(mode, count: count) {
            for index in 0..<count {
                let note = Note(); note.title = "Note \(index)"; note.body = body
                store.insert(note)
                if index % 10 == 9 { try store.save() }
            }
            try store.save()
        }
    case "store-list-append":
        // The list append's target (a target, not a measurement): one note appended to a notebook of 100,000 and saved, ≤ 1 ms.
        let notebook = insertNotebook(of: 100_000, into: store)
        try store.save()
        try await measure(mode, count: count) {
            for index in 0..<count {
                let note = Note(); note.title = "Appended \(index)"; note.body = body
                store.insert(note)
                notebook.notes.append(note)
                try store.save()
            }
        }
    case "store-update":
        try await measure(mode, count: count) {
            for index in 0..<count {
                seed.title = "Title \(index)"
                try store.save()
            }
        }
    default: fatalError("unknown mode \(mode)")
    }
    store.close()
}

let arguments = CommandLine.arguments
let mode = arguments.count > 1 ? arguments[1] : "all"
let count = arguments.count > 2 ? Int(arguments[2])! : 20_000
let base = arguments.count > 3 ? arguments[3] : nil
let modes = mode == "all" ? ["pool-insert", "pool-update", "pool-read", "store-insert", "store-update", "grdb-insert", "grdb-update", "grdb-read"] : [mode]
// A synchronous main that waits on a semaphore, not top-level await: under
// valgrind, an async main's dispatchMain (the main thread in sigsuspend) crashes it.
let done = DispatchSemaphore(value: 0)
Task.detached {
    do {
        for mode in modes {
            if mode.hasPrefix("pool") {
                try await runPool(mode, count: count, base: base)
            } else if mode.hasPrefix("grdb") {
                try await runGRDB(mode, count: count, base: base)
            } else {
                try await runStore(mode, count: count, base: base)
            }
        }
    } catch {
        print("poolbench: \(error)")
        exit(1)
    }
    done.signal()
}
done.wait()
