import Cabinet
import Logging
import ServiceLifecycle

/// The `StorePool`'s lifetime as a service beside the Hummingbird app: it waits
/// for graceful shutdown (SIGTERM or SIGINT), then closes the pool, which waits
/// for the blocks in flight and finishes a save left in its journal. The group
/// shuts the app down first (see `ServiceOptions.run`), so no request is left
/// to reach a closed pool.
struct StorePoolService: Service {
    let pool: StorePool
    let logger: Logger

    func run() async throws {
        // Returns when graceful shutdown begins; throws if the group is cancelled
        // instead (the app failed). The pool is closed either way.
        try? await gracefulShutdown()
        try await pool.close()
        logger.info("closed the store pool")
    }
}
