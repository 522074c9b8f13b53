// What a kill-point scenario is, and the directories it works in.
import Cabinet
import Logging
import Foundation

/// The directories of one scenario run: `dir/store` is the store, `dir/backup`
/// a backup (written by the backup scenarios, read by the restore scenarios).
struct Work {
    let dir: String
    var store: String { dir + "/store" }
    var backup: String { dir + "/backup" }
}

/// One operation that writes, run under the shim by `run`, with the state
/// before it made by `prepare` and read back by `dump`.
protocol Scenario {
    /// The name on the command line and in the test's table.
    var name: String { get }
    /// The classes the dump registers (in this order).
    var classes: [StoredObject.Type] { get }
    /// The named buffers the dump prints.
    var bufferNames: [String] { get }
    /// A store that opens with no objects counts as no store (the first save).
    var emptyIsAbsent: Bool { get }
    /// How the scenario's store is opened (bucket count, durability).
    var tuning: TokyoCabinetBackend.Options { get }
    /// Makes the state before the operation.
    func prepare(_ work: Work) throws
    /// The operation: arms the shim (``Steps/arm()``) where the operation starts,
    /// and runs each thing that can fail as a step.
    func run(_ work: Work, _ steps: Steps) throws
    /// Lines added to the dump while the store is open (upgrade: versions).
    func dumpExtra(_ store: ObjectStore) throws -> [String]
    /// Lines added to the dump after the store is closed (backup: the copy).
    func dumpAfter(_ work: Work, source: [String]) throws -> [String]
}

extension Scenario {
    var bufferNames: [String] { [] }
    var emptyIsAbsent: Bool { false }
    var tuning: TokyoCabinetBackend.Options { TokyoCabinetBackend.Options() }
    func dumpExtra(_ store: ObjectStore) throws -> [String] { [] }
    func dumpAfter(_ work: Work, source: [String]) throws -> [String] { [] }

    /// Opens the scenario's store with its classes registered.
    func open(_ path: String) throws -> ObjectStore {
        let store = try ObjectStore(backend: TokyoCabinetBackend(directory: path, options: tuning), logger: childLogger)
        store.undoManager.isEnabled = false
        for type in classes { try store.register(type) }
        return store
    }
}

/// Every scenario, by name.
var scenarios: [any Scenario] {
    [SaveOne(), SaveMulti(), SaveGrow(), SaveSynced(), SaveSynced(flushedSave: true), SaveFirst(), SaveNewClass(), SaveList(), SaveIndexed(),
     Compact(), BackupScenario(), RestoreScenario(), Upgrade(), Replay(), PoolGroup(), PoolList(), ExportScenario(), ImportScenario(),
     FlushAfterJournal(), FlushEarlierOpen(), GrowAfterFlushed()]
}

/// The stores of the kill-point child log warnings and errors only: the harness
/// compares what the child prints, and a journal finished at open (a notice)
/// is expected after a kill, not a difference between old and new.
var childLogger: Logger {
    var logger = ObjectStore.defaultLogger
    logger.logLevel = .warning
    return logger
}
