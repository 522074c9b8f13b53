import Foundation

/// The run as a picture (SVG, written by hand: no dependency): per workload, one
/// horizontal bar per engine whose length is the engine's median over Cabinet's
/// on a log axis centred on 1×, so "3 × slower" and "3 × faster" are the same
/// length either side. The ratios are the table's (``tableReport(_:)``): the time
/// per query for a query workload, the whole run's wall time otherwise. Each bar
/// carries its absolute median and ratio; the subtitle names the machine, the
/// sizes and the repeat count, since timings mean nothing without them.
///
/// A pure function of its fields, so a test can check the picture.
public struct SpeedChart: Sendable {
    /// The run's medians, as ``runPlan(_:progress:)`` returns them.
    public var results: [Result]
    /// Where the run measured, for the subtitle.
    public var machine: Machine
    /// The run's sizes, for the subtitle (each workload's header gives its own count).
    public var sizes: Sizes
    /// How many runs each median is of.
    public var repetitions: Int
    /// Whether the run made the Tokyo Cabinet engines fsync every commit (`--sync`).
    public var sync: Bool

    /// A chart of `results`, measured on `machine` at `sizes`, `repetitions` runs each.
    public init(results: [Result], machine: Machine, sizes: Sizes, repetitions: Int, sync: Bool = false) {
        self.results = results
        self.machine = machine
        self.sizes = sizes
        self.repetitions = repetitions
        self.sync = sync
    }

    /// The chart as a standalone SVG document.
    public func svg() -> String {
        let groups = chartGroups(results)
        let style = ChartStyle()
        // Room beside the axis for the labels of the bars that reach its ends:
        // a label sits past its bar's end, so the widest one on each side decides.
        let bars = groups.flatMap(\.bars)
        let leftRoom = max(28, bars.filter { ($0.ratio ?? 1) < 1 }.map { style.labelWidth($0.label) + 8 }.max() ?? 0)
        let rightRoom = max(28, bars.filter { ($0.ratio ?? 0) >= 1 }.map { style.labelWidth($0.label) + 8 }.max() ?? 0)
        let axis = LogAxis(ratios: bars.compactMap(\.ratio), left: style.nameRight + leftRoom,
                           right: style.width - style.margin - rightRoom)

        let engines = bars.map(\.engine).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        // With no ratio at all (Cabinet ran none of the workloads) there is no axis to draw.
        let hasAxis = bars.contains { $0.ratio != nil }
        let (heading, tickRow) = self.heading(engines: engines, one: hasAxis ? axis.x(1) : nil, style: style)
        let plot = Plot(groups: groups, axis: axis, top: tickRow + 8, style: style)

        // Gridlines beside the bars (not through the workloads' headers), tick labels above and below.
        var grid: [String] = []
        for tick in hasAxis ? axis.ticks : [] {
            let x = axis.x(tick), isOne = tick == 1
            for span in plot.rowSpans {
                grid.append("<line class=\"grid\" data-ratio=\"\(tickLabel(tick))\" x1=\"\(f(x))\" y1=\"\(f(span.top))\" x2=\"\(f(x))\" y2=\"\(f(span.bottom))\" "
                            + "stroke=\"\(isOne ? "#444" : "#c9ccd1")\" stroke-width=\"\(isOne ? "1.5" : "1")\"/>")
            }
            for labelY in [tickRow, plot.bottom + 16] {
                grid.append(SVGWriter.text(tickLabel(tick), x: x, y: labelY, size: 12, anchor: "middle", fill: "#444"))
            }
        }
        let height = plot.bottom + 34
        var svg = ["<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(f(style.width))\" height=\"\(f(height))\" "
                   + "viewBox=\"0 0 \(f(style.width)) \(f(height))\" role=\"img\" font-family=\"DejaVu Sans, Verdana, Arial, sans-serif\">",
                   "<title>Cabinet speed test, \(xmlEscaped(machine.date))</title>",
                   SVGWriter.rect(x: 0, y: 0, width: style.width, height: height, fill: "#ffffff")]
        // The bands go first, then the gridlines over them, then bars and labels.
        svg += heading + plot.bands + grid + plot.body
        svg.append("</svg>")
        return svg.joined(separator: "\n") + "\n"
    }

    /// Title, machine, sizes, how to read it, the legend (wrapped) and the
    /// faster/slower captions either side of 1× (if there is an axis); and where the tick labels go.
    private func heading(engines: [String], one: Double?, style: ChartStyle) -> (elements: [String], tickRow: Double) {
        var y = 34.0
        var elements = [SVGWriter.text("Cabinet speed test: each engine's median time relative to Cabinet's",
                                       x: style.margin, y: y, size: 20, weight: "bold")]
        for line in [machine.summary, sizeLine, "Bar length: engine ÷ Cabinet on a log scale; left of 1× is faster than Cabinet, "
                     + "right is slower. Query workloads compare the time per query."] {
            y += 19
            elements.append(SVGWriter.text(line, x: style.margin, y: y, size: 12, fill: "#333"))
        }
        y += 14
        var legendX = style.margin
        for engine in engines {
            let width = 18 + style.textWidth(engine, size: 12) + 22
            if legendX + width > style.width - style.margin {
                legendX = style.margin
                y += 20
            }
            elements.append(SVGWriter.rect(x: legendX, y: y, width: 12, height: 12, fill: chartColor(engine)))
            elements.append(SVGWriter.text(engine, x: legendX + 18, y: y + 10.5, size: 12))
            legendX += width
        }
        y += 38
        if let one {
            elements.append(SVGWriter.text("← faster than Cabinet", x: one - 8, y: y, size: 12, anchor: "end", weight: "bold", fill: "#333"))
            elements.append(SVGWriter.text("slower than Cabinet →", x: one + 8, y: y, size: 12, weight: "bold", fill: "#333"))
        }
        return (elements, y + 18)
    }

    /// The sizes and repeat count, in one subtitle line.
    var sizeLine: String {
        var line = "\(grouped(sizes.songs)) songs (simple, indexed); \(grouped(sizes.complexSongs)) songs and "
            + "\(grouped(sizes.playlists)) playlists of \(sizes.playlistSize) (complex); a buffer of \(grouped(sizes.bufferReferences)); "
            + "\(grouped(sizes.queries)) queries; \(grouped(sizes.liveSongs)) songs and \(grouped(sizes.observations)) observations (observe) · median of \(repetitions) run\(repetitions == 1 ? "" : "s")"
        if sync { line += " · Tokyo Cabinet engines fsync every commit" }
        return line
    }
}

/// The workloads laid out from `top` down: a band every other workload, its
/// header, then a row per engine (its name, its bar from 1×, its label).
private struct Plot {
    var bands: [String] = [], body: [String] = []
    /// Where the gridlines run: the rows of each workload that has ratios.
    var rowSpans: [(top: Double, bottom: Double)] = []
    var bottom: Double

