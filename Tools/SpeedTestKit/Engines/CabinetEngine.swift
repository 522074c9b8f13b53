import CabinetModel

/// The workloads as a Cabinet user writes them: `@StoredModel` classes and an ObjectStore.
public enum CabinetEngine: Engine {
    public static let name = "cabinet"
    public static let summary = "Cabinet: @StoredModel classes in an ObjectStore"

    @StoredModel
    final class Song: StoredObject {
        var title = ""
        var seconds: UInt32 = 0
    }

    @StoredModel
    final class Playlist: StoredObject {
        var title = ""
        var songs: [Song] = []

        override func dissolveAllRelationships() {
            songs = []
        }
    }

    static func open(_ directory: String) throws -> ObjectStore {
        try openStore(at: directory + "/cabinet", registering: Song.self, Playlist.self)
    }

    /// A store at `path` with the run's durability, `types` registered.
    static func openStore(at path: String, registering types: StoredObject.Type...) throws -> ObjectStore {
        var tuning = TokyoCabinetBackend.Options()
        tuning.syncOnCommit = Durability.sync
        let store = try ObjectStore(backend: TokyoCabinetBackend(directory: path, options: tuning))
        for type in types { try store.register(type) }
        return store
    }

    public static func supports(_ workload: Workload) -> Bool { true }

    public static func run(_ workload: Workload, sizes: Sizes, directory: String) throws -> Outcome {
        if workload.isObservation { return try runLive(workload, sizes: sizes, directory: directory) }
        if workload.needsIndexes { return try runIndexed(workload, sizes: sizes, directory: directory) }
        let store = try open(directory)
        defer { store.close() }
        return try run(workload, sizes: sizes, store: store, engine: name)
    }

    /// BNRPersistence's workloads on `store`, whatever its backend (``CabinetRedisEngine`` runs them on Redis).
    static func run(_ workload: Workload, sizes: Sizes, store: ObjectStore, engine name: String) throws -> Outcome {
        var outcome = Outcome()
        switch workload {
        case .simpleInsert:
            for i in 0..<sizes.songs {
                let song = Song()
                song.title = SpeedData.simpleTitle
                song.seconds = UInt32(i)
                store.insert(song)
                outcome.add(UInt64(i))
            }
            try store.save()
        case .simpleFetch:
            for song in try store.fetchAll(Song.self) {
                outcome.add(UInt64(song.seconds) &+ UInt64(song.title.utf8.count))
            }
        case .simpleEnumerate:
            try store.enumerate(Song.self) { song, _ in
                outcome.add(UInt64(song.seconds) &+ UInt64(song.title.utf8.count))
            }
        case .simpleUpdate:
            for song in try store.fetchAll(Song.self) where song.seconds % 3 == 0 {
                song.title = SpeedData.updatedTitle(Int(song.seconds))
                outcome.add(stableHash(song.title))
            }
            try store.save()
        case .complexInsert:
            var songs: [Song] = []
            songs.reserveCapacity(sizes.complexSongs)
            for i in 0..<sizes.complexSongs {
                let song = Song()
                song.title = SpeedData.complexTitle(i)
                song.seconds = UInt32(i)
                store.insert(song)
                songs.append(song)
                outcome.add(UInt64(i))
            }
            for p in 0..<sizes.playlists {
                let list = Playlist()
                list.title = SpeedData.playlistTitle(p)
                list.songs = sizes.complexPlaylistSongs(p).map { songs[$0] }
                store.insert(list)
                outcome.add(UInt64(p))
            }
            try store.save()
        case .complexFetch:
            // The first songs' faults are loaded together: one read (on Redis, one round trip) for all.
            let lists = try store.fetchAll(Playlist.self)
            let firsts = try lists.map { list in
                guard let first = list.songs.first else { throw SpeedTestError("playlist \(list.title) is empty") }
                return first
            }
            try store.load(firsts)
            for song in firsts { outcome.add(stableHash(song.title)) }
        case .complexFaults:
            let lists = try store.fetchAll(Playlist.self)
            try store.load(lists.flatMap(\.songs))
            for list in lists {
                for song in list.songs { outcome.add(stableHash(song.title)) }
            }
        case .namedBuffer:
            var buffer = DataBuffer(capacity: 4 + 4 * sizes.bufferReferences)
            let songs = try (0..<sizes.bufferReferences).map { try store.fault(Song.self, rowID: UInt32($0 + 2)) }
            buffer.writeReferences(songs)
            try store.setNamedBuffer(buffer, forName: SpeedData.bufferName)
            try store.save()
            guard var readBack = try store.namedBuffer(forName: SpeedData.bufferName) else {
                throw SpeedTestError("the named buffer was not saved")
            }
            for song in try readBack.readReferences(to: Song.self) {
                outcome.add(UInt64(song.rowID - 2))
            }
        case .indexedInsert, .indexedEqual, .indexedRange, .fulltext, .inverse, .observeObjects, .observeQueries, .observeIdle:
            throw SpeedTestError.unsupported(workload, by: name)   // runIndexed's
        }
        return outcome
    }
}
