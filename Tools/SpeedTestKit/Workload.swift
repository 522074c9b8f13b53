import Foundation

/// BNRPersistence's speed tests, as workloads every engine runs, and the queries
/// of issue 15 (indexes, full-text search), which Cabinet and GRDB records run
/// (``Engine/supports(_:)``) on the data of ``IndexedSpeedData``.
public enum Workload: String, CaseIterable, Codable, Sendable {
    /// Create `songs` songs (title "Test Song", seconds = i), insert, save.
    case simpleInsert = "simple-insert"
    /// Open the simple store and fetch every song as an object with its content.
    case simpleFetch = "simple-fetch"
    /// Stream every song of the simple store without keeping them: memory must stay flat.
    case simpleEnumerate = "simple-enumerate"
    /// Fetch every song of the complex store, retitle every third one, save.
    case simpleUpdate = "simple-update"
    /// `complexSongs` songs titled "Test Song N" and `playlists` playlists of `playlistSize` songs, save.
    case complexInsert = "complex-insert"
    /// Fetch every playlist and read the title of its first song.
    case complexFetch = "complex-fetch"
    /// Fetch every playlist and the title of every one of its songs: all
    /// `playlists × playlistSize` song faults, where a networked store's round trips show.
    case complexFaults = "complex-faults"
    /// Store a named buffer of `bufferReferences` song references, save, and read it back.
    case namedBuffer = "named-buffer"
    /// `songs` songs with artist, seconds, added and title, saved with an index on
    /// each of the first three and a full-text index on the title.
    case indexedInsert = "indexed-insert"
    /// `queries` queries for the ~10 songs of one artist.
    case indexedEqual = "indexed-equal"
    /// `queries` queries for the ~1,000 songs whose seconds lie in a range.
    case indexedRange = "indexed-range"
    /// `queries` two-word full-text searches, ~1,000 songs each.
    case fulltext
    /// `queries` queries for the playlists (of `indexedPlaylists`) that hold one song.
    case inverse
    /// `observations` one-object observations of songs that one commit of
    /// 10,000 retitles (``LiveSpeedData``): what observing adds to the commit,
    /// and the wait after it until every new value is delivered (``QueryTiming``).
    case observeObjects = "observe-objects"
    /// `observations` observed range queries of ~1,000 songs, each of whose
    /// results the same commit changes; timed as `observe-objects`.
    case observeQueries = "observe-queries"
    /// `10 × observations` one-object observations of songs, and a commit of the
    /// albums, another class: the commit's time with them against without.
    case observeIdle = "observe-idle"

    /// The data a workload needs before it is timed, made in a process of its own.
    public var preparation: Preparation {
        switch self {
        case .simpleInsert, .complexInsert: return .none
        case .simpleFetch, .simpleEnumerate: return .simpleSongs
        case .simpleUpdate, .complexFetch, .complexFaults: return .complexStore
        case .namedBuffer: return .bufferSongs
        case .indexedInsert: return .none
        case .indexedEqual, .indexedRange, .fulltext, .inverse: return .indexedLibrary
        case .observeObjects, .observeQueries, .observeIdle: return .liveLibrary
        }
    }

    /// Whether the workload times a part of its run, counted in queries (its
    /// report gives the time per query): the queries of an indexed workload,
    /// or an observation workload's deliveries (its commit, for `observe-idle`).
    public var isQuery: Bool { preparation == .indexedLibrary || isObservation }

    /// Whether the workload observes live data (``LiveSpeedData``).
    public var isObservation: Bool { preparation == .liveLibrary }

    /// Whether the workload needs indexes (issue 15's, and the live ones, whose
    /// range queries are indexed): Cabinet and GRDB records run them.
    public var needsIndexes: Bool { self == .indexedInsert || isQuery }

    /// How many objects the workload handles, for the report.
    public func size(_ sizes: Sizes) -> Int {
        switch self {
        case .simpleInsert, .simpleFetch, .simpleEnumerate: return sizes.songs
        case .simpleUpdate: return sizes.complexSongs
        case .complexInsert: return sizes.complexSongs + sizes.playlists
        case .complexFetch: return sizes.playlists
        case .complexFaults: return sizes.playlists * sizes.playlistSize
        case .namedBuffer: return sizes.bufferReferences
        case .indexedInsert: return sizes.songs
        case .indexedEqual, .indexedRange, .fulltext, .inverse: return sizes.queries
        case .observeObjects, .observeQueries: return sizes.observations
        case .observeIdle: return LiveSpeedData.idleObservations(sizes)
        }
    }
}

