import Cabinet
import Foundation
import CabinetRedis

/// A store named on the command line: a directory, or a Redis store's URL
/// (`redis://[:password@]host:port/database/store`). The password may also
/// come from `CABINET_REDIS_PASSWORD`, so it need not be on the command line.
enum StoreLocation {
    static func isRedis(_ location: String) -> Bool { RedisAddress.isURL(location) }

    /// The Redis backend for `url`, read-only or writable.
    static func redis(_ url: String, readOnly: Bool) throws -> RedisBackend {
        var options = RedisBackend.Options()
        options.readOnly = readOnly
        options.password = ProcessInfo.processInfo.environment["CABINET_REDIS_PASSWORD"]
        return try RedisBackend(url: url, options: options)
    }

    /// The backend of an existing store at `location`, for reading it.
    static func source(_ location: String) throws -> any StorageBackend {
        if isRedis(location) { return try redis(location, readOnly: true) }
        var reading = TokyoCabinetBackend.Options()
        reading.readOnly = true
        return try TokyoCabinetBackend(directory: location, options: reading)
    }

    /// The backend of a store to write at `location` (a directory is created if missing).
    static func target(_ location: String) throws -> any StorageBackend {
        isRedis(location) ? try redis(location, readOnly: false) : try TokyoCabinetBackend(directory: location)
    }
}
