import Foundation

/// The machine a run measured on, as the chart's subtitle names it: timings from
/// a shared 2-core VM and from a laptop do not compare, so a picture without its
/// machine would mislead whoever finds it later.
public struct Machine: Sendable, Equatable {
    /// The CPU's model name (`/proc/cpuinfo`).
    public var cpu: String
    /// The cores the system offers this process.
    public var cores: Int
    /// Physical memory in bytes (`/proc/meminfo`), 0 if unknown.
    public var memoryBytes: Int
    /// The operating system and kernel, e.g. "Debian GNU/Linux 12 (bookworm), Linux 6.18.0".
    public var system: String
    /// The Swift compiler that built the speed test, e.g. "Swift 6.3".
    public var swift: String
    /// The day of the run, `yyyy-MM-dd` (UTC).
    public var date: String
    /// The one-minute load average when the run started: what else was running.
    public var loadAverage: Double?
    /// The one-minute load average when the run ended (the run's own child adds
    /// about 1): on a shared machine, whether others started work meanwhile.
    public var loadAverageAtEnd: Double?

    /// A machine described by hand (tests); ``current(now:)`` reads this one's.
    public init(cpu: String, cores: Int, memoryBytes: Int, system: String, swift: String, date: String,
                loadAverage: Double? = nil, loadAverageAtEnd: Double? = nil) {
        self.cpu = cpu
        self.cores = cores
        self.memoryBytes = memoryBytes
        self.system = system
        self.swift = swift
        self.date = date
        self.loadAverage = loadAverage
        self.loadAverageAtEnd = loadAverageAtEnd
    }

    /// The machine this process runs on, now.
    public static func current(now: Date = Date()) -> Machine {
        func read(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        let kernel = read("/proc/sys/kernel/osrelease").trimmingCharacters(in: .whitespacesAndNewlines)
        let os = osName(fromOSRelease: read("/etc/os-release")) ?? "Linux"
        return Machine(cpu: cpuModel(fromCPUInfo: read("/proc/cpuinfo")) ?? "unknown CPU",
                       cores: ProcessInfo.processInfo.activeProcessorCount,
                       memoryBytes: totalMemoryBytes(fromMemInfo: read("/proc/meminfo")) ?? 0,
                       system: kernel.isEmpty ? os : "\(os), Linux \(kernel)",
                       swift: compilerVersion,
                       date: formatter.string(from: now),
                       loadAverage: read("/proc/loadavg").split(separator: " ").first.flatMap { Double($0) })
    }

    /// The machine in one line, for the chart's subtitle.
    public var summary: String {
        var parts = [cpu, "\(cores) core\(cores == 1 ? "" : "s")"]
        if memoryBytes > 0 { parts.append(String(format: "%.0f GiB RAM", Double(memoryBytes) / 1_073_741_824)) }
        parts += [system, swift]
        switch (loadAverage, loadAverageAtEnd) {
        case let (start?, end?): parts.append(String(format: "load %.2f at start, %.2f at end", start, end))
        case let (start?, nil): parts.append(String(format: "load %.2f at start", start))
        case let (nil, end?): parts.append(String(format: "load %.2f at end", end))
        case (nil, nil): break
        }
        parts.append(date)
        return parts.joined(separator: " · ")
    }
}

/// The first `model name` of `/proc/cpuinfo`, its runs of spaces squeezed.
func cpuModel(fromCPUInfo text: String) -> String? {
    for line in text.split(separator: "\n") where line.hasPrefix("model name") {
        guard let colon = line.firstIndex(of: ":") else { continue }
        let name = line[line.index(after: colon)...].split(separator: " ").joined(separator: " ")
        if !name.isEmpty { return name }
    }
    return nil
}

/// `MemTotal` of `/proc/meminfo`, which gives kilobytes, in bytes.
func totalMemoryBytes(fromMemInfo text: String) -> Int? {
    for line in text.split(separator: "\n") where line.hasPrefix("MemTotal:") {
        let fields = line.split(separator: " ")
        if fields.count >= 2, let kilobytes = Int(fields[1]) { return kilobytes * 1024 }
    }
    return nil
}

/// `PRETTY_NAME` of `/etc/os-release`, without its quotes.
func osName(fromOSRelease text: String) -> String? {
    for line in text.split(separator: "\n") where line.hasPrefix("PRETTY_NAME=") {
        let value = line.dropFirst("PRETTY_NAME=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\"'"))
        if !value.isEmpty { return value }
    }
    return nil
}

/// The compiler that built this program; it is known only when compiling (a
/// machine that runs the speed test need not have `swift` on its path).
let compilerVersion: String = {
    #if compiler(>=7.0)
    return "Swift 7 or later"
    #elseif compiler(>=6.4)
    return "Swift 6.4 or later"
    #elseif compiler(>=6.3)
    return "Swift 6.3"
    #elseif compiler(>=6.2)
    return "Swift 6.2"
    #elseif compiler(>=6.1)
    return "Swift 6.1"
    #else
    return "Swift 6.0"
    #endif
}()
