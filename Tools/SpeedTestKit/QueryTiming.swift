import Foundation

/// The timed part of a query workload: its queries alone, one after another.
///
/// Opening the store is left out (a child opens it once, an app once per
/// launch), so the time per query is the queries' wall time over their count.
public struct QueryTiming: Codable, Sendable {
    public var count: Int
    public var seconds: Double

    public init(count: Int, seconds: Double) {
        self.count = count
        self.seconds = seconds
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