/// Untimed set-up of a workload's data.
public enum Preparation: Sendable {
    case none, simpleSongs, complexStore, bufferSongs
    /// `indexed-insert`'s songs and `indexedPlaylists` playlists of them (``IndexedSpeedData``).
    case indexedLibrary
    /// `liveSongs` songs with an index on seconds, and albums (``LiveSpeedData``).
    case liveLibrary
}

/// Whether the Tokyo Cabinet engines make every commit durable against power
/// loss (fsync), as SQLite's default (`synchronous = FULL`) already does. Set by
/// `speedtest --sync` for its children through the environment.
public enum Durability {
    public static let environmentKey = "CABINET_SPEEDTEST_SYNC"
    public static var sync: Bool { ProcessInfo.processInfo.environment[environmentKey] == "1" }
}

/// How much data each workload handles. The defaults are BNRPersistence's.
public struct Sizes: Codable, Sendable, Equatable {
    public var songs = 1_000_000
    public var complexSongs = 100_000
    public var playlists = 1_000
    public var playlistSize = 100
    public var bufferReferences = 100_000
    /// Playlists of `playlistSize` songs in the indexed library (`inverse`).
    public var indexedPlaylists = 10_000
    /// Queries each query workload times; not scaled: a quick run's queries find as much.
    public var queries = 1_000
    /// Songs of the observation workloads' library (``LiveSpeedData``).
    public var liveSongs = 100_000
    /// Observations of `observe-objects` and `observe-queries` (ten times as many
    /// in `observe-idle`); not scaled, as `queries`.
    public var observations = 1_000

    public init() {}

    /// Every size divided by `divisor` (at least 1 each).
    public func divided(by divisor: Int) -> Sizes {
        var result = self
        result.songs = max(1, songs / divisor)
        result.complexSongs = max(1, complexSongs / divisor)
        result.playlists = max(1, playlists / divisor)
        result.bufferReferences = max(1, bufferReferences / divisor)
        result.indexedPlaylists = max(1, indexedPlaylists / divisor)
        result.liveSongs = max(1, liveSongs / divisor)
        return result
    }

    /// The songs of complex playlist `p`: `playlistSize` songs, wrapping around the song list.
    public func complexPlaylistSongs(_ p: Int) -> [Int] {
        (0..<playlistSize).map { (p * playlistSize + $0) % complexSongs }
    }
}

/// What a workload produced, so engines can be checked against each other:
/// the number of objects handled and an order-independent checksum of what was
/// read. A query workload also says how long its queries took (``QueryTiming``),
/// which is no part of equality: two runs agree when they read the same.
public struct Outcome: Codable, Sendable, Equatable {
    public var objects: Int
    public var checksum: UInt64
    public var queries: QueryTiming?

    public init(objects: Int = 0, checksum: UInt64 = 0) {
        self.objects = objects
        self.checksum = checksum
    }

    public static func == (a: Outcome, b: Outcome) -> Bool {
        a.objects == b.objects && a.checksum == b.checksum
    }

    /// Adds one object, folding `value` into the checksum by addition (so order does not matter).
    public mutating func add(_ value: UInt64) {
        objects += 1
        checksum &+= value
    }
}

/// FNV-1a of a string's UTF-8: a stable hash for checksums.
public func stableHash(_ text: String) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in text.utf8 {
        hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
    }
    return hash
}

/// The workload data, the same for every engine.
public enum SpeedData {
    public static let simpleTitle = "Test Song"
    public static func complexTitle(_ i: Int) -> String { "Test Song \(i)" }
    public static func updatedTitle(_ seconds: Int) -> String { "Updated Song \(seconds)" }
    public static func playlistTitle(_ p: Int) -> String { "Playlist \(p)" }
    public static let bufferName = "Favorites"
}
