import AsyncHTTPClient
import Foundation
import NIOCore
import NotesAPI
import Testing

/// What a client of the live route shows: the list it builds by applying each
/// event to the one before, and every rule an event broke on the way.
actor LiveView {
    let notebook: Int
    private(set) var notes: [NoteRecord] = []
    private(set) var problems: [String] = []
    private(set) var events = 0
    /// The highest version of each note shown so far (titles end in `v<version>`),
    /// and the notes deleted: a later event may not go back on either.
    private var versions: [Int: Int] = [:]
    private var gone: Set<Int> = []

    init(notebook: Int) {
        self.notebook = notebook
    }

    func apply(_ event: ServerSentEvent) {
        events += 1
        let data = Data(event.data.utf8)
        switch (events, event.name) {
        case (1, "snapshot"):
            guard let snapshot = decode(LiveSnapshot.self, data) else { return }
            notes = snapshot.notes
        case (_, "change") where events > 1:
            guard let change = decode(LiveChange.self, data) else { return }
            apply(change)
        default:
            problems.append("event \(events) is `\(event.name)`: the first must be a snapshot, every other a change")
        }
        check()
    }

    private func apply(_ change: LiveChange) {
        let inserted = change.inserted.map(\.position), modified = change.modified.map(\.position)
        if change.deleted.isEmpty && inserted.isEmpty && modified.isEmpty { problems.append("event \(events) changes nothing") }
        for (name, positions) in [("deleted", change.deleted), ("inserted", inserted), ("modified", modified)]
        where positions != positions.sorted() || Set(positions).count != positions.count {
            problems.append("event \(events): \(name) positions \(positions) are not ascending and distinct")
        }
        for position in change.deleted.reversed() {
            guard notes.indices.contains(position) else { return problems.append("event \(events) deletes position \(position) of \(notes.count)") }
            gone.insert(notes.remove(at: position).id)
        }
        for placed in change.inserted {
            guard (0...notes.count).contains(placed.position) else { return problems.append("event \(events) inserts at \(placed.position) of \(notes.count)") }
            notes.insert(placed.note, at: placed.position)
            gone.remove(placed.note.id)   // moved: deleted and inserted in one event
        }
        for placed in change.modified {
            guard notes.indices.contains(placed.position), notes[placed.position].id == placed.note.id else {
                return problems.append("event \(events) modifies position \(placed.position) with note \(placed.note.id), which is not there")
            }
            notes[placed.position] = placed.note
        }
    }

    /// What every list the events build must be: the notebook's notes, once each, in ID order,
    /// each as some save left it, never older than an event before showed it, none back from deletion.
    private func check() {
        let ids = notes.map(\.id)
        if ids != ids.sorted() || Set(ids).count != ids.count { problems.append("event \(events): IDs \(ids) are not ascending and distinct") }
        for note in notes {
            if note.notebook != notebook { problems.append("event \(events) shows note \(note.id) of notebook \(String(describing: note.notebook))") }
            if note.body != "body of \(note.title)" { problems.append("event \(events) shows note \(note.id) half saved: \(note.title) / \(note.body)") }
            if gone.contains(note.id) { problems.append("event \(events) shows note \(note.id) after deleting it") }
            guard let version = note.title.split(separator: "v").last.flatMap({ Int($0) }) else { continue }
            if version < versions[note.id, default: 0] { problems.append("event \(events) shows note \(note.id) at v\(version) after v\(versions[note.id]!)") }
            versions[note.id] = version
        }
    }

    private func decode<T: Decodable>(_ type: T.Type, _ data: Data) -> T? {
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch {
            problems.append("event \(events): \(T.self) does not decode: \(error)")
            return nil
        }
    }
}

