// The StorePool sample of docs/SERVICES.md, line for line, with a few lines between them
// so that it runs to the end (`make demo`); Tests/CabinetTests/ReadmeExampleTests.swift
// checks that every sample of the README and the guides is kept in Examples/ or Tests/.
import Cabinet

final class Note: StoredObject {
    @Stored var title = ""

    override func read(from buffer: inout DataBuffer) throws {
        title = try buffer.readString()
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(title)
    }
}

final class Notebook: StoredObject {
    @Stored var name = ""
    @Stored var notes = StoredList<Note>()        // an ordered to-many relationship of any length

    override func read(from buffer: inout DataBuffer) throws {
        name = try buffer.readString()
        notes = try buffer.readList(of: Note.self)   // also reads a list written by writeReferences
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(name)
        buffer.writeList(notes)                      // past 256 notes, a save writes only the nodes that changed
    }
    override func dissolveAllRelationships() {
        notes = []
    }
}

let pool = try StorePool(path: "/tmp/notes", classes: [Note.self, Notebook.self])  // Sendable
let id: UInt32 = try await pool.write { store in     // one writer at a time; saved when the block returns
    let note = Note(); note.title = "Hello"
    store.insert(note)
    return note.rowID                                // results must be Sendable; objects stay inside
}
let titles: [String] = try await pool.read { store in   // readers run concurrently with each other and with the writer
    try store.fetchAll(Note.self).map(\.title)           // a read sees whole saves only, across every class
}
print("note \(id) saved; \(titles.count) notes")
// The loop below waits for the next save: a task makes saves until it has seen one.
let filer = Task {
    while !Task.isCancelled {
        try await pool.write { store in
            let inbox = Notebook(); inbox.name = "Inbox"
            inbox.notes = [try store.fault(Note.self, rowID: id)]
            store.insert(inbox)
        }
        try await Task.sleep(for: .milliseconds(10))
    }
}
for await change in pool.changes {                   // committed saves, in order: class, inserted/updated/deleted row IDs
    print(change)
    break
}
filer.cancel()
_ = await filer.result
// A notebook of 1,000 notes, then one more: the second save writes a leaf of the
// list's tree, the nodes above it and the root, not the whole list.
let journal: UInt32 = try await pool.write { store in
    let book = Notebook(); book.name = "Journal"
    book.notes = StoredList((0..<1_000).map { day in let note = Note(); note.title = "day \(day)"; store.insert(note); return note })
    store.insert(book)
    return book.rowID
}
let count: Int = try await pool.write { store in
    guard let book = try store.fetch(Notebook.self, rowID: journal) else { return 0 }
    let note = Note(); note.title = "day 1000"
    store.insert(note)
    book.notes.append(note)
    return book.notes.count
}
print("the journal has \(count) notes")
try await pool.close()
