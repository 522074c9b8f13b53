import Hummingbird

/// What a client sends to create or replace a note.
public struct NoteInput: Decodable, Sendable {
    public var title: String
    public var body: String
}

/// What a client sends to create a notebook.
public struct NotebookInput: Decodable, Sendable {
    public var title: String
}

/// A note as the API returns it. `notebook` is the ID of the notebook it was appended to.
public struct NoteRecord: ResponseCodable, Sendable, Equatable {
    public var id: Int
    public var title: String
    public var body: String
    public var notebook: Int?

    public init(id: Int, title: String, body: String, notebook: Int?) {
        self.id = id
        self.title = title
        self.body = body
        self.notebook = notebook
    }
}

/// A notebook as the API returns it: its notes are listed by `GET /notebooks/:id/notes`.
public struct NotebookRecord: ResponseCodable, Sendable, Equatable {
    public var id: Int
    public var title: String
    public var noteCount: Int

    public init(id: Int, title: String, noteCount: Int) {
        self.id = id
        self.title = title
        self.noteCount = noteCount
    }
}

/// A page of a listing; `next` is the `after` that fetches the following page (nil at the end).
public struct NotePage: ResponseCodable, Sendable {
    public var notes: [NoteRecord]
    public var next: Int?

    public init(notes: [NoteRecord], limit: Int) {
        self.notes = notes
        self.next = notes.count == limit ? notes.last?.id : nil
    }
}

/// What `--seed-notes` made: the bench reads it to pick IDs.
public struct SeedSummary: Codable, Sendable {
    /// The first and last ID of the loose notes (IDs in between are all theirs).
    public var firstNote: Int
    public var lastNote: Int
    /// A notebook holding `notebookNotes` notes (0: no notebook was made).
    public var notebook: Int
    public var notebookNotes: Int

    public init(firstNote: Int, lastNote: Int, notebook: Int, notebookNotes: Int) {
        self.firstNote = firstNote
        self.lastNote = lastNote
        self.notebook = notebook
        self.notebookNotes = notebookNotes
    }
}

/// The storage behind the routes; each service implements it on its own engine.
/// Every method is one transaction. `nil` (or `false`) means "no such note or notebook".
public protocol NotesRepository: Sendable {
    /// Inserts a note; with `notebook`, appends it to that notebook's ordered list in the same save.
    func createNote(_ input: NoteInput, notebook: Int?) async throws -> NoteRecord?
    func note(id: Int) async throws -> NoteRecord?
    func updateNote(id: Int, _ input: NoteInput) async throws -> NoteRecord?
    /// Deletes a note and removes it from its notebook.
    func deleteNote(id: Int) async throws -> Bool
    /// Up to `limit` notes with IDs above `after`, in ID order.
    func notes(after: Int, limit: Int) async throws -> [NoteRecord]

    func createNotebook(_ input: NotebookInput) async throws -> NotebookRecord
    func notebook(id: Int) async throws -> NotebookRecord?
    /// Up to `limit` notes of a notebook, in its order, after the note `after` (0: from the start).
    func notes(inNotebook id: Int, after: Int, limit: Int) async throws -> [NoteRecord]?

    /// Makes `notes` loose notes and a notebook of `notebookNotes` notes, in a few large transactions.
    func seed(notes: Int, notebookNotes: Int) async throws -> SeedSummary
    func close() async throws
}

/// The body of every seeded note (about the size of a short note).
public let seedBody = "Seeded by --seed-notes: a short note of about a hundred bytes, the size the bench's writes send."