    init(groups: [ChartGroup], axis: LogAxis, top: Double, style: ChartStyle) {
        let one = axis.x(1)
        var y = top
        for (index, group) in groups.enumerated() {
            let height = 26 + Double(group.bars.count) * style.rowHeight + 6
            let workload = " data-workload=\"\(xmlEscaped(group.workload.rawValue))\""
            if index % 2 == 0 {
                bands.append(SVGWriter.rect(x: style.margin, y: y, width: style.width - 2 * style.margin, height: height, fill: "#f3f4f6"))
            }
            body.append(SVGWriter.text(group.title, x: style.margin + 6, y: y + 18, size: 14, weight: "bold", extra: workload))
            var row = y + 26
            // A workload without ratios gets no axis: its times stand alone.
            if group.bars.contains(where: { $0.ratio != nil }) { rowSpans.append((top: row - 2, bottom: y + height)) }
            for bar in group.bars {
                let middle = row + style.rowHeight / 2
                body.append(SVGWriter.text(bar.engine, x: style.nameRight - 8, y: middle + 4.5, size: 13, anchor: "end"))
                let data = workload + " data-engine=\"\(xmlEscaped(bar.engine))\""
                if let ratio = bar.ratio {
                    let end = axis.x(ratio)
                    // Cabinet's own bar has no length: a short mark across 1× shows where it is.
                    let width = max(abs(end - one), 5)
                    let x = abs(end - one) < 5 ? one - 2.5 : min(one, end)
                    body.append(SVGWriter.rect(x: x, y: middle - style.barHeight / 2, width: width, height: style.barHeight,
                                               fill: chartColor(bar.engine), extra: data + " data-ratio=\"\(ratio)\""))
                    let faster = ratio < 1
                    body.append(SVGWriter.text(bar.label, x: faster ? min(end, one - 2.5) - 5 : max(end, one + 2.5) + 5, y: middle + 4.5,
                                               size: style.labelSize, anchor: faster ? "end" : "start", extra: data))
                } else {
                    body.append(SVGWriter.text(bar.label, x: style.nameRight, y: middle + 4.5, size: style.labelSize, fill: "#555", extra: data))
                }
                row += style.rowHeight
            }
            y += height
        }
        bottom = y
    }
}

/// One workload's rows, worked out from the results as the table does.
struct ChartGroup {
    var workload: Workload
    var title: String
    var bars: [ChartBar]
}

/// One engine's median in a workload and its ratio to Cabinet's (nil when
/// Cabinet did not run the workload, or took no measurable time).
struct ChartBar {
    var engine: String
    var label: String
    var ratio: Double?
}

/// The results, per workload in the order of ``Workload/allCases``, engines in the order they ran.
func chartGroups(_ results: [Result]) -> [ChartGroup] {
    Workload.allCases.compactMap { workload in
        let samples = results.filter { $0.median.workload == workload }
        guard let first = samples.first else { return nil }
        let rows = samples.map(\.median)
        let base = rows.first { $0.engine == CabinetEngine.name }.map(comparedTime)
        var title = "\(workload.rawValue) — \(header(workload, first.median)), median of \(first.samples)"
        if workload == .observeIdle {
            title += ", the commit's time"
        } else if workload.isObservation {
            title += ", time per observation"
        } else if workload.isQuery {
            title += ", time per query"
        }
        if base == nil {
            title += " — Cabinet did not run it: no ratio"
        } else if base == 0 {
            title += " — Cabinet took no measurable time: no ratio"
        }
        let bars = rows.map { row -> ChartBar in
            let time = comparedTime(row)
            let unit = workload == .observeIdle ? "" : workload.isObservation ? "/observation" : "/query"
            let shown = workload.isQuery ? milliseconds(time) + unit : duration(time)
            guard let base, base > 0, time > 0, time.isFinite else { return ChartBar(engine: row.engine, label: shown, ratio: nil) }
            return ChartBar(engine: row.engine, label: "\(shown) · \(ratioLabel(time / base))", ratio: time / base)
        }
        return ChartGroup(workload: workload, title: title, bars: bars)
    }
}

/// The log10 axis: where a ratio falls between `left` and `right`. It spans at
/// least 0.1× to 10×, widened to the next gridline (1 or 3 times a power of ten)
/// beyond the smallest and largest ratio.
struct LogAxis {
    /// log10 of the ratios at the axis's ends.
    var low: Double, high: Double
    var left: Double, right: Double

