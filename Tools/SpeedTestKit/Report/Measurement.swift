import Foundation

/// One timed run of one workload by one engine, as a child process reports it.
public struct Sample: Codable, Sendable {
    public var workload: Workload
    public var engine: String
    public var size: Int
    public var wallSeconds: Double
    public var cpuSeconds: Double
    public var rssBytes: Int
    public var diskBytes: Int
    public var outcome: Outcome
    /// The bytes of the indexes alone (`indexed-insert`: Cabinet's index file, SQLite's index and FTS5 pages).
    public var indexBytes: Int?

    public init(workload: Workload, engine: String, size: Int, wallSeconds: Double, cpuSeconds: Double,
                rssBytes: Int, diskBytes: Int, outcome: Outcome, indexBytes: Int? = nil) {
        self.workload = workload
        self.engine = engine
        self.size = size
        self.wallSeconds = wallSeconds
        self.cpuSeconds = cpuSeconds
        self.rssBytes = rssBytes
        self.diskBytes = diskBytes
        self.outcome = outcome
        self.indexBytes = indexBytes
    }
}

/// Runs `workload` once in this process and measures it: wall and CPU time of
/// the run, this process's peak resident set, and the bytes left stored (and,
/// after `indexed-insert`, those of the indexes, counted untimed).
public func measure(_ engine: any Engine.Type, _ workload: Workload, sizes: Sizes, directory: String) throws -> Sample {
    let startWall = DispatchTime.now().uptimeNanoseconds
    let startCPU = processCPUSeconds()
    let outcome = try engine.run(workload, sizes: sizes, directory: directory)
    let wall = Double(DispatchTime.now().uptimeNanoseconds - startWall) / 1e9
    let cpu = processCPUSeconds() - startCPU
    return Sample(workload: workload, engine: engine.name, size: workload.size(sizes), wallSeconds: wall, cpuSeconds: cpu,
                  rssBytes: peakResidentBytes(), diskBytes: try engine.storedBytes(directory: directory), outcome: outcome,
                  indexBytes: workload == .indexedInsert ? try engine.indexBytes(directory: directory) : nil)
}

func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// The peak resident set of this process so far (Linux reports kilobytes).
func peakResidentBytes() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Int(usage.ru_maxrss) * 1024
}

/// The bytes of every regular file under `directory`.
public func directorySize(_ directory: String) -> Int {
    guard let walker = FileManager.default.enumerator(atPath: directory) else { return 0 }
    var total = 0
    for case let name as String in walker {
        let attributes = try? FileManager.default.attributesOfItem(atPath: directory + "/" + name)
        if attributes?[.type] as? FileAttributeType == .typeRegular {
            total += (attributes?[.size] as? Int) ?? 0
        }
    }
    return total
}
