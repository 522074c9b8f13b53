import Foundation
import SpeedTestKit
import Testing

/// Every engine runs every BNRPersistence workload at a tiny size, and gets the
/// right answer (issue 15's: ``IndexedWorkloadTests``).
@Suite struct WorkloadTests {
    static let sizes: Sizes = {
        var sizes = Sizes()
        sizes.songs = 300
        sizes.complexSongs = 120
        sizes.playlists = 7
        sizes.playlistSize = 20
        sizes.bufferReferences = 50
        return sizes
    }()

    /// What each workload must produce, worked out from the data definitions.
    static func expected(_ workload: Workload) -> Outcome {
        let sizes = Self.sizes
        var outcome = Outcome()
        switch workload {
        case .simpleInsert:
            for i in 0..<sizes.songs { outcome.add(UInt64(i)) }
        case .simpleFetch, .simpleEnumerate:
            for i in 0..<sizes.songs { outcome.add(UInt64(i + SpeedData.simpleTitle.utf8.count)) }
        case .simpleUpdate:
            for i in stride(from: 0, to: sizes.complexSongs, by: 3) { outcome.add(stableHash(SpeedData.updatedTitle(i))) }
        case .complexInsert:
            for i in 0..<sizes.complexSongs { outcome.add(UInt64(i)) }
            for p in 0..<sizes.playlists { outcome.add(UInt64(p)) }
        case .complexFetch:
            for p in 0..<sizes.playlists { outcome.add(stableHash(SpeedData.complexTitle(sizes.complexPlaylistSongs(p)[0]))) }
        case .complexFaults:
            for p in 0..<sizes.playlists {
                for song in sizes.complexPlaylistSongs(p) { outcome.add(stableHash(SpeedData.complexTitle(song))) }
            }
        case .namedBuffer:
            for i in 0..<sizes.bufferReferences { outcome.add(UInt64(i)) }
        case .indexedInsert, .indexedEqual, .indexedRange, .fulltext, .inverse, .observeObjects, .observeQueries, .observeIdle:
            break   // IndexedWorkloadTests, LiveWorkloadTests
        }
        return outcome
    }

    @Test(arguments: allEngines.map { $0.name }, Workload.allCases.filter { !$0.needsIndexes })
    func engineGetsTheRightAnswer(_ engineName: String, _ workload: Workload) throws {
        let found = engine(named: engineName)
        let engine = try #require(found)
        guard engine.supports(workload) else { return }   // redis-per-object runs only the fault workloads
        let directory = FileManager.default.temporaryDirectory.path + "/speedtest-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer {
            try? engine.cleanUp(directory: directory)
            try? FileManager.default.removeItem(atPath: directory)
        }
        try engine.prepare(workload.preparation, sizes: Self.sizes, directory: directory)
        let sample = try measure(engine, workload, sizes: Self.sizes, directory: directory)
        #expect(sample.outcome == Self.expected(workload))
        #expect(sample.size == workload.size(Self.sizes))
        #expect(sample.diskBytes > 0)
        #expect(sample.rssBytes > 0)

        // What was written reads back: inserts are fetched, updates are seen.
        switch workload {
        case .simpleInsert:
            #expect(try engine.run(.simpleFetch, sizes: Self.sizes, directory: directory) == Self.expected(.simpleFetch))
        case .complexInsert:
            #expect(try engine.run(.complexFetch, sizes: Self.sizes, directory: directory) == Self.expected(.complexFetch))
        case .simpleUpdate:
            // The new titles were saved: the first song of playlist 0 (song 0) now has its updated title.
            let firstTitles = try engine.run(.complexFetch, sizes: Self.sizes, directory: directory)
            var expected = Outcome()
            for p in 0..<Self.sizes.playlists {
                let song = Self.sizes.complexPlaylistSongs(p)[0]
                expected.add(stableHash(song % 3 == 0 ? SpeedData.updatedTitle(song) : SpeedData.complexTitle(song)))
            }
            #expect(firstTitles == expected)
        default:
            break
        }
    }

    /// A Redis engine's run leaves its store on the server until its clean-up, and nothing after it.
    @Test(arguments: [CabinetRedisEngine.name, RawRedisEngine.name])
    func redisEnginesCleanUpTheirStore(_ engineName: String) throws {
        let found = engine(named: engineName)
        let engine = try #require(found)
        let directory = FileManager.default.temporaryDirectory.path + "/speedtest-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try engine.run(.complexInsert, sizes: Self.sizes, directory: directory)
        #expect(try engine.storedBytes(directory: directory) > 1_000)
        try engine.cleanUp(directory: directory)
        #expect(try engine.storedBytes(directory: directory) == 0)
    }

    @Test func thePerObjectEngineRunsOnlyTheFaultWorkloads() {
        #expect(Workload.allCases.filter { PerObjectRedisEngine.supports($0) } == [.complexFetch, .complexFaults])
    }

    @Test func sizesScaleDownForQuickRuns() {
        let quick = Sizes().divided(by: 10)
        #expect(quick.songs == 100_000)
        #expect(quick.complexSongs == 10_000)
        #expect(quick.playlists == 100)
        #expect(quick.playlistSize == 100)
        #expect(quick.bufferReferences == 10_000)
        #expect(quick.indexedPlaylists == 1_000)
        #expect(quick.queries == 1_000)
        #expect(quick.liveSongs == 10_000)
        #expect(quick.observations == 1_000)
    }

    @Test func theJSONReportHasTheDocumentedKeys() throws {
        let sample = Result(median: Sample(workload: .simpleFetch, engine: "cabinet", size: 3, wallSeconds: 1.5, cpuSeconds: 1.25,
                                           rssBytes: 2048, diskBytes: 4096, outcome: Outcome(objects: 3)), samples: 1)
        let json = try jsonReport([sample])
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
        #expect(parsed.count == 1)
        #expect(Set(parsed[0].keys) == ["workload", "engine", "size", "wall_s", "cpu_s", "rss_bytes", "disk_bytes"])
        #expect(parsed[0]["workload"] as? String == "simple-fetch")
        #expect(parsed[0]["wall_s"] as? Double == 1.5)
        #expect(tableReport([sample]).contains("simple-fetch"))
    }
}
