import Foundation
import Hummingbird
import ServiceLifecycle

/// One value of a notebook's live notes: the notes now, and how they differ
/// from the previous value's (positions as a list UI applies them).
public struct NotesUpdate: Sendable, Equatable {
    /// The notebook's notes, in ID order.
    public var notes: [NoteRecord]
    /// Positions, ascending, in the previous update's notes of the notes gone (or moved).
    public var deleted: [Int]
    /// Positions, ascending, in `notes` of the notes new (or moved).
    public var inserted: [Int]
    /// Positions, ascending, in `notes` of notes kept in place whose content changed.
    public var modified: [Int]
    /// Whether this is the first update (the snapshot).
    public var isInitial: Bool

    public init(notes: [NoteRecord], deleted: [Int], inserted: [Int], modified: [Int], isInitial: Bool) {
        self.notes = notes
        self.deleted = deleted
        self.inserted = inserted
        self.modified = modified
        self.isInitial = isInitial
    }
}

/// A repository that can follow a notebook's notes as they change, for
/// `GET /notebooks/:id/live`. Only the Cabinet service is one (on
/// `StorePool.observeResults`); the others have no live route.
public protocol LiveNotesRepository: NotesRepository {
    associatedtype LiveNotes: AsyncSequence<NotesUpdate, any Error> & Sendable
    /// The notebook's notes now, then an update after every save that changes
    /// them; `nil` if there is no such notebook. The sequence ends when the
    /// store closes; a consumer slower than the saves gets the newest notes,
    /// with positions relative to the update it had before.
    func liveNotes(inNotebook id: Int) async throws -> LiveNotes?
}

/// The `data` of an `event: snapshot`: every note of the notebook, in ID order.
public struct LiveSnapshot: Codable, Sendable, Equatable {
    public var notes: [NoteRecord]
}

/// The `data` of an `event: change`: apply `deleted` (positions in the list
/// before, removed from the highest down), then `inserted` (positions in the
/// list after, inserted from the lowest up), then `modified` (replaced).
public struct LiveChange: Codable, Sendable, Equatable {
    /// A note and its position in the list after the change.
    public struct Placed: Codable, Sendable, Equatable {
        public var position: Int
        public var note: NoteRecord
    }

    public var deleted: [Int]
    public var inserted: [Placed]
    public var modified: [Placed]
}

/// The server-sent events of the live route (text/event-stream):
///
/// ```
/// event: snapshot
/// data: {"notes":[{"body":"a","id":7,"notebook":3,"title":"A"}]}
///
/// event: change
/// data: {"deleted":[0],"inserted":[{"note":{…},"position":0}],"modified":[]}
/// ```
enum LiveEvents {
    /// The event of one update; `nil` for an update that changed nothing a client sees.
    static func event(for update: NotesUpdate, encoder: JSONEncoder) throws -> ByteBuffer? {
        if update.isInitial {
            return try frame("snapshot", encoder.encode(LiveSnapshot(notes: update.notes)))
        }
        guard !(update.deleted.isEmpty && update.inserted.isEmpty && update.modified.isEmpty) else { return nil }
        let change = LiveChange(
            deleted: update.deleted,
            inserted: update.inserted.map { LiveChange.Placed(position: $0, note: update.notes[$0]) },
            modified: update.modified.map { LiveChange.Placed(position: $0, note: update.notes[$0]) }
        )
        return try frame("change", encoder.encode(change))
    }

    /// One event: its name and one `data` line (JSON has no raw newline: they are escaped in strings).
    private static func frame(_ name: String, _ json: Data) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeString("event: \(name)\ndata: ")
        buffer.writeBytes(json)
        buffer.writeString("\n\n")
        return buffer
    }
}

/// `GET /notebooks/:id/live` on `notebooks`: the notebook's notes as server-sent events.
///
/// The stream runs until the client goes away (its connection's input
/// closes: the observation is cancelled at once, not at the next write),
/// the server shuts down gracefully (the stream ends cleanly, so that the
/// app's drain does not wait for it and the store can close after it), or
/// the store closes (the updates end).
func addLiveRoute(to notebooks: RouterGroup<BasicRequestContext>, repository: some LiveNotesRepository) {
    notebooks.get(":id/live") { request, context -> Response in
        let id = try context.parameters.require("id", as: Int.self)
        guard let updates = try await repository.liveNotes(inNotebook: id) else { throw HTTPError(.notFound) }
        let headers: HTTPFields = [.contentType: "text/event-stream", .cacheControl: "no-cache"]
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys   // the same text for the same notes, as the docs show it
            do {
                try await request.body.consumeWithCancellationOnInboundClose { _ in
                    for try await update in updates.cancelOnGracefulShutdown() {
                        if let event = try LiveEvents.event(for: update, encoder: encoder) { try await writer.write(event) }
                    }
                }
            } catch is CancellationError {
                // The client went away: nothing left to tell it.
                return
            }
            try await writer.finish(nil)
        })
    }
}
