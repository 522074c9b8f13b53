/// What the observation workloads need of an engine's open library: its two
/// commits, and its two kinds of observation, each consumed by a task of its
/// own. ``run(_:sizes:)`` runs the workloads the same way on every engine.
protocol LiveLibrary {
    /// Retitles `songs` in one commit.
    func retitle(_ songs: [Int], _ title: @escaping @Sendable (Int) -> String) throws -> CommitTime
    /// Retitles every album in one commit.
    func retitleAlbums(round: Int) throws -> CommitTime
    /// Observes song `i`, telling `deliveries` its title as observation `index`.
    func observeTitle(ofSong i: Int, as index: Int, into deliveries: Deliveries) -> Task<Void, Never>
    /// Observes the songs whose seconds lie in `range`, telling `deliveries` their titles and seconds.
    func observeSongs(in range: ClosedRange<UInt32>, as index: Int, into deliveries: Deliveries) -> Task<Void, Never>
}

extension LiveLibrary {
    /// Runs `workload`, which observes: see ``Workload`` and ``LiveSpeedData``.
    func run(_ workload: Workload, sizes: Sizes) throws -> Outcome {
        var consumers: [Task<Void, Never>] = []
        defer { for consumer in consumers { consumer.cancel() } }
        var outcome = Outcome()
        switch workload {
        case .observeObjects, .observeQueries:
            let updated = LiveSpeedData.updatedSongs(sizes)
            // The second of two plain commits: the first also warms what the commit reads.
            let plain = try (1...2).map { round in try retitle(updated) { LiveSpeedData.warmTitle($0, round: round) } }[1]
            let observed = LiveSpeedData.observedSongs(sizes)
            let count = workload == .observeObjects ? observed.count : sizes.observations
            let deliveries = Deliveries(count: count)
            for index in 0..<count {
                consumers.append(workload == .observeObjects
                    ? observeTitle(ofSong: observed[index], as: index, into: deliveries)
                    : observeSongs(in: LiveSpeedData.queryRange(index, sizes: sizes), as: index, into: deliveries))
            }
            _ = try deliveries.waitForInitialValues()
            let commit = try retitle(updated, LiveSpeedData.updatedTitle)
            let (checksum, last) = try deliveries.waitForNewValues()
            outcome = Outcome(objects: count, checksum: checksum)
            outcome.queries = .deliveries(count, of: commit, last: last, plain: plain)
        case .observeIdle:
            // A first commit warms what the commits read; then the plain ones.
            _ = try retitleAlbums(round: 1)
            let plain = try (0..<LiveSpeedData.idleCommits).map { try retitleAlbums(round: 2 + $0) }
            let count = LiveSpeedData.idleObservations(sizes)
            let deliveries = Deliveries(count: count)
            for k in 0..<count {
                consumers.append(observeTitle(ofSong: LiveSpeedData.idleSong(k, sizes: sizes), as: k, into: deliveries))
            }
            let checksum = try deliveries.waitForInitialValues()
            let observed = try (0..<LiveSpeedData.idleCommits).map { try retitleAlbums(round: 2 + LiveSpeedData.idleCommits + $0) }
            outcome = Outcome(objects: count, checksum: checksum)
            outcome.queries = .idle(observed: observed, plain: plain)
        default:
            throw SpeedTestError("\(workload.rawValue) observes nothing")
        }
        return outcome
    }
}

extension LiveSpeedData {
    /// What a delivered title is: new once the observed commit retitled it; its checksum.
    static func judge(title: String?) -> (isNew: Bool, checksum: UInt64) {
        (title?.hasPrefix("Updated") ?? false, stableHash(title ?? ""))
    }

    /// What a delivered result is: new once it holds a song the observed commit retitled; its checksum.
    static func judge(songs: some Collection<(title: String, seconds: UInt32)>) -> (isNew: Bool, checksum: UInt64) {
        (songs.contains { $0.title.hasPrefix("Updated") }, songs.reduce(0) { $0 &+ checksum(title: $1.title, seconds: $1.seconds) })
    }
}
