import CabinetStorage
import Logging

/// What every context of a pool is made from: the pool's open backend and the
/// classes its root store registered, with their tables, all opened once when
/// the pool was made (so no table is opened, and no catalog written, while
/// blocks run on several threads).
///
/// `@unchecked Sendable`: nothing in it changes after the pool's initializer,
/// and the tables are only read from several threads at once, which the
/// backend allows (``ConcurrentReadingBackend``) or the pool serializes.
final class ContextTemplate: @unchecked Sendable {
    struct RegisteredClass {
        let type: StoredObject.Type
        let name: String
        let table: any StorageTable
        let writesLists: Bool
        let indexes: ClassIndexes?
    }

    /// The store that opened the backend, registered the classes and closes it all at the end.
    let root: ObjectStore
    let backend: any StorageBackend
    let options: ObjectStore.Options
    let recordFormat: RecordFormat
    let catalog: StoreCatalog?
    /// The root store's logger: every context logs where the pool does.
    let logger: Logger
    let classes: [RegisteredClass]
    /// The largest class ID of `classes`, for a context to size its tables once.
    let largestClassID: UInt8
    /// The tables holding no class (out-of-line lists, named buffers) that exist
    /// when the pool is made, opened once; one made later is found as the root finds it.
    /// A write block that changes a list looks the lists table up at every save, and
    /// finding it in the backend takes the backend's lock and reads the catalog each time.
    let auxiliaryTables: [String: any StorageTable]

    init(root: ObjectStore) {
        self.root = root
        backend = root.backend
        options = root.options
        recordFormat = root.recordFormat
        logger = root.logger
        classes = root.entriesByName.keys.sorted().compactMap { name in
            root.entriesByName[name].map { RegisteredClass(type: $0.type, name: name, table: $0.table, writesLists: $0.writesLists, indexes: $0.indexes) }
        }
        largestClassID = root.entriesByName.values.map(\.metadata.classID).max() ?? 0
        // Found as the root store would find them (and not at all if that throws: a
        // context then looks as the root does, and reports what it finds).
        auxiliaryTables = ObjectStore.auxiliaryTableNames.reduce(into: [:]) { tables, name in
            if let table = try? root.auxiliaryTable(named: name, creating: false) { tables[name] = table }
        }
        // After the lookup above, which catalogs a table the catalog did not list yet.
        catalog = root.catalog
    }
}
