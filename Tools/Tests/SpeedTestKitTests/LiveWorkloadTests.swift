import Foundation
import SpeedTestKit
import Testing

/// The observation workloads: Cabinet and GRDB records run each at a small
/// size and deliver what the data definitions say (so they agree with each
/// other), with the delivery and commit times a report needs.
@Suite struct LiveWorkloadTests {
    static let sizes: Sizes = {
        var sizes = Sizes()
        sizes.liveSongs = 2_000
        sizes.observations = 20
        return sizes
    }()

    static let liveWorkloads = Workload.allCases.filter(\.isObservation)

    /// What each workload's deliveries add up to, worked out from the data.
    static func expected(_ workload: Workload) -> Outcome {
        let sizes = Self.sizes
        let updated = Set(LiveSpeedData.updatedSongs(sizes))
        var outcome = Outcome()
        switch workload {
        case .observeObjects:
            for i in LiveSpeedData.observedSongs(sizes) { outcome.add(stableHash(LiveSpeedData.updatedTitle(i))) }
        case .observeQueries:
            for q in 0..<sizes.observations {
                let range = LiveSpeedData.queryRange(q, sizes: sizes)
                var sum: UInt64 = 0
                for i in 0..<sizes.liveSongs where range.contains(LiveSpeedData.seconds(i, sizes: sizes)) {
                    let title = updated.contains(i) ? LiveSpeedData.updatedTitle(i) : LiveSpeedData.title(i)
                    sum &+= LiveSpeedData.checksum(title: title, seconds: LiveSpeedData.seconds(i, sizes: sizes))
                }
                outcome.add(sum)
            }
        case .observeIdle:
            for k in 0..<LiveSpeedData.idleObservations(sizes) {
                outcome.add(stableHash(LiveSpeedData.title(LiveSpeedData.idleSong(k, sizes: sizes))))
            }
        default:
            Issue.record("\(workload) is no observation workload")
        }
        return outcome
    }

    @Test(arguments: [CabinetEngine.name, GRDBRecordEngine.name], liveWorkloads)
    func engineDeliversWhatTheCommitChanged(_ engineName: String, _ workload: Workload) async throws {
        let found = engine(named: engineName)
        let engine = try #require(found)
        let supported = engine.supports(workload)
        #expect(supported)
        let directory = FileManager.default.temporaryDirectory.path + "/speedtest-live-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try engine.prepare(workload.preparation, sizes: Self.sizes, directory: directory)
        // On a thread of its own: a run waits for its tasks, which need the test's cooperative threads.
        let sample = try await Self.onThread { try measure(engine, workload, sizes: Self.sizes, directory: directory) }
        #expect(sample.outcome == Self.expected(workload))
        #expect(sample.size == workload.size(Self.sizes))
        let timing = try #require(sample.outcome.queries)
        #expect(timing.count == (workload == .observeIdle ? 1 : Self.sizes.observations))
        #expect(timing.seconds >= 0 && timing.seconds <= sample.wallSeconds)
        #expect((timing.commitSeconds ?? 0) > 0)
        #expect((timing.plainCommitSeconds ?? 0) > 0)
    }

    static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Swift.Result { try body() }) }.start()
        }
    }

    /// Every result of observe-queries changes in the commit, and the observed objects are among the songs it changes.
    @Test func theCommitChangesEveryObservedValue() {
        let sizes = Sizes()
        let updated = LiveSpeedData.updatedSongs(sizes)
        #expect(updated.count == 10_000)
        let observed = LiveSpeedData.observedSongs(sizes)
        #expect(observed.count == 1_000)
        #expect(Set(observed).isSubset(of: updated))
        for q in 0..<sizes.observations {
            let range = LiveSpeedData.queryRange(q, sizes: sizes)
            #expect(range.count == 100)
            #expect(range.contains { $0 % 10 == 0 })
        }
    }

    @Test func theSpeedTestRunsThemByDefault() {
        let plan = Plan(executable: "speedtest")
        for workload in Self.liveWorkloads { #expect(plan.workloads.contains(workload)) }
        #expect(Self.liveWorkloads.map(\.rawValue) == ["observe-objects", "observe-queries", "observe-idle"])
    }

    @Test func theReportGivesTheCommitTimes() throws {
        var outcome = Outcome(objects: 2)
        outcome.queries = QueryTiming(count: 2, seconds: 0.002, commitSeconds: 0.010, plainCommitSeconds: 0.009)
        let row = Result(median: Sample(workload: .observeObjects, engine: "cabinet", size: 2, wallSeconds: 0.1, cpuSeconds: 0.1,
                                        rssBytes: 1, diskBytes: 1, outcome: outcome), samples: 1)
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(try jsonReport([row]).utf8)) as? [[String: Any]])
        #expect(parsed[0]["ms_per_query"] as? Double == 1)
        #expect(parsed[0]["commit_ms"] as? Double == 10)
        #expect(parsed[0]["plain_commit_ms"] as? Double == 9)
        let table = tableReport([row])
        #expect(table.contains("2 observations of one object"))
        #expect(table.contains("10.00") && table.contains("9.00"))
    }
}
