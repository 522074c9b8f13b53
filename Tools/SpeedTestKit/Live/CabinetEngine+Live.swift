import CabinetModel
import Foundation

/// The observation workloads (``LiveSpeedData``) as a Cabinet user writes them:
/// a `StorePool`, `observe(_:rowID:_:)` for one object, `observeResults` for a
/// range query, each consumed by a task of its own. A store of its own (`cabinet-live`).
extension CabinetEngine {
    enum Live {
        @StoredModel
        final class Song: StoredObject {
            var title = ""
            @Indexed var seconds: UInt32 = 0
        }

        @StoredModel
        final class Album: StoredObject {
            var title = ""
        }

        static func directory(_ directory: String) -> String { directory + "/cabinet-live" }

        static func open(_ directory: String) throws -> StorePool {
            var tuning = TokyoCabinetBackend.Options()
            tuning.concurrentReads = true
            tuning.syncOnCommit = Durability.sync
            return try StorePool(backend: TokyoCabinetBackend(directory: Live.directory(directory), options: tuning),
                                 classes: [Song.self, Album.self])
        }

        /// The row of song `i` (or album `i`): rows count from 2 (row 1 is the class's metadata), in insertion order.
        static func row(_ i: Int) -> UInt32 { UInt32(i + 2) }
    }

    public static func prepareLive(sizes: Sizes, directory: String) throws {
        let store = try openStore(at: Live.directory(directory), registering: Live.Song.self, Live.Album.self)
        defer { store.close() }
        for i in 0..<sizes.liveSongs {
            let song = Live.Song()
            song.title = LiveSpeedData.title(i)
            song.seconds = LiveSpeedData.seconds(i, sizes: sizes)
            store.insert(song)
        }
        for a in 0..<LiveSpeedData.albums {
            let album = Live.Album()
            album.title = LiveSpeedData.albumTitle(a, round: 0)
            store.insert(album)
        }
        try store.save()
    }

    static func runLive(_ workload: Workload, sizes: Sizes, directory: String) throws -> Outcome {
        let pool = try Live.open(directory)
        defer { _ = try? waitFor { try await pool.close() } }
        return try Live.Library(pool: pool).run(workload, sizes: sizes)
    }
}

extension CabinetEngine.Live {
    /// The library open in a pool.
    struct Library: LiveLibrary {
        let pool: StorePool

        func retitle(_ songs: [Int], _ title: @escaping @Sendable (Int) -> String) throws -> CommitTime {
            try waitFor { [pool] in
                try await CommitTime.of {
                    try await pool.write { store in
                        for i in songs {
                            guard let song = try store.fetch(Song.self, rowID: row(i)) else { throw SpeedTestError("song \(i) is missing") }
                            song.title = title(i)
                        }
                    }
                }
            }
        }

        func retitleAlbums(round: Int) throws -> CommitTime {
            try waitFor { [pool] in
                try await CommitTime.of {
                    try await pool.write { store in
                        for a in 0..<LiveSpeedData.albums {
                            guard let album = try store.fetch(Album.self, rowID: row(a)) else { throw SpeedTestError("album \(a) is missing") }
                            album.title = LiveSpeedData.albumTitle(a, round: round)
                        }
                    }
                }
            }
        }

        func observeTitle(ofSong i: Int, as index: Int, into deliveries: Deliveries) -> Task<Void, Never> {
            let titles = pool.observe(Song.self, rowID: row(i)) { song in song.title }
            return consume(titles, as: index, into: deliveries, judge: LiveSpeedData.judge(title:))
        }

        func observeSongs(in range: ClosedRange<UInt32>, as index: Int, into deliveries: Deliveries) -> Task<Void, Never> {
            let rows = pool.observeResults(Song.self, where: \.seconds, in: range) { song in (title: song.title, seconds: song.seconds) }
            return consume(rows, as: index, into: deliveries) { update in LiveSpeedData.judge(songs: update.rows) }
        }
    }
}
