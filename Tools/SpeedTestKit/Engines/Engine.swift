/// A way of storing the workloads' songs and playlists: Cabinet (on Tokyo Cabinet or Redis), GRDB,
/// or Tokyo Cabinet's or hiredis's C API.
public protocol Engine: Sendable {
    /// The engine's name on the command line and in reports.
    static var name: String { get }
    /// What the engine is, in one line.
    static var summary: String { get }

    /// Makes the data `preparation` calls for, in `directory`.
    static func prepare(_ preparation: Preparation, sizes: Sizes, directory: String) throws
    /// Runs `workload` on the data in `directory`; this is what is timed.
    static func run(_ workload: Workload, sizes: Sizes, directory: String) throws -> Outcome

    /// Whether the engine runs `workload` (issue 15's and the observation workloads need indexes: Cabinet's and GRDB records').
    static func supports(_ workload: Workload) -> Bool
    /// Adds ``IndexedSpeedData``'s playlists to the songs of `indexed-insert` in `directory`.
    static func insertIndexedPlaylists(sizes: Sizes, directory: String) throws
    /// Makes the observation workloads' library (``LiveSpeedData``) in `directory`.
    static func prepareLive(sizes: Sizes, directory: String) throws
    /// The bytes the indexes take on disk in `directory`, for engines that have them.
    static func indexBytes(directory: String) throws -> Int?

    /// Whether the engine stores on the Redis server of ``SpeedTestRedis``, which the run then starts first.
    static var usesRedis: Bool { get }
    /// The bytes a run in `directory` left stored: on disk, or (Redis) in the server's memory.
    static func storedBytes(directory: String) throws -> Int
    /// Deletes what a run in `directory` stored outside it (a Redis store); its directory is removed anyway.
    static func cleanUp(directory: String) throws
}

extension Engine {
    /// Makes a workload's data with the engine's own insert workloads.
    public static func prepare(_ preparation: Preparation, sizes: Sizes, directory: String) throws {
        switch preparation {
        case .none: return
        case .simpleSongs: _ = try run(.simpleInsert, sizes: sizes, directory: directory)
        case .complexStore: _ = try run(.complexInsert, sizes: sizes, directory: directory)
        case .bufferSongs:
            var bufferSizes = sizes
            bufferSizes.songs = sizes.bufferReferences
            _ = try run(.simpleInsert, sizes: bufferSizes, directory: directory)
        case .indexedLibrary:
            _ = try run(.indexedInsert, sizes: sizes, directory: directory)
            try insertIndexedPlaylists(sizes: sizes, directory: directory)
        case .liveLibrary:
            try prepareLive(sizes: sizes, directory: directory)
        }
    }

    public static func supports(_ workload: Workload) -> Bool { !workload.needsIndexes }

    public static func insertIndexedPlaylists(sizes: Sizes, directory: String) throws {
        throw SpeedTestError("\(name) has no indexed workloads")
    }

    public static func prepareLive(sizes: Sizes, directory: String) throws {
        throw SpeedTestError("\(name) has no observation workloads")
    }

    public static func indexBytes(directory: String) throws -> Int? { nil }

    public static var usesRedis: Bool { false }
    public static func storedBytes(directory: String) throws -> Int { directorySize(directory) }
    public static func cleanUp(directory: String) throws {}
}

/// Every engine, in report order.
public let allEngines: [any Engine.Type] = [
    CabinetEngine.self, GRDBRecordEngine.self, GRDBStatementEngine.self, RawTokyoCabinetEngine.self,
    CabinetRedisEngine.self, RawRedisEngine.self, PerObjectRedisEngine.self,
]

public func engine(named name: String) -> (any Engine.Type)? {
    allEngines.first { $0.name == name }
}

/// An engine found data it did not expect: a bug in the benchmark, never timing noise.
public struct SpeedTestError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }

    /// `workload` asked of an engine that does not run it (see ``Engine/supports(_:)``).
    static func unsupported(_ workload: Workload, by engine: String) -> SpeedTestError {
        SpeedTestError("\(engine) does not run \(workload.rawValue)")
    }
}