    /// Ratios beyond these are drawn at them (a bar a million times longer would squash the rest).
    static let clamp = (low: 1e-4, high: 1e5)

    init(ratios: [Double], left: Double, right: Double) {
        let logs = ratios.filter { $0 > 0 && $0.isFinite }.map { log10(min(max($0, Self.clamp.low), Self.clamp.high)) }
        low = min(-1, Self.tickAtOrBelow(logs.min() ?? 0))
        high = max(1, Self.tickAtOrAbove(logs.max() ?? 0))
        self.left = left
        self.right = right
    }

    func x(_ ratio: Double) -> Double {
        let value = log10(min(max(ratio, Self.clamp.low), Self.clamp.high))
        return left + (value - low) / (high - low) * (right - left)
    }

    /// The gridlines: 1 and 3 times each power of ten within the axis.
    var ticks: [Double] {
        var ticks: [Double] = []
        for power in Int(low.rounded(.down))...Int(high.rounded(.up)) {
            for multiple in [1.0, 3.0] {
                // Dividing keeps 0.3 exactly 0.3 (3 × 0.1 is not).
                let tick = power < 0 ? multiple / pow(10, Double(-power)) : multiple * pow(10, Double(power))
                if log10(tick) >= low - 1e-9 && log10(tick) <= high + 1e-9 { ticks.append(tick) }
            }
        }
        return ticks
    }

