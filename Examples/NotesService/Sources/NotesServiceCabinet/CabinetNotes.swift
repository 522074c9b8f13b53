import Cabinet
import Logging
import NotesAPI

/// The notes API on Cabinet's `StorePool`: concurrent readers, one writer, each block a save.
struct CabinetNotes: NotesRepository {
    let pool: StorePool

    init(directory: String, logger: Logger) throws {
        pool = try StorePool(path: directory, classes: [Note.self, Notebook.self])
        logger.info("opened", metadata: ["path": "\(directory)", "engine": "Cabinet StorePool"])
    }

    func createNote(_ input: NoteInput, notebook: Int?) async throws -> NoteRecord? {
        try await pool.write { store in
            var owner: Notebook?
            if let notebook {
                guard let row = rowID(notebook), let found = try store.fetch(Notebook.self, rowID: row) else { return nil }
                owner = found
            }
            let note = Note()
            note.title = input.title
            note.body = input.body
            note.notebook = owner
            store.insert(note)
            owner?.notes.append(note)
            return note.record
        }
    }

    func note(id: Int) async throws -> NoteRecord? {
        guard let row = rowID(id) else { return nil }
        return try await pool.read { store in try store.fetch(Note.self, rowID: row)?.record }
    }

    func updateNote(id: Int, _ input: NoteInput) async throws -> NoteRecord? {
        guard let row = rowID(id) else { return nil }
        return try await pool.write { store in
            guard let note = try store.fetch(Note.self, rowID: row) else { return nil }
            note.title = input.title
            note.body = input.body
            return note.record
        }
    }

    func deleteNote(id: Int) async throws -> Bool {
        guard let row = rowID(id) else { return false }
        return try await pool.write { store in
            guard let note = try store.fetch(Note.self, rowID: row) else { return false }
            store.delete(note)
            return true
        }
    }

    func notes(after: Int, limit: Int) async throws -> [NoteRecord] {
        guard let start = UInt32(exactly: after) else { return [] }
        return try await pool.read { store in
            var page: [NoteRecord] = []
            try store.enumerate(Note.self, startingAfter: start) { note, stop in
                page.append(note.record)
                stop = page.count >= limit
            }
            return page
        }
    }

    func createNotebook(_ input: NotebookInput) async throws -> NotebookRecord {
        try await pool.write { store in
            let notebook = Notebook()
            notebook.title = input.title
            store.insert(notebook)
            return notebook.record
        }
    }

    func notebook(id: Int) async throws -> NotebookRecord? {
        guard let row = rowID(id) else { return nil }
        return try await pool.read { store in try store.fetch(Notebook.self, rowID: row)?.record }
    }

    func notes(inNotebook id: Int, after: Int, limit: Int) async throws -> [NoteRecord]? {
        guard let row = rowID(id) else { return nil }
        return try await pool.read { store in
            guard let notebook = try store.fetch(Notebook.self, rowID: row) else { return nil }
            let notes = notebook.notes
            // The cursor note as a fault: `firstIndex(of:)` then compares row IDs
            // leaf by leaf, without making an object per note it passes.
            var start = 0
            if after != 0 {
                guard let row = rowID(after) else { return [] }
                start = notes.firstIndex(of: try store.fault(Note.self, rowID: row)).map { $0 + 1 } ?? notes.count
            }
            return notes[start..<min(start + limit, notes.count)].map(\.record)
        }
    }

    func seed(notes: Int, notebookNotes: Int) async throws -> SeedSummary {
        let loose: (first: Int, last: Int) = try await pool.write { store in
            var first = 0, last = 0
            for index in 0..<notes {
                let note = Note()
                note.title = "Note \(index)"
                note.body = seedBody
                store.insert(note)
                if index == 0 { first = Int(note.rowID) }
                last = Int(note.rowID)
            }
            return (first, last)
        }
        guard notebookNotes > 0 else { return SeedSummary(firstNote: loose.first, lastNote: loose.last, notebook: 0, notebookNotes: 0) }
        let notebook: Int = try await pool.write { store in
            let notebook = Notebook()
            notebook.title = "Big"
            store.insert(notebook)
            var members: [Note] = []
            members.reserveCapacity(notebookNotes)
            for index in 0..<notebookNotes {
                let note = Note()
                note.title = "In notebook \(index)"
                note.body = seedBody
                note.notebook = notebook
                store.insert(note)
                members.append(note)
            }
            // Built at once, with full leaves, rather than by 100,000 appends.
            notebook.notes = StoredList(members)
            return Int(notebook.rowID)
        }
        return SeedSummary(firstNote: loose.first, lastNote: loose.last, notebook: notebook, notebookNotes: notebookNotes)
    }

    func close() async throws {
        try await pool.close()
    }
}

extension CabinetNotes: LiveNotesRepository {
    /// The notes whose `notebookRow` is the notebook's, observed on the pool:
    /// each save that adds, changes or removes one of them (its index entry or
    /// its record) brings an update; other saves cost the observation nothing.
    func liveNotes(inNotebook id: Int) async throws -> AsyncMapSequence<LiveResults<NoteRecord>, NotesUpdate>? {
        guard let row = rowID(id), try await pool.read({ store in try store.fetch(Notebook.self, rowID: row) != nil }) else { return nil }
        return pool.observeResults(Note.self, where: \.notebookRow, in: row...row) { note in note.record }
            .map { NotesUpdate(notes: $0.rows, deleted: $0.deleted, inserted: $0.inserted, modified: $0.modified, isInitial: $0.isInitial) }
    }
}

/// A row ID from a path's integer, or nil when no row can have it.
private func rowID(_ id: Int) -> UInt32? {
    UInt32(exactly: id).flatMap { $0 == 0 ? nil : $0 }
}
