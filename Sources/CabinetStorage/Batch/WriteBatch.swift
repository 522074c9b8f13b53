/// Everything one save changes, across every table it touches: for each
/// table, keys → new bytes or removal (``TableChanges``). The layer above
/// builds it; a backend commits it all or nothing (``StorageBackend/commit(_:)``);
/// and the committed batch is the change that observers and sync are handed.
///
/// ```swift
/// var batch = WriteBatch()
/// let songs = batch.table(named: "Song")
/// batch.set(record, forKey: rowKey, inTable: songs)
/// batch.set(nil, forKey: oldRowKey, inTable: songs)        // a removal
/// batch.set(Array("b".utf8), forKey: Array("mix".utf8), inTable: "NamedBuffers")
/// try backend.commit(batch)
/// ```
///
/// Tables appear in the order they were first changed, and within a table
/// keys in the order of their first change; a key set twice keeps its last
/// value. Committing the same batch twice leaves the same tables as once: a
/// batch says what the keys hold, not how to get there, so a journal of it
/// can be replayed after a crash whatever part of it was applied.
///
/// Its bytes (``encoded()``) are the save journal's format (docs/FORMAT.md,
/// "Save journal"), so a batch can be kept in a file, or sent to another machine, and read back
/// with ``init(decoding:location:)``.
public struct WriteBatch: Sendable {
    /// The tables changed, in the order of their first change.
    public private(set) var tableNames: [String] = []
    private var tables: [TableChanges] = []
    private var positions: [String: Int] = [:]
    /// The tables the batch adds to the store's catalog (``StoreCatalog``),
    /// name → tag: a new class's table with its class ID, a store's first
    /// named buffers. They are committed with the batch's changes, all or
    /// nothing, so a batch that makes a table, sent to another store, makes it there too.
    public private(set) var catalogAdditions: [String: UInt8?] = [:]
    /// How durable the commit must be when it returns (``CommitDurability``):
    /// as the backend was opened unless set.
    ///
    /// ```swift
    /// var batch = WriteBatch()
    /// batch.set(record, forKey: rowKey, inTable: "Payment")
    /// batch.durability = .flushed
    /// try backend.commit(batch)       // returns once the batch is on the disk
    /// ```
    /// Not part of the batch's bytes (``encoded()``): a journal replayed, or
    /// sent to another store, commits at the level its committer asks for.
    public var durability = CommitDurability.asOpened

    public init() {}

    /// Whether the batch changes nothing: no key of any table, and nothing in the catalog.
    public var isEmpty: Bool { catalogAdditions.isEmpty && tables.allSatisfy(\.isEmpty) }

    /// Whether the batch changes no key of any table (it may still add to the catalog).
    public var changesNoTable: Bool { tables.allSatisfy(\.isEmpty) }

    /// Lists table `name` with `tag` in the store's catalog when the batch commits.
    ///
    /// ```swift
    /// var batch = WriteBatch()
    /// batch.set(metadata, forKey: rowOne, inTable: "Song")
    /// batch.addToCatalog(table: "Song", tag: 3)      // the class ID, taken with its first row
    /// try backend.commit(batch)
    /// ```
    public mutating func addToCatalog(table name: String, tag: UInt8?) {
        catalogAdditions[name] = .some(tag)
    }

    /// How many keys the batch changes, in all its tables.
    public var count: Int { tables.reduce(0) { $0 + $1.count } }

    /// The bytes of every key and value held.
    public var byteCount: Int { tables.reduce(0) { $0 + $1.byteCount } }

    /// The place of table `name` in the batch, added (empty) if it is not there:
    /// give it to `set(_:forKey:inTable:isNew:)` to change many keys without
    /// looking the name up each time.
    public mutating func table(named name: String) -> Int {
        if let known = positions[name] { return known }
        let position = tableNames.count
        positions[name] = position
        tableNames.append(name)
        tables.append(TableChanges())
        return position
    }

    /// Sets `key` of the table at `position` (from ``table(named:)``) to
    /// `value`, or removes it when `value` is `nil`; `isNew` says the table
    /// did not have the key before (see ``TableChanges/set(_:to:isNew:)``).
    @inline(__always)
    public mutating func set(_ value: UnsafeRawBufferPointer?, forKey key: UnsafeRawBufferPointer, inTable position: Int, isNew: Bool = false) {
        tables[position].set(key, to: value, isNew: isNew)
    }

    /// Sets `key` of table `name` to `value`, or removes it when `value` is `nil`.
    public mutating func set(_ value: UnsafeRawBufferPointer?, forKey key: UnsafeRawBufferPointer, inTable name: String) {
        set(value, forKey: key, inTable: table(named: name))
    }

    /// `set(_:forKey:inTable:)` (by name) for arrays.
    public mutating func set(_ value: [UInt8]?, forKey key: [UInt8], inTable name: String) {
        let position = table(named: name)
        tables[position].set(key, to: value)
    }

    /// The changes to table `name`; `nil` if the batch has none.
    public func changes(ofTable name: String) -> TableChanges? {
        positions[name].map { tables[$0] }.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Calls `body` with each table that has changes and its changes, in the
    /// order of the tables' first change.
    public func forEachTable(_ body: (_ name: String, _ changes: TableChanges) throws -> Void) rethrows {
        for (name, changes) in zip(tableNames, tables) where !changes.isEmpty { try body(name, changes) }
    }

    /// Adds `changes` to table `name`: taken as they are if the batch has no
    /// change there yet (a writer that built one table's changes apart, as a
    /// save builds each class's records), else each after the table's own.
    ///
    /// ```swift
    /// var songs = TableChanges(indexed: false)    // each row once
    /// songs.set(rowKey, to: record)
    /// batch.add(songs, toTable: "Song")
    /// ```
    public mutating func add(_ changes: TableChanges, toTable name: String) {
        let position = table(named: name)
        guard !tables[position].isEmpty else {
            tables[position] = changes
            return
        }
        changes.forEachChange { key, value, isNew in
            tables[position].set(key, to: value, isNew: isNew)
            return true
        }
    }

    /// Adds every change of `other` after this batch's own, table by table
    /// (``add(_:toTable:)``): a key both change takes `other`'s value, and so
    /// does a table both add to the catalog (``catalogAdditions``: the commit
    /// checks the tag it ends with against the store's catalog, and refuses a
    /// clash with nothing written). The merged batch asks for the stronger
    /// ``durability`` of the two.
    public mutating func append(contentsOf other: WriteBatch) {
        durability = max(durability, other.durability)
        other.forEachTable { name, changes in add(changes, toTable: name) }
        for (name, tag) in other.catalogAdditions { catalogAdditions[name] = .some(tag) }
    }
}