    private static let three = log10(3.0)

    static func tickAtOrBelow(_ value: Double) -> Double {
        let power = (value + 1e-9).rounded(.down)
        return value + 1e-9 >= power + three ? power + three : power
    }

    static func tickAtOrAbove(_ value: Double) -> Double {
        let power = (value + 1e-9).rounded(.down)
        if value <= power + 1e-9 { return power }
        return value <= power + three + 1e-9 ? power + three : power + 1
    }
}

/// Sizes in pixels; text widths are estimated (no font metrics here), generously.
struct ChartStyle {
    let width = 1100.0
    let margin = 20.0
    /// Where the engine names end, right-aligned.
    let nameRight = 160.0
    let rowHeight = 20.0
    let barHeight = 14.0
    let labelSize = 12.0

    func textWidth(_ text: String, size: Double) -> Double { Double(text.count) * size * 0.62 }
    func labelWidth(_ text: String) -> Double { textWidth(text, size: labelSize) }
}

/// Each engine's color: the Okabe–Ito palette, which stays distinct with the
/// common color blindnesses; an engine not listed takes black.
func chartColor(_ engine: String) -> String {
    let colors = ["cabinet": "#0072B2", "grdb": "#E69F00", "grdb-statement": "#D55E00", "tc-raw": "#009E73",
                  "cabinet-redis": "#56B4E9", "redis-raw": "#CC79A7", "redis-per-object": "#8C8C8C"]
    return colors[engine] ?? "#000000"
}

/// A gridline's label: "0.03×", "1×", "30×".
func tickLabel(_ ratio: Double) -> String {
    if ratio >= 1 { return "\(Int(ratio.rounded()))×" }
    let decimals = Int((-log10(ratio) - 1e-9).rounded(.up))
    return String(format: "%.\(decimals)f×", ratio)
}

/// A ratio as the table gives it, fewer decimals as it grows: "0.83×", "11.2×", "142×".
func ratioLabel(_ ratio: Double) -> String {
    ratio >= 100 ? String(format: "%.0f×", ratio) : ratio >= 10 ? String(format: "%.1f×", ratio) : String(format: "%.2f×", ratio)
}

/// Seconds for people, three significant figures: "12.1 s", "1.67 s", "291 ms", "4.20 ms".
func duration(_ seconds: Double) -> String {
    seconds >= 1 ? significant(seconds) + " s" : milliseconds(seconds * 1_000)
}

/// Milliseconds, three significant figures (at least one decimal below 1 ms): "291 ms", "0.052 ms".
func milliseconds(_ value: Double) -> String {
    value < 1 ? String(format: "%.3f ms", value) : significant(value) + " ms"
}

private func significant(_ value: Double) -> String {
    value >= 100 ? String(format: "%.0f", value) : value >= 10 ? String(format: "%.1f", value) : String(format: "%.2f", value)
}

/// `text` with XML's five special characters escaped, for content and attributes alike.
func xmlEscaped(_ text: String) -> String {
    var out = ""
    for character in text {
        switch character {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "'": out += "&apos;"
        default: out.append(character)
        }
    }
    return out
}

/// A coordinate with one decimal, enough for a pixel and short in the file.
private func f(_ value: Double) -> String { String(format: "%.1f", value) }

/// Makes SVG elements; all text goes through ``xmlEscaped(_:)`` here.
private enum SVGWriter {
    static func text(_ text: String, x: Double, y: Double, size: Double, anchor: String = "start", weight: String = "normal",
              fill: String = "#111", extra: String = "") -> String {
        "<text x=\"\(f(x))\" y=\"\(f(y))\" font-size=\"\(f(size))\" text-anchor=\"\(anchor)\""
            + (weight == "normal" ? "" : " font-weight=\"\(weight)\"") + " fill=\"\(fill)\"\(extra)>\(xmlEscaped(text))</text>"
    }

    static func rect(x: Double, y: Double, width: Double, height: Double, fill: String, extra: String = "") -> String {
        "<rect x=\"\(f(x))\" y=\"\(f(y))\" width=\"\(f(width))\" height=\"\(f(height))\" fill=\"\(fill)\"\(extra)/>"
    }
}
