import Hummingbird
import Logging

/// The JSON API, the same for every repository:
///
/// | route | does |
/// | --- | --- |
/// | `POST /notes` | creates a note (`{"title","body"}`), 201 with it |
/// | `GET /notes/:id` | the note, or 404 |
/// | `PUT /notes/:id` | replaces its title and body, or 404 |
/// | `DELETE /notes/:id` | 204, or 404 |
/// | `GET /notes?limit=&after=` | a page in ID order (`limit` 1…1000, default 20) |
/// | `POST /notebooks` | creates a notebook (`{"title"}`) |
/// | `GET /notebooks/:id` | the notebook and its note count |
/// | `POST /notebooks/:id/notes` | creates a note and appends it to the notebook |
/// | `GET /notebooks/:id/notes?limit=&after=` | a page of the notebook's notes, in its order |
/// | `GET /notebooks/:id/live` | the notebook's notes as server-sent events, a snapshot then changes (a `LiveNotesRepository` only: see `LiveEvents`) |
/// | `GET /health` | 200 `ok` without touching the store: a liveness probe, and what a request costs the HTTP stack alone |
public func makeRouter(repository: some NotesRepository) -> Router<BasicRequestContext> {
    let router = Router(context: BasicRequestContext.self)
    router.add(middleware: LogRequestsMiddleware(.debug))
    router.get("health") { _, _ in "ok" }

    let notes = router.group("notes")
    notes.post { request, context -> EditedResponse<NoteRecord> in
        let input = try await request.decode(as: NoteInput.self, context: context)
        guard let note = try await repository.createNote(input, notebook: nil) else { throw HTTPError(.internalServerError) }
        return EditedResponse(status: .created, response: note)
    }
    notes.get(":id") { _, context -> NoteRecord in
        try await found(repository.note(id: context.parameters.require("id", as: Int.self)))
    }
    notes.put(":id") { request, context -> NoteRecord in
        let input = try await request.decode(as: NoteInput.self, context: context)
        return try await found(repository.updateNote(id: context.parameters.require("id", as: Int.self), input))
    }
    notes.delete(":id") { _, context -> HTTPResponse.Status in
        try await repository.deleteNote(id: context.parameters.require("id", as: Int.self)) ? .noContent : .notFound
    }
    notes.get { request, _ -> NotePage in
        let (after, limit) = try page(request)
        return try await NotePage(notes: repository.notes(after: after, limit: limit), limit: limit)
    }

    let notebooks = router.group("notebooks")
    notebooks.post { request, context -> EditedResponse<NotebookRecord> in
        let input = try await request.decode(as: NotebookInput.self, context: context)
        return try await EditedResponse(status: .created, response: repository.createNotebook(input))
    }
    notebooks.get(":id") { _, context -> NotebookRecord in
        try await found(repository.notebook(id: context.parameters.require("id", as: Int.self)))
    }
    notebooks.post(":id/notes") { request, context -> EditedResponse<NoteRecord> in
        let input = try await request.decode(as: NoteInput.self, context: context)
        let notebook = try context.parameters.require("id", as: Int.self)
        return try await EditedResponse(status: .created, response: found(repository.createNote(input, notebook: notebook)))
    }
    notebooks.get(":id/notes") { request, context -> NotePage in
        let (after, limit) = try page(request)
        let id = try context.parameters.require("id", as: Int.self)
        return try await NotePage(notes: found(repository.notes(inNotebook: id, after: after, limit: limit)), limit: limit)
    }
    if let live = repository as? any LiveNotesRepository {
        addLiveRoute(to: notebooks, repository: live)
    }
    return router
}

private func found<T>(_ value: T?) throws -> T {
    guard let value else { throw HTTPError(.notFound) }
    return value
}

/// `after` (default 0) and `limit` (default 20, at most 1,000) from the query.
private func page(_ request: Request) throws -> (after: Int, limit: Int) {
    let query = request.uri.queryParameters
    let after = query.get("after", as: Int.self) ?? 0
    let limit = query.get("limit", as: Int.self) ?? 20
    guard after >= 0, (1...1000).contains(limit) else {
        throw HTTPError(.badRequest, message: "after must be ≥ 0 and limit 1…1000")
    }
    return (after, limit)
}
