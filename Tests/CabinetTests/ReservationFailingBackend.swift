import Cabinet
import CabinetRedis
import CabinetStorage
import Foundation

/// A Redis backend whose row reservations fail (the first `failingFirst` of
/// them, or every one), as when the server cannot be reached at the moment of
/// an insert; everything else goes to the server.
final class ReservationFailingBackend: ForwardingBackend, OtherWritersBackend, @unchecked Sendable {
    // @unchecked: the counts are read and written under `lock`.
    private let redis: RedisBackend
    private let failing: Int?
    private let lock = NSLock()
    private var tries = 0, refused = 0
    /// How many reservations were refused so far.
    var refusals: Int { lock.withLock { refused } }

    init(_ redis: RedisBackend, failingFirst count: Int? = nil) {
        self.redis = redis
        failing = count
        super.init(redis)
    }

    var othersHaveSaved: Bool { redis.othersHaveSaved }
    func takeOthersSaves() throws -> [OthersSave] { try redis.takeOthersSaves() }
    func keepConflicting(_ stale: [String: Set<[UInt8]>?]) { redis.keepConflicting(stale) }
    func observeOthersSaves(_ handler: (@Sendable (OthersSave) -> Void)?) { redis.observeOthersSaves(handler) }

    func updateRecord(inTable name: String, forKey key: [UInt8], _ transform: ([UInt8]?) throws -> [UInt8]) throws -> [UInt8] {
        let fails = lock.withLock {
            tries += 1
            let fails = failing.map { tries <= $0 } ?? true
            if fails { refused += 1 }
            return fails
        }
        if fails { throw CabinetError.backendFailure(RecordLocation(file: path), operation: "reserve rows", code: 0, message: "connection refused (test)") }
        return try redis.updateRecord(inTable: name, forKey: key, transform)
    }
}
