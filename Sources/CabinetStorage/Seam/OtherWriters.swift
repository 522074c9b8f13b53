/// A backend that several processes write at once (Redis: each save is
/// optimistic, checked against the saves it missed), and that tells each open
/// of the store of the others' saves, so the layer above can bring its objects
/// up to date and report them. A backend with one writer (Tokyo Cabinet's
/// lock, memory) does not conform.
///
/// ```swift
/// if let shared = backend as? OtherWritersBackend, shared.othersHaveSaved {
///     for save in try shared.takeOthersSaves() { print(save.tables.keys) }
/// }
/// ```
public protocol OtherWritersBackend: StorageBackend {
    /// Whether another process announced a save this open has not taken in
    /// with ``takeOthersSaves()``: no I/O, cheap enough to ask before every read.
    var othersHaveSaved: Bool { get }

    /// The saves other processes committed since this open last took them in,
    /// oldest first (those its own saves moved past included). The layer above
    /// brings what it holds up to date with them, then says what it could not
    /// with ``keepConflicting(_:)``.
    func takeOthersSaves() throws -> [OthersSave]

    /// After ``takeOthersSaves()``: of everything other processes changed, only
    /// `stale` (table name → keys, `nil` for the whole table) is not brought up
    /// to date above (it holds unsaved changes to it); a later save of this open
    /// that writes any of it is a conflict, and nothing else they changed is.
    /// It replaces what the last call said.
    func keepConflicting(_ stale: [String: Set<[UInt8]>?])

    /// Calls `handler`, on a thread of the backend's, with every save another
    /// process commits from now on, in order (for `StorePool.changes`). One
    /// handler at a time: a new call replaces it; `nil` stops.
    func observeOthersSaves(_ handler: (@Sendable (OthersSave) -> Void)?)

    /// Replaces the record `key` of table `name` with what `transform` makes of
    /// its value now (`nil`: absent), at once and on its own (outside any
    /// transaction of the table): a compare-and-set, tried again if another
    /// process changed the table between the read and the write, logged and
    /// announced as a save of that one key. Returns the value written. If
    /// `transform` throws, nothing is written and the error is thrown.
    ///
    /// The layer above reserves row IDs with it: the class's metadata row raised
    /// by a range that is this process's alone, so that processes inserting into
    /// one class at once never hand out the same row.
    ///
    /// ```swift
    /// let written = try shared.updateRecord(inTable: "Song", forKey: key) { old in
    ///     raised(old)   // the new bytes, computed from the current ones
    /// }
    /// ```
    func updateRecord(inTable name: String, forKey key: [UInt8],
                      _ transform: ([UInt8]?) throws -> [UInt8]) throws -> [UInt8]
}

/// What another process's save changed (``OtherWritersBackend``): the keys it
/// wrote or removed, per table. Which it was (written, removed), and whether a
/// written key was new, the save's log does not say.
public struct OthersSave: Sendable, Equatable {
    /// Table name → the keys the save wrote or removed, or `nil` for the whole table.
    public var tables: [String: Set<[UInt8]>?]
    /// Whether it replaced the whole store (a restore): every table may have changed.
    public var wholeStore: Bool

    public init(tables: [String: Set<[UInt8]>?], wholeStore: Bool = false) {
        self.tables = tables
        self.wholeStore = wholeStore
    }
}

/// A backend whose store another process writes while this open only reads
/// it (a read-only open of a store directory whose writer is elsewhere): it
/// tells when that writer commits, so that live observations run again without
/// polling. What a commit changed comes as an ``OthersSave`` whose tables are
/// listed whole (the writer announces which tables, not which keys).
///
/// ```swift
/// (backend as? any CommitWatchingBackend)?.watchCommits { save in print(save.tables.keys) }
/// ```
public protocol CommitWatchingBackend: StorageBackend {
    /// Calls `handler`, on a thread of the backend's, after each commit of
    /// another process, in order; one handler at a time (a new call replaces
    /// it); `nil` stops. A commit the backend could not tell apart from others
    /// comes as a change of the whole store.
    func watchCommits(_ handler: (@Sendable (OthersSave) -> Void)?)
}
