import Cabinet
import CabinetRedis

/// The same classes and the same code as ``CabinetEngine``, on a Redis server
/// (``SpeedTestRedis``) through `RedisBackend`: what a store pays for being on
/// a network. Each run has a store of its own, deleted afterwards.
public enum CabinetRedisEngine: Engine {
    public static let name = "cabinet-redis"
    public static let summary = "Cabinet on a local Redis server (RedisBackend), the same classes and code as cabinet"

    static func open(_ directory: String) throws -> ObjectStore {
        let backend = try RedisBackend(url: SpeedTestRedis.url(), store: SpeedTestRedis.storeName(for: directory))
        let store = try ObjectStore(backend: backend)
        try store.register(CabinetEngine.Song.self, CabinetEngine.Playlist.self)
        return store
    }

    public static func run(_ workload: Workload, sizes: Sizes, directory: String) throws -> Outcome {
        guard supports(workload) else { throw SpeedTestError.unsupported(workload, by: name) }
        let store = try open(directory)
        defer { store.close() }
        return try CabinetEngine.run(workload, sizes: sizes, store: store, engine: name)
    }

    public static var usesRedis: Bool { true }

    public static func storedBytes(directory: String) throws -> Int {
        try RawRedisClient(url: SpeedTestRedis.url()).memoryUsage(ofStore: SpeedTestRedis.storeName(for: directory))
    }

    public static func cleanUp(directory: String) throws {
        try RawRedisClient(url: SpeedTestRedis.url()).deleteStore(SpeedTestRedis.storeName(for: directory))
    }
}
