import Cabinet
import Foundation
import NotesAPI
import Testing

/// A note as the service saved it before the live route: the same record, under
/// the same stored name, without the index of its notebook.
final class NoteBeforeLive: StoredObject {
    override class var storedName: String { "Note" }
    @Stored var title = ""
    @Stored var body = ""
    @Stored var notebook: NotebookBeforeLive?

    override func read(from buffer: inout DataBuffer) throws {
        title = try buffer.readString()
        body = try buffer.readString()
        notebook = try buffer.readReference(to: NotebookBeforeLive.self)
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(title)
        buffer.writeString(body)
        buffer.writeReference(notebook)
    }
}

/// A notebook as the service saved it before the live route (unchanged since).
final class NotebookBeforeLive: StoredObject {
    override class var storedName: String { "Notebook" }
    @Stored var title = ""
    @Stored var notes = StoredList<NoteBeforeLive>()

    override func read(from buffer: inout DataBuffer) throws {
        title = try buffer.readString()
        notes = try buffer.readList(of: NoteBeforeLive.self)
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(title)
        buffer.writeList(notes)
    }
    override func dissolveAllRelationships() {
        notes = StoredList()
    }
}

@Test(.timeLimit(.minutes(2)))
func aStoreMadeBeforeTheIndexOpensAndStreamsItsNotebooks() async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("notes-before-live-\(UUID().uuidString)").path
    let pool = try StorePool(path: directory, classes: [NoteBeforeLive.self, NotebookBeforeLive.self])
    let (notebook, members): (Int, [Int]) = try await pool.write { store in
        let notebook = NotebookBeforeLive()
        notebook.title = "Old"
        store.insert(notebook)
        let loose = NoteBeforeLive()
        loose.title = "loose"
        store.insert(loose)
        var members: [Int] = []
        for index in 0..<3 {
            let note = NoteBeforeLive()
            note.title = "old-\(index)"
            note.body = "body of old-\(index)"
            note.notebook = notebook
            store.insert(note)
            notebook.notes.append(note)
            members.append(Int(note.rowID))
        }
        return (Int(notebook.rowID), members)
    }
    try await pool.close()

    // The service's classes declare the index: opening builds it from the notes there.
    let service = try await RunningService.start(directory: directory)
    let live = try await LiveConnection.open(service.url("/notebooks/\(notebook)/live"))
    var events = live.events.makeAsyncIterator()
    let snapshot = try #require(try await events.next())
    #expect(snapshot.name == "snapshot")
    let notes = try JSONDecoder().decode(LiveSnapshot.self, from: Data(snapshot.data.utf8)).notes
    #expect(notes.map(\.id) == members)
    #expect(notes.map(\.title) == ["old-0", "old-1", "old-2"])
    await live.disconnect()
    try await service.shutdown()
}
