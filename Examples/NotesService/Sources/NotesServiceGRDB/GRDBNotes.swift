import Foundation
import GRDB
import Logging
import NotesAPI

/// A note row: GRDB's Codable record, as its README teaches. `position` orders a notebook's notes.
struct NoteRow: Codable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "note"
    var id: Int64?
    var title: String
    var body: String
    var notebookId: Int64?
    var position: Int64?

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

    var record: NoteRecord {
        NoteRecord(id: Int(id ?? 0), title: title, body: body, notebook: notebookId.map(Int.init))
    }
}

struct NotebookRow: Codable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "notebook"
    var id: Int64?
    var title: String

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

/// The notes API on a GRDB `DatabasePool`: WAL, concurrent readers, one writer.
///
/// `synchronous = NORMAL`: a commit survives the process being killed, not a power
/// loss, the same level as Cabinet's default saves (SQLite's own default, FULL,
/// syncs at every commit).
struct GRDBNotes: NotesRepository {
    let pool: DatabasePool

    init(directory: String, logger: Logger) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        pool = try DatabasePool(path: directory + "/notes.sqlite", configuration: configuration)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.create(table: "notebook") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("title", .text).notNull()
            }
            try db.create(table: "note") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("title", .text).notNull()
                t.column("body", .text).notNull()
                t.column("notebookId", .integer).references("notebook", onDelete: .setNull)
                t.column("position", .integer)
            }
            try db.create(index: "note_on_notebook", on: "note", columns: ["notebookId", "position"])
        }
        try migrator.migrate(pool)
        logger.info("opened", metadata: ["path": "\(pool.path)", "engine": "GRDB DatabasePool"])
    }

    func createNote(_ input: NoteInput, notebook: Int?) async throws -> NoteRecord? {
        try await pool.write { db in
            var row = NoteRow(id: nil, title: input.title, body: input.body, notebookId: nil, position: nil)
            if let notebook {
                guard try NotebookRow.exists(db, key: notebook) else { return nil }
                row.notebookId = Int64(notebook)
                row.position = try Self.nextPosition(db, notebook: Int64(notebook))
            }
            try row.insert(db)
            return row.record
        }
    }

    func note(id: Int) async throws -> NoteRecord? {
        try await pool.read { db in try NoteRow.fetchOne(db, key: id)?.record }
    }

    func updateNote(id: Int, _ input: NoteInput) async throws -> NoteRecord? {
        try await pool.write { db in
            guard var row = try NoteRow.fetchOne(db, key: id) else { return nil }
            row.title = input.title
            row.body = input.body
            try row.update(db)
            return row.record
        }
    }

    func deleteNote(id: Int) async throws -> Bool {
        try await pool.write { db in try NoteRow.deleteOne(db, key: id) }
    }

    func notes(after: Int, limit: Int) async throws -> [NoteRecord] {
        try await pool.read { db in
            try NoteRow.filter(Column("id") > after).order(Column("id")).limit(limit).fetchAll(db).map(\.record)
        }
    }

    func createNotebook(_ input: NotebookInput) async throws -> NotebookRecord {
        try await pool.write { db in
            var row = NotebookRow(id: nil, title: input.title)
            try row.insert(db)
            return NotebookRecord(id: Int(row.id ?? 0), title: row.title, noteCount: 0)
        }
    }

    func notebook(id: Int) async throws -> NotebookRecord? {
        try await pool.read { db in
            guard let row = try NotebookRow.fetchOne(db, key: id) else { return nil }
            let count = try NoteRow.filter(Column("notebookId") == id).fetchCount(db)
            return NotebookRecord(id: id, title: row.title, noteCount: count)
        }
    }

    func notes(inNotebook id: Int, after: Int, limit: Int) async throws -> [NoteRecord]? {
        try await pool.read { db in
            guard try NotebookRow.exists(db, key: id) else { return nil }
            let start = try Int64.fetchOne(db, sql: "SELECT position FROM note WHERE id = ? AND notebookId = ?",
                                           arguments: [after, id]) ?? -1
            return try NoteRow.filter(Column("notebookId") == id && Column("position") > start)
                .order(Column("position")).limit(limit).fetchAll(db).map(\.record)
        }
    }

    func seed(notes: Int, notebookNotes: Int) async throws -> SeedSummary {
        try await pool.write { db in
            var first: Int64 = 0, last: Int64 = 0
            for index in 0..<notes {
                var row = NoteRow(id: nil, title: "Note \(index)", body: seedBody, notebookId: nil, position: nil)
                try row.insert(db)
                if index == 0 { first = row.id ?? 0 }
                last = row.id ?? 0
            }
            guard notebookNotes > 0 else { return SeedSummary(firstNote: Int(first), lastNote: Int(last), notebook: 0, notebookNotes: 0) }
            var notebook = NotebookRow(id: nil, title: "Big")
            try notebook.insert(db)
            for index in 0..<notebookNotes {
                var row = NoteRow(id: nil, title: "In notebook \(index)", body: seedBody,
                                  notebookId: notebook.id, position: Int64(index))
                try row.insert(db)
            }
            return SeedSummary(firstNote: Int(first), lastNote: Int(last), notebook: Int(notebook.id ?? 0), notebookNotes: notebookNotes)
        }
    }

    func close() async throws {
        try pool.close()
    }

    private static func nextPosition(_ db: Database, notebook: Int64) throws -> Int64 {
        let last = try Int64.fetchOne(db, sql: "SELECT MAX(position) FROM note WHERE notebookId = ?", arguments: [notebook])
        return (last ?? -1) + 1
    }
}
