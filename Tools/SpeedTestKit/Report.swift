import Foundation

/// The results as a table for people: per workload, each engine's medians and its time relative to Cabinet.
public func tableReport(_ results: [Result]) -> String {
    var lines: [String] = []
    let workloads = Workload.allCases.filter { w in results.contains { $0.median.workload == w } }
    for workload in workloads {
        let samples = results.filter { $0.median.workload == workload }
        let rows = samples.map(\.median)
        let cabinet = rows.first { $0.engine == CabinetEngine.name }
        lines.append("")
        lines.append("\(workload.rawValue) (\(grouped(rows.first?.size ?? 0)) objects, median of \(samples.first?.samples ?? 0))")
        lines.append(pad("engine", 16) + pad("wall s", 10, right: true) + pad("cpu s", 10, right: true)
                     + pad("peak RSS", 12, right: true) + pad("disk", 12, right: true) + pad("time ÷ cabinet", 16, right: true))
        for row in rows {
            let ratio = cabinet.map { $0.wallSeconds > 0 ? String(format: "%.2f", row.wallSeconds / $0.wallSeconds) : "-" } ?? "-"
            lines.append(pad(row.engine, 16) + pad(String(format: "%.3f", row.wallSeconds), 10, right: true)
                         + pad(String(format: "%.3f", row.cpuSeconds), 10, right: true)
                         + pad(megabytes(row.rssBytes), 12, right: true) + pad(megabytes(row.diskBytes), 12, right: true)
                         + pad(ratio, 16, right: true))
        }
    }
    return lines.joined(separator: "\n")
}

/// The results for machines: one JSON array, one object per engine × workload.
public func jsonReport(_ results: [Result]) throws -> String {
    struct Row: Encodable {
        let workload: String, engine: String, size: Int
        let wall_s: Double, cpu_s: Double, rss_bytes: Int, disk_bytes: Int
    }
    let rows = results.map(\.median).map {
        Row(workload: $0.workload.rawValue, engine: $0.engine, size: $0.size, wall_s: $0.wallSeconds, cpu_s: $0.cpuSeconds,
            rss_bytes: $0.rssBytes, disk_bytes: $0.diskBytes)
    }
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    return String(decoding: try encoder.encode(rows), as: UTF8.self)
}

func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
    let space = String(repeating: " ", count: max(0, width - text.count))
    return right ? space + text : text + space
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
