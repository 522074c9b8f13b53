import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
@testable import SpeedTestKit
import Testing

/// The chart of a run (``SpeedChart``): well-formed, every workload and engine in
/// it, bars at the right log positions, text escaped, the machine named.
@Suite struct SpeedChartTests {
    static let machine = Machine(cpu: "Test CPU 9000", cores: 2, memoryBytes: 24 * 1_073_741_824,
                                 system: "Debian GNU/Linux 12 (bookworm), Linux 6.18.0", swift: "Swift 6.3",
                                 date: "2026-11-25", loadAverage: 0.25, loadAverageAtEnd: 1.5)

    static func result(_ workload: Workload, _ engine: String, seconds: Double, queries: QueryTiming? = nil) -> Result {
        var outcome = Outcome(objects: 10, checksum: 1)
        outcome.queries = queries
        return Result(median: Sample(workload: workload, engine: engine, size: 1_000, wallSeconds: seconds, cpuSeconds: seconds,
                                     rssBytes: 1, diskBytes: 1, outcome: outcome), samples: 3)
    }

    static func chart(_ results: [Result], machine: Machine = machine) -> SpeedChart {
        SpeedChart(results: results, machine: machine, sizes: Sizes(), repetitions: 3)
    }

    /// Every element of the parsed document, depth first.
    static func elements(_ svg: String) throws -> [XMLElement] {
        let document = try XMLDocument(xmlString: svg, options: [])
        var found: [XMLElement] = []
        func walk(_ node: XMLNode) {
            if let element = node as? XMLElement { found.append(element) }
            for child in node.children ?? [] { walk(child) }
        }
        if let root = document.rootElement() { walk(root) }
        return found
    }

    static func number(_ element: XMLElement, _ attribute: String) -> Double {
        Double(element.value(of: attribute) ?? "") ?? .nan
    }

    @Test func barsEndAtTheirRatiosOnALogAxis() throws {
        let svg = Self.chart([
            Self.result(.simpleInsert, "cabinet", seconds: 2),
            Self.result(.simpleInsert, "grdb", seconds: 20),          // 10 ×
            Self.result(.simpleInsert, "tc-raw", seconds: 0.2),       // 0.1 ×
            Self.result(.simpleInsert, "grdb-statement", seconds: 6), // 3 ×
        ]).svg()
        let elements = try Self.elements(svg)
        func gridline(_ label: String) throws -> Double {
            let line = try #require(elements.first { $0.localName == "line" && $0.value(of: "data-ratio") == label })
            return Self.number(line, "x1")
        }
        func bar(_ engine: String) throws -> (left: Double, right: Double) {
            let rect = try #require(elements.first { $0.localName == "rect" && $0.value(of: "data-engine") == engine })
            return (Self.number(rect, "x"), Self.number(rect, "x") + Self.number(rect, "width"))
        }
        let one = try gridline("1×"), ten = try gridline("10×"), tenth = try gridline("0.1×"), three = try gridline("3×")
        // Log scale: 10 × and 0.1 × are as far from 1 × either side; 3 × at log10(3) of a decade.
        #expect(abs((ten - one) - (one - tenth)) < 0.2)
        #expect(abs((three - one) / (ten - one) - log10(3)) < 0.01)
        let grdb = try bar("grdb"), raw = try bar("tc-raw"), statement = try bar("grdb-statement")
        #expect(abs(grdb.left - one) < 0.2 && abs(grdb.right - ten) < 0.2)
        #expect(abs(raw.left - tenth) < 0.2 && abs(raw.right - one) < 0.2)
        #expect(abs(statement.right - three) < 0.2)
        // Cabinet's mark straddles 1 ×.
        let cabinet = try bar("cabinet")
        #expect(cabinet.left < one && cabinet.right > one)
        #expect(svg.contains("20.0 s · 10.0×") && svg.contains("200 ms · 0.10×") && svg.contains("2.00 s · 1.00×"))
    }

    @Test func theAxisWidensToTheExtremesAndStaysCentredOnOne() {
        let axis = LogAxis(ratios: [0.04, 1, 142], left: 100, right: 900)
        #expect(axis.ticks.first == 0.03 && axis.ticks.last == 300)
        #expect(axis.ticks.contains(1) && axis.ticks.contains(10) && axis.ticks.contains(0.1))
        #expect(abs(axis.x(0.03) - 100) < 1e-6 && abs(axis.x(300) - 900) < 1e-6)
        #expect(abs((axis.x(100) - axis.x(10)) - (axis.x(10) - axis.x(1))) < 1e-6)
        let narrow = LogAxis(ratios: [0.9, 1.2], left: 0, right: 100)
        #expect(narrow.ticks == [0.1, 0.3, 1, 3, 10])
        #expect(abs(narrow.x(1) - 50) < 1e-6)
        #expect(tickLabel(0.03) == "0.03×" && tickLabel(0.3) == "0.3×" && tickLabel(30) == "30×")
    }