@Suite(.timeLimit(.minutes(2))) struct LiveRouteTests {
    var client: HTTPClient { .shared }

    /// A note's JSON: its body derives from its title, so a half-saved note would show.
    static func note(_ title: String) -> String { #"{"title":"\#(title)","body":"body of \#(title)"}"# }

    /// The notebook's notes as the store has them now, in its order.
    func storeNotes(_ service: RunningService, _ notebook: Int) async throws -> [NoteRecord] {
        try await send(client, .GET, service.url("/notebooks/\(notebook)/notes?limit=1000"), as: NotePage.self).notes
    }

    func createNotebook(_ service: RunningService, _ title: String) async throws -> Int {
        try await send(client, .POST, service.url("/notebooks"), json: #"{"title":"\#(title)"}"#, as: NotebookRecord.self).id
    }

    /// A service, a new notebook in it, and a client watching the notebook.
    struct Watch {
        let service: RunningService
        let notebook: Int
        let live: LiveConnection
        var events: AsyncThrowingStream<ServerSentEvent, any Error>.Iterator
    }

    func watchingANewNotebook() async throws -> Watch {
        let service = try await RunningService.start()
        let notebook = try await createNotebook(service, "Watched")
        let live = try await LiveConnection.open(service.url("/notebooks/\(notebook)/live"))
        return Watch(service: service, notebook: notebook, live: live, events: live.events.makeAsyncIterator())
    }

    func append(_ service: RunningService, _ notebook: Int, _ title: String) async throws -> Int {
        try await send(client, .POST, service.url("/notebooks/\(notebook)/notes"), json: Self.note(title), as: NoteRecord.self).id
    }

    @Test func theStreamIsASnapshotThenTheChangesOtherClientsMake() async throws {
        let service = try await RunningService.start()
        let notebook = try await createNotebook(service, "Live")
        let other = try await createNotebook(service, "Other")
        for index in 0..<3 { _ = try await append(service, notebook, "before-\(index)-v0") }
        _ = try await append(service, other, "elsewhere-v0")

        let live = try await LiveConnection.open(service.url("/notebooks/\(notebook)/live"))
        #expect(live.status == 200)
        #expect(live.contentType == "text/event-stream")
        let view = LiveView(notebook: notebook)
        let reading = Task {
            for try await event in live.events { await view.apply(event) }
        }
        #expect(await eventually { await view.events == 1 })
        #expect(try await view.notes == storeNotes(service, notebook), "the snapshot is the notebook's notes")

        // Three clients append while a fourth writes elsewhere (none of it may show).
        let mine: [[Int]] = try await withThrowingTaskGroup(of: (Int, [Int]).self) { group in
            for writer in 0..<3 {
                group.addTask {
                    var ids: [Int] = []
                    for index in 0..<12 { ids.append(try await append(service, notebook, "w\(writer)-\(index)-v0")) }
                    return (writer, ids)
                }
            }
            group.addTask {
                for index in 0..<12 {
                    _ = try await send(client, .POST, service.url("/notes"), json: Self.note("loose-\(index)-v0"), as: NoteRecord.self)
                    _ = try await append(service, other, "elsewhere-\(index)-v0")
                }
                return (3, [])
            }
            var ids = [[Int]](repeating: [], count: 4)
            for try await (writer, written) in group { ids[writer] = written }
            return ids
        }
        let afterPosts = try await storeNotes(service, notebook)
        #expect(await eventually { await view.notes == afterPosts }, "the events add up to the notes after the posts")

        // Then one client edits its notes twice, one deletes half of its own, one appends more.
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for version in 1...2 {
                    for (index, id) in mine[0].enumerated() {
                        let (status, _) = try await send(client, .PUT, service.url("/notes/\(id)"), json: Self.note("w0-\(index)-v\(version)"))
                        #expect(status == 200)
                    }
                }
            }
            group.addTask {
                for id in mine[1] where id % 2 == 0 {
                    let (status, _) = try await send(client, .DELETE, service.url("/notes/\(id)"))
                    #expect(status == 204)
                }
            }
            group.addTask {
                for index in 12..<24 { _ = try await append(service, notebook, "w2-\(index)-v0") }
            }
            try await group.waitForAll()
        }
        let final = try await storeNotes(service, notebook)
        #expect(await eventually { await view.notes == final }, "the events add up to the notes after the edits and deletes")
        let deleted = mine[1].filter { $0 % 2 == 0 }.count
        #expect(final.count == 3 + 3 * 12 - deleted + 12)
        #expect(final.filter { $0.title.hasPrefix("w0-") }.allSatisfy { $0.title.hasSuffix("-v2") })
        #expect(await view.problems == [])

        await live.disconnect()
        _ = await reading.result
        try await service.shutdown()
    }

    @Test func theEventsAreTheDocumentedText() async throws {
        var watch = try await watchingANewNotebook()
        let (service, notebook) = (watch.service, watch.notebook)
        #expect(try await watch.events.next() == ServerSentEvent(name: "snapshot", data: #"{"notes":[]}"#))
        let id = try await append(service, notebook, "A")
        let note = #"{"body":"body of A","id":\#(id),"notebook":\#(notebook),"title":"A"}"#
        let added = try await watch.events.next()
        #expect(added == ServerSentEvent(name: "change", data: #"{"deleted":[],"inserted":[{"note":\#(note),"position":0}],"modified":[]}"#))
        let (status, _) = try await send(client, .PUT, service.url("/notes/\(id)"), json: Self.note("B"))
        #expect(status == 200)
        let edited = note.replacingOccurrences(of: "A", with: "B")
        let modified = try await watch.events.next()
        #expect(modified == ServerSentEvent(name: "change", data: #"{"deleted":[],"inserted":[],"modified":[{"note":\#(edited),"position":0}]}"#))
        #expect(try await send(client, .DELETE, service.url("/notes/\(id)")).status == 204)
        let deleted = try await watch.events.next()
        #expect(deleted == ServerSentEvent(name: "change", data: #"{"deleted":[0],"inserted":[],"modified":[]}"#))
        await watch.live.disconnect()
        try await service.shutdown()
    }

    @Test func aClientThatGoesAwayEndsItsObservation() async throws {
        var watch = try await watchingANewNotebook()
        let service = watch.service
        #expect(try await watch.events.next()?.name == "snapshot")
        #expect(service.observations == 1)

        // Nothing is written after it goes: the server learns it from the connection, not from a failed write.
        await watch.live.disconnect()
        #expect(await eventually(within: 5) { service.observations == 0 }, "the observation is cancelled when the client goes")
        _ = try await append(service, watch.notebook, "after")

        let start = ContinuousClock.now
        try await service.shutdown()
        #expect(ContinuousClock.now - start < .seconds(5), "nothing is left for the app's drain or the pool's close to wait for")
    }

    @Test func shuttingDownEndsOpenStreamsCleanlyAndClosesThePool() async throws {
        var watch = try await watchingANewNotebook()
        let service = watch.service
        #expect(try await watch.events.next()?.name == "snapshot")

        let start = ContinuousClock.now
        try await service.shutdown()
        #expect(ContinuousClock.now - start < .seconds(5), "the drain does not wait for the stream")
        // The body ends as a complete response: no error, no further event.
        #expect(try await watch.events.next() == nil)
        #expect(service.observations == 0)
        #expect(await service.poolIsClosed)
        await watch.live.close()
    }

    @Test func aMissingNotebookOrABadIDIsAnErrorNotAStream() async throws {
        let service = try await RunningService.start()
        #expect(try await send(client, .GET, service.url("/notebooks/999999/live")).status == 404)
        #expect(try await send(client, .GET, service.url("/notebooks/0/live")).status == 404)
        #expect(try await send(client, .GET, service.url("/notebooks/-1/live")).status == 404)
        #expect(try await send(client, .GET, service.url("/notebooks/abc/live")).status == 400)
        #expect(service.observations == 0)
        try await service.shutdown()
    }
}
