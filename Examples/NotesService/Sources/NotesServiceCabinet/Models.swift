import Cabinet
import NotesAPI

/// A note. `notebook` is the notebook it was appended to (a to-one reference).
final class Note: StoredObject {
    @Stored var title = ""
    @Stored var body = ""
    @Stored var notebook: Notebook?

    /// Its notebook's row ID (0: none), so that a notebook's notes are a range
    /// of one index, which `GET /notebooks/:id/live` observes. Computed from the
    /// reference (a fault knows its row without loading it), so the record's
    /// bytes are as before: a store written without the index opens, and
    /// `register` builds the index from the notes there.
    var notebookRow: UInt32 { notebook?.rowID ?? 0 }

    override class var indexes: [StoredIndex] {
        [.value(\Note.notebookRow, named: "notebook")]
    }

    override func read(from buffer: inout DataBuffer) throws {
        title = try buffer.readString()
        body = try buffer.readString()
        notebook = try buffer.readReference(to: Notebook.self)
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(title)
        buffer.writeString(body)
        buffer.writeReference(notebook)
    }

    /// The delete rule: the notebook forgets a deleted note. `firstIndex(of:)`
    /// compares row IDs leaf by leaf, where `removeAll(where:)` would make an
    /// object for each of the notebook's notes; a note is in its notebook once.
    override func prepareForDelete() {
        guard let notebook, let index = notebook.notes.firstIndex(of: self) else { return }
        notebook.notes.remove(at: index)
    }
    override func dissolveAllRelationships() {
        notebook = nil
    }

    var record: NoteRecord {
        NoteRecord(id: Int(rowID), title: title, body: body, notebook: notebook.map { Int($0.rowID) })
    }
}

/// A notebook: an ordered to-many relationship to its notes. A `StoredList`, so
/// that appending to a notebook of 100,000 notes saves a leaf and the nodes above
/// it rather than rewriting 400 KB of row IDs; it reads stores written when this
/// was a `[Note]` (`writeReferences`).
final class Notebook: StoredObject {
    @Stored var title = ""
    @Stored var notes = StoredList<Note>()

    override func read(from buffer: inout DataBuffer) throws {
        title = try buffer.readString()
        notes = try buffer.readList(of: Note.self)
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(title)
        buffer.writeList(notes)
    }
    override func dissolveAllRelationships() {
        notes = StoredList()
    }

    var record: NotebookRecord {
        NotebookRecord(id: Int(rowID), title: title, noteCount: notes.count)
    }
}
