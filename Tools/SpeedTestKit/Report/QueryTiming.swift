import Foundation

/// The timed part of a query workload: its queries alone, one after another.
///
/// Opening the store is left out (a child opens it once, an app once per
/// launch), so the time per query is the queries' wall time over their count.
///
/// An observation workload's timed part is its deliveries (``LiveSpeedData``):
/// `seconds` is what observing added to the commit's time (`commitSeconds`
/// less `plainCommitSeconds`, the same commit's with no observation
/// registered) plus the wait from its return until every observation
/// delivered (`afterReturnSeconds`).
public struct QueryTiming: Codable, Sendable {
    public var count: Int
    public var seconds: Double
    /// The observed commit's time, from its call to its return.
    public var commitSeconds: Double?
    /// The same commit's time with no observation registered.
    public var plainCommitSeconds: Double?
    /// From the observed commit's return until the last delivery (0 if every value came before it returned).
    public var afterReturnSeconds: Double?

    public init(count: Int, seconds: Double, commitSeconds: Double? = nil, plainCommitSeconds: Double? = nil,
                afterReturnSeconds: Double? = nil) {
        self.count = count
        self.seconds = seconds
        self.commitSeconds = commitSeconds
        self.plainCommitSeconds = plainCommitSeconds
        self.afterReturnSeconds = afterReturnSeconds
    }

    /// The mean wall time of one query, in milliseconds.
    public var millisecondsPerQuery: Double { count > 0 ? seconds * 1_000 / Double(count) : 0 }
}

extension Outcome {
    /// Runs query `0..<count` through `body`, which adds what each finds, and
    /// records the wall time of the whole loop in ``queries``.
    public mutating func timeQueries(_ count: Int, _ body: (Int, inout Outcome) throws -> Void) rethrows {
        let start = DispatchTime.now().uptimeNanoseconds
        for query in 0..<count {
            try body(query, &self)
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        queries = QueryTiming(count: count, seconds: seconds)
    }
}
