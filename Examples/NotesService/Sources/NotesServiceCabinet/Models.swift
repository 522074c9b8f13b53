import Cabinet
import NotesAPI

/// A note. `notebook` is the notebook it was appended to (a to-one reference).
final class Note: StoredObject {
    @Stored var title = ""
    @Stored var body = ""
    @Stored var notebook: Notebook?

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

    /// The delete rule: the notebook forgets a deleted note.
    override func prepareForDelete() {
        notebook?.notes.removeAll { $0 === self }
    }
    override func dissolveAllRelationships() {
        notebook = nil
    }

    var record: NoteRecord {
        NoteRecord(id: Int(rowID), title: title, body: body, notebook: notebook.map { Int($0.rowID) })
    }
}

/// A notebook: an ordered to-many relationship to its notes (one record, BNRPersistence's layout).
final class Notebook: StoredObject {
    @Stored var title = ""
    @Stored var notes: [Note] = []

    override func read(from buffer: inout DataBuffer) throws {
        title = try buffer.readString()
        notes = try buffer.readReferences(to: Note.self)
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(title)
        buffer.writeReferences(notes)
    }
    override func dissolveAllRelationships() {
        notes = []
    }

    var record: NotebookRecord {
        NotebookRecord(id: Int(rowID), title: title, noteCount: notes.count)
    }
}
