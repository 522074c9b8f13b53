import Foundation

/// The results as a table for people: per workload, each engine's medians and
/// its time relative to Cabinet. A query workload adds the time per query (the
/// ratio is of that), `indexed-insert` the bytes of the indexes.
public func tableReport(_ results: [Result]) -> String {
    var lines: [String] = []
    let workloads = Workload.allCases.filter { w in results.contains { $0.median.workload == w } }
    for workload in workloads {
        let samples = results.filter { $0.median.workload == workload }
        let rows = samples.map(\.median)
        let cabinet = rows.first { $0.engine == CabinetEngine.name }
        let timed = rows.contains { $0.outcome.queries != nil }
        let indexed = rows.contains { $0.indexBytes != nil }
        let commits = rows.contains { $0.outcome.queries?.commitSeconds != nil }
        let time = comparedTime
        lines.append("")
        lines.append("\(workload.rawValue) (\(header(workload, rows.first)), median of \(samples.first?.samples ?? 0))")
        lines.append(pad("engine", 18) + pad("wall s", 10, right: true) + pad("cpu s", 10, right: true)
                     + pad("peak RSS", 12, right: true) + pad("disk", 12, right: true)
                     + (indexed ? pad("indexes", 12, right: true) : "") + (timed ? pad("ms/query", 12, right: true) : "")
                     + (commits ? pad("commit ms", 12, right: true) + pad("plain ms", 12, right: true) + pad("after ms", 12, right: true) : "")
                     + pad("time ÷ cabinet", 16, right: true))
        for row in rows {
            let ratio = cabinet.map { time($0) > 0 ? String(format: "%.2f", time(row) / time($0)) : "-" } ?? "-"
            lines.append(pad(row.engine, 18) + pad(String(format: "%.3f", row.wallSeconds), 10, right: true)
                         + pad(String(format: "%.3f", row.cpuSeconds), 10, right: true)
                         + pad(megabytes(row.rssBytes), 12, right: true) + pad(megabytes(row.diskBytes), 12, right: true)
                         + (indexed ? pad(row.indexBytes.map(megabytes) ?? "-", 12, right: true) : "")
                         + (timed ? pad(row.outcome.queries.map { String(format: "%.4f", $0.millisecondsPerQuery) } ?? "-", 12, right: true) : "")
                         + (commits ? pad(commitMilliseconds(row.outcome.queries?.commitSeconds), 12, right: true)
                            + pad(commitMilliseconds(row.outcome.queries?.plainCommitSeconds), 12, right: true)
                            + pad(commitMilliseconds(row.outcome.queries?.afterReturnSeconds), 12, right: true) : "")
                         + pad(ratio, 16, right: true))
        }
    }
    return lines.joined(separator: "\n")
}

/// What the ratio to Cabinet compares, in the table and the chart: the time per
/// query (milliseconds) for a query workload, the whole run's wall time (seconds) otherwise.
func comparedTime(_ row: Sample) -> Double {
    row.outcome.queries?.millisecondsPerQuery ?? row.wallSeconds
}

/// What a workload's size counts: objects, queries and what each found, or observations.
func header(_ workload: Workload, _ row: Sample?) -> String {
    switch workload {
    case .observeObjects: return "\(grouped(row?.size ?? 0)) observations of one object, from the commit's return"
    case .observeQueries: return "\(grouped(row?.size ?? 0)) observed range queries, from the commit's return"
    case .observeIdle: return "\(grouped(row?.size ?? 0)) observations, a commit of \(grouped(LiveSpeedData.albums)) rows of another class"
    default: break
    }
    guard let row, let timing = row.outcome.queries, timing.count > 0 else { return "\(grouped(row?.size ?? 0)) objects" }
    return "\(grouped(timing.count)) queries, \(String(format: "%.1f", Double(row.outcome.objects) / Double(timing.count))) objects each"
}

/// The results for machines: one JSON array, one object per engine × workload.
public func jsonReport(_ results: [Result]) throws -> String {
    struct Row: Encodable {
        let workload: String, engine: String, size: Int
        let wall_s: Double, cpu_s: Double, rss_bytes: Int, disk_bytes: Int
        // Only in the rows of query workloads and of indexed-insert (nil is left out).
        let queries: Int?, ms_per_query: Double?, index_bytes: Int?
        // Only in the rows of observation workloads: the observed commit's time, the same commit's with no
        // observations, and the time from the observed commit's return until the last delivery.
        let commit_ms: Double?, plain_commit_ms: Double?, after_return_ms: Double?
    }
    let rows = results.map(\.median).map {
        Row(workload: $0.workload.rawValue, engine: $0.engine, size: $0.size, wall_s: $0.wallSeconds, cpu_s: $0.cpuSeconds,
            rss_bytes: $0.rssBytes, disk_bytes: $0.diskBytes, queries: $0.outcome.queries?.count,
            ms_per_query: $0.outcome.queries?.millisecondsPerQuery, index_bytes: $0.indexBytes,
            commit_ms: $0.outcome.queries?.commitSeconds.map { $0 * 1_000 },
            plain_commit_ms: $0.outcome.queries?.plainCommitSeconds.map { $0 * 1_000 },
            after_return_ms: $0.outcome.queries?.afterReturnSeconds.map { $0 * 1_000 })
    }
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    return String(decoding: try encoder.encode(rows), as: UTF8.self)
}

func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
    let space = String(repeating: " ", count: max(0, width - text.count))
    return right ? space + text : text + space
}

func commitMilliseconds(_ seconds: Double?) -> String {
    seconds.map { String(format: "%.2f", $0 * 1_000) } ?? "-"
}

func megabytes(_ bytes: Int) -> String {
    String(format: "%.1f MB", Double(bytes) / 1_000_000)
}

func grouped(_ number: Int) -> String {
    let digits = Array(String(number))
    var result = ""
    for (index, digit) in digits.enumerated() {
        if index > 0 && (digits.count - index) % 3 == 0 { result.append(",") }
        result.append(digit)
    }
    return result
}
