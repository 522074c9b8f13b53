/// How far a long store operation has got: what it is working on, and how many
/// of its units (records) are done out of how many.
///
/// The long operations (``StorageBackend/replaceContents(with:formatMarker:progress:)``,
/// and in the Cabinet module `StoreVerifier.verify`, `ObjectStore.backup`,
/// `restore`, `compact` and `upgradeAll`) take an optional handler and call it
/// on the caller's thread, every ``StoreProgress/reportingInterval`` units and
/// at each table's end, with counts that only grow and end at the total:
/// ```swift
/// try store.backup(to: "/var/backups/music") { progress in
///     print("\(progress.what): \(progress.completed) of \(progress.total ?? 0)")
/// }
/// ```
/// `completed` and `total` count the whole operation, not one table, so a bar
/// drawn from them moves forward only. (The index builds that registering a
/// class may start report through the store's `indexBuildProgress` instead:
/// they run inside `register`, which takes no handler.)
public struct StoreProgress: Sendable, Equatable, CustomStringConvertible {
    /// Called with each report; see ``StoreProgress``.
    public typealias Handler = (StoreProgress) -> Void

    /// The table (a class's name, for a class's records) or the step being worked on.
    public var what: String
    /// Units done so far in the whole operation.
    public var completed: Int
    /// Units the whole operation will do, when it is known beforehand (`nil` otherwise).
    public var total: Int?

    public init(what: String, completed: Int, total: Int?) {
        self.what = what
        self.completed = completed
        self.total = total
    }

    public var description: String { "\(what) \(completed)/\(total.map(String.init) ?? "?")" }

    /// Records between two reports: few enough calls that a handler costs nothing
    /// next to the records' reads and writes, often enough for a bar that moves.
    public static let reportingInterval = 1_000
}

/// Counts the units of one operation and calls its handler every
/// ``StoreProgress/reportingInterval`` of them: the one place the operations
/// share, so that each pays an increment and a comparison per record.
package struct ProgressCounter {
    private let handler: StoreProgress.Handler?
    package private(set) var completed = 0
    package var total: Int?
    package var what = ""
    private var nextReport = StoreProgress.reportingInterval

    package init(_ handler: StoreProgress.Handler?, total: Int?) {
        self.handler = handler
        self.total = total
    }

    /// A counter whose total is the records of `tables` of `backend`, counted
    /// only when a handler listens (it opens every table).
    package init(_ handler: StoreProgress.Handler?, recordsOf tables: [String], in backend: any StorageBackend) throws {
        self.init(handler, total: nil)
        if handler != nil { total = try tables.reduce(0) { $0 + (try backend.openTable(named: $1).recordCount) } }
    }

    /// Whether anyone listens: an operation can skip counting its total otherwise.
    package var isReporting: Bool { handler != nil }

    /// Starts the next table or step; reports it, so a bar names it at once.
    package mutating func begin(_ what: String) {
        self.what = what
        report()
    }

    /// One more unit done; reports every ``StoreProgress/reportingInterval``.
    @inline(__always)
    package mutating func advance() {
        completed &+= 1
        if completed >= nextReport { report() }
    }

    /// The operation has done `completed` units (a table compacted part way, or whole); reports it.
    package mutating func advance(to completed: Int) {
        self.completed = max(self.completed, completed)
        report()
    }

    /// Reports where the operation is now (a table's end, the operation's end).
    package mutating func report() {
        nextReport = completed &+ StoreProgress.reportingInterval
        guard let handler else { return }
        // A total counted beforehand can fall short of what a live store holds by the time it is read.
        if let known = total, completed > known { total = completed }
        handler(StoreProgress(what: what, completed: completed, total: total))
    }

    /// Reports the end: the count reached is the total.
    package mutating func finish() {
        total = completed
        report()
    }
}
