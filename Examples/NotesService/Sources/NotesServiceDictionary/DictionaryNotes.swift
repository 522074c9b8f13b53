import Logging
import NotesAPI
import Synchronization

/// The notes API over Swift dictionaries in memory, behind one lock: no store at
/// all, nothing kept after the process ends. `make service-bench` runs it as the
/// ceiling of the routes themselves on this machine (HTTP, JSON, the request's
/// tasks): what any store's service could reach if storing cost nothing.
final class DictionaryNotes: NotesRepository {
    private struct Notebook {
        var title: String
        var notes: [Int]
    }

    private struct State {
        var notes: [Int: NoteRecord] = [:]
        /// Every note's ID, ascending (IDs are handed out in order).
        var order: [Int] = []
        var notebooks: [Int: Notebook] = [:]
        var nextID = 1

        mutating func newID() -> Int {
            defer { nextID += 1 }
            return nextID
        }

        /// The index in `order` of the first ID above `id`.
        func position(after id: Int) -> Int {
            var low = 0, high = order.count
            while low < high {
                let middle = (low + high) / 2
                if order[middle] <= id { low = middle + 1 } else { high = middle }
            }
            return low
        }
    }

    private let state = Mutex(State())

    init(logger: Logger) {
        logger.info("opened", metadata: ["engine": "dictionaries in memory (no store)"])
    }

    func createNote(_ input: NoteInput, notebook: Int?) async throws -> NoteRecord? {
        state.withLock { state in
            if let notebook, state.notebooks[notebook] == nil { return nil }
            let note = NoteRecord(id: state.newID(), title: input.title, body: input.body, notebook: notebook)
            state.notes[note.id] = note
            state.order.append(note.id)
            if let notebook { state.notebooks[notebook]!.notes.append(note.id) }
            return note
        }
    }

    func note(id: Int) async throws -> NoteRecord? {
        state.withLock { $0.notes[id] }
    }

    func updateNote(id: Int, _ input: NoteInput) async throws -> NoteRecord? {
        state.withLock { state in
            guard var note = state.notes[id] else { return nil }
            note.title = input.title
            note.body = input.body
            state.notes[id] = note
            return note
        }
    }

    func deleteNote(id: Int) async throws -> Bool {
        state.withLock { state in
            guard let note = state.notes.removeValue(forKey: id) else { return false }
            state.order.remove(at: state.position(after: id) - 1)
            if let notebook = note.notebook { state.notebooks[notebook]?.notes.removeAll { $0 == id } }
            return true
        }
    }

    func notes(after: Int, limit: Int) async throws -> [NoteRecord] {
        state.withLock { state in
            let start = state.position(after: after)
            return state.order[start..<min(start + limit, state.order.count)].compactMap { state.notes[$0] }
        }
    }

    func createNotebook(_ input: NotebookInput) async throws -> NotebookRecord {
        state.withLock { state in
            let id = state.newID()
            state.notebooks[id] = Notebook(title: input.title, notes: [])
            return NotebookRecord(id: id, title: input.title, noteCount: 0)
        }
    }

    func notebook(id: Int) async throws -> NotebookRecord? {
        state.withLock { state in
            state.notebooks[id].map { NotebookRecord(id: id, title: $0.title, noteCount: $0.notes.count) }
        }
    }

    func notes(inNotebook id: Int, after: Int, limit: Int) async throws -> [NoteRecord]? {
        state.withLock { state in
            guard let notebook = state.notebooks[id] else { return nil }
            let start = after == 0 ? 0 : (notebook.notes.firstIndex(of: after).map { $0 + 1 } ?? notebook.notes.count)
            return notebook.notes[start..<min(start + limit, notebook.notes.count)].compactMap { state.notes[$0] }
        }
    }

    func seed(notes: Int, notebookNotes: Int) async throws -> SeedSummary {
        state.withLock { state in
            let first = state.nextID
            for index in 0..<notes {
                let id = state.newID()
                state.notes[id] = NoteRecord(id: id, title: "Note \(index)", body: seedBody, notebook: nil)
                state.order.append(id)
            }
            let last = state.nextID - 1
            guard notebookNotes > 0 else { return SeedSummary(firstNote: first, lastNote: last, notebook: 0, notebookNotes: 0) }
            let notebook = state.newID()
            state.notebooks[notebook] = Notebook(title: "Big", notes: [])
            for index in 0..<notebookNotes {
                let id = state.newID()
                state.notes[id] = NoteRecord(id: id, title: "In notebook \(index)", body: seedBody, notebook: notebook)
                state.order.append(id)
                state.notebooks[notebook]!.notes.append(id)
            }
            return SeedSummary(firstNote: first, lastNote: last, notebook: notebook, notebookNotes: notebookNotes)
        }
    }

    func close() async throws {}
}