    @Test func everyWorkloadAndEngineAppears() throws {
        var results: [Result] = []
        let engines = allEngines.map { $0.name }
        for workload in Workload.allCases {
            for (index, engine) in engines.enumerated() {
                let queries = workload.isQuery ? QueryTiming(count: 1_000, seconds: 0.05 * Double(index + 1)) : nil
                results.append(Self.result(workload, engine, seconds: 0.5 * Double(index + 1), queries: queries))
            }
        }
        let svg = Self.chart(results).svg()
        let elements = try Self.elements(svg)
        let texts = elements.filter { $0.localName == "text" }.compactMap(\.stringValue)
        for workload in Workload.allCases {
            #expect(texts.contains { $0.hasPrefix(workload.rawValue + " — ") }, "no header for \(workload.rawValue)")
            for engine in engines {
                let bars = elements.filter {
                    $0.localName == "rect" && $0.value(of: "data-workload") == workload.rawValue
                        && $0.value(of: "data-engine") == engine
                }
                #expect(bars.count == 1, "\(engine) in \(workload.rawValue)")
            }
        }
        for engine in engines {
            #expect(texts.contains(engine), "\(engine) not in the legend")
            #expect(elements.contains { $0.localName == "rect" && $0.value(of: "fill") == chartColor(engine) })
        }
        #expect(Set(engines.map(chartColor)).count == engines.count, "two engines share a color")
        // A query workload compares, and shows, the time per query.
        #expect(texts.contains("0.100 ms/query · 2.00×"))
    }

    @Test func textIsEscapedAndTheMachineNamed() throws {
        var machine = Self.machine
        machine.cpu = "AT&T <Fast> \"CPU\" 'x'"
        let svg = Self.chart([Self.result(.simpleFetch, "cabinet", seconds: 1)], machine: machine).svg()
        #expect(!svg.contains("<Fast>") && !svg.contains("AT&T"))
        let texts = try Self.elements(svg).filter { $0.localName == "text" }.compactMap(\.stringValue)
        let line = try #require(texts.first { $0.contains("CPU") })
        #expect(line == machine.summary)
        for part in ["AT&T <Fast> \"CPU\" 'x'", "2 cores", "24 GiB RAM", "Debian GNU/Linux 12", "Swift 6.3", "2026-11-25", "load 0.25 at start, 1.50 at end"] {
            #expect(line.contains(part), "\(part) missing from the machine line")
        }
        #expect(texts.contains { $0.contains("1,000,000 songs") && $0.contains("median of 3 runs") })
        #expect(xmlEscaped("a<b>&\"'") == "a&lt;b&gt;&amp;&quot;&apos;")
    }

    @Test func aWorkloadWithoutCabinetHasNoRatio() throws {
        let svg = Self.chart([
            Self.result(.complexFetch, "cabinet", seconds: 0.01),
            Self.result(.complexFetch, "grdb", seconds: 0.03),
            Self.result(.namedBuffer, "grdb", seconds: 1.5),
            Self.result(.namedBuffer, "tc-raw", seconds: 0.004),
        ]).svg()
        let elements = try Self.elements(svg)
        let texts = elements.filter { $0.localName == "text" }.compactMap(\.stringValue)
        #expect(texts.contains { $0.hasPrefix("named-buffer") && $0.contains("Cabinet did not run it: no ratio") })
        #expect(texts.contains("1.50 s") && texts.contains("4.00 ms"))
        #expect(!elements.contains { $0.localName == "rect" && $0.value(of: "data-workload") == "named-buffer" })
        #expect(texts.contains("30.0 ms · 3.00×"))
        // Without Cabinet anywhere there is no axis: times alone, no gridlines or ticks.
        let alone = try Self.elements(Self.chart([Self.result(.namedBuffer, "grdb", seconds: 1.5)]).svg())
        #expect(alone.compactMap(\.stringValue).contains("1.50 s"))
        #expect(!alone.contains { $0.localName == "line" } && !alone.compactMap(\.stringValue).contains("1×"))
    }

    @Test func durationsReadAsPeopleWriteThem() {
        #expect(duration(1.673) == "1.67 s" && duration(12.112) == "12.1 s" && duration(142.4) == "142 s")
        #expect(duration(0.291) == "291 ms" && duration(0.0052) == "5.20 ms" && duration(0.00052) == "0.520 ms")
        #expect(ratioLabel(0.83) == "0.83×" && ratioLabel(11.24) == "11.2×" && ratioLabel(142.17) == "142×")
    }

    @Test func machineFilesAreRead() {
        let cpuinfo = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC   7B13 64-Core Processor\nprocessor\t: 1\nmodel name\t: AMD EPYC 7B13\n"
        #expect(cpuModel(fromCPUInfo: cpuinfo) == "AMD EPYC 7B13 64-Core Processor")
        #expect(cpuModel(fromCPUInfo: "processor : 0\n") == nil)
        #expect(totalMemoryBytes(fromMemInfo: "MemTotal:       24634172 kB\nMemFree: 1 kB\n") == 24_634_172 * 1024)
        #expect(osName(fromOSRelease: "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n") == "Debian GNU/Linux 12 (bookworm)")
        let current = Machine.current()
        #expect(current.cores >= 1 && !current.cpu.isEmpty && current.date.count == 10)
    }
}

extension XMLElement {
    /// An attribute's value (swift-corelibs-foundation's `attribute(forName:)`
    /// finds nothing in a document with a default namespace, as an SVG has).
    func value(of attribute: String) -> String? {
        attributes?.first { $0.name == attribute }?.stringValue
    }
}
