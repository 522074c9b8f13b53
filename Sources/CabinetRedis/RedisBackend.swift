import CabinetStorage

/// A store kept on a Redis server (or a Redis Cluster), for services that
/// outgrow one machine: the same `StoredObject` classes, the same
/// `ObjectStore` API, several processes on several machines on one store.
///
/// ```swift
/// let backend = try RedisBackend(host: "127.0.0.1", port: 6379, store: "music")
/// let store = try ObjectStore(backend: backend)
/// try store.register(Song.self, Playlist.self)
/// ```
/// Each table is a hash `{music}:Song` (field: the record's key, value: the
/// same bytes a Tokyo Cabinet file holds, checksums included); every key
/// carries the store's name as a hash tag, so a store is on one cluster slot
/// and a save is one `MULTI`/`EXEC` across its classes: all or nothing,
/// without a journal. See docs/FORMAT.md, "Redis".
///
/// **Several processes.** There is no writer's lock: saves are optimistic.
/// A save watches the store's version; if other processes saved since this
/// one last did (or opened), it reads what they changed from the store's log,
/// and only if they changed a record this save changes too (or an index it
/// changes) does it throw `CabinetError.Code.saveConflict`,
/// with nothing written and the changes still pending. New objects take their
/// rows from ranges each process reserves on the server
/// (`updateRecord(inTable:forKey:_:)` on the class's metadata row), so
/// processes inserting into one class at once never share a row or conflict.
///
/// **Failures** (server down, connection dropped, a timeout, `maxmemory`,
/// a refused password) throw `CabinetError.Code.backendFailure` in the
/// `CabinetError.Underlying.Domain.redis` domain; nothing of a failed save
/// is written, and the next call connects again. The password never appears
/// in ``path``, messages or logs.
public final class RedisBackend: StorageBackend {
    /// How to reach the server and how long to wait for it.
    public struct Options: Sendable {
        /// The password for `AUTH` (a server with `requirepass`), unless the URL has one. Never printed.
        public var password: String?
        /// The ACL user for `AUTH`, if not the default one.
        public var username: String?
        /// The database number (`SELECT`); 0 on a cluster.
        public var database = 0
        /// Opens the store for reading only: every write throws `CabinetError.Code.readOnly`.
        public var readOnly = false
        /// How long connecting may take.
        public var connectTimeout: Duration = .seconds(5)
        /// How long one exchange with the server may take before it counts as a failure.
        public var commandTimeout: Duration = .seconds(30)
        /// From how many changes to one table in one save on the changes go to
        /// the server while the save is still being made, into a key of their
        /// own that the commit renames over the table (when the table is smaller
        /// than the save: a first save of a class, an import). A save of a
        /// million records so takes about the longer of the client's and the
        /// server's time instead of their sum (docs/FORMAT.md, "Big saves").
        /// `Int.max`: never.
        ///
        /// ```swift
        /// var options = RedisBackend.Options(); options.stagingThreshold = .max
        /// ```
        public var stagingThreshold = 4096

        public init() {}
    }

    /// `redis://host:port/database/store`, without credentials: for messages and `cabinet info`.
    public let path: String
    /// The server, database and store.
    public let address: RedisAddress
    let session: RedisSession
    /// Hears the saves of other processes (`OtherWritersBackend`).
    let subscriber: RedisSubscriber
    /// Commits batches (see ``commit(_:)``); a batch's catalog additions go in its `MULTI`.
    let commits = JournaledCommit(writesCatalog: false)
    private var tables: [String: RedisTable] = [:]
    /// The catalog's bytes as this backend last read or wrote them (`.some(nil)`:
    /// there was none; `nil`: not read yet), for the compare-and-set of ``writeCatalog(_:)``.
    var lastCatalog: [UInt8]??

    /// Connects to the store `store` on the server at `host`:`port`.
    ///
    /// ```swift
    /// var options = RedisBackend.Options(); options.password = secret
    /// let backend = try RedisBackend(host: "10.0.0.5", port: 6379, store: "music", options: options)
    /// ```
    /// Throws `CabinetError.Code.backendFailure` if the server cannot be reached
    /// or refuses the password, `CabinetError.Code.notAStore` for a bad name.
    public convenience init(host: String, port: Int = 6379, store: String, options: Options = Options()) throws {
        try self.init(address: RedisAddress(host: host, port: port, database: options.database,
                                            username: options.username, password: options.password, store: store),
                      options: options)
    }

    /// Connects to the store at `url`: `redis://[[user]:password@]host[:port][/database][/store]`;
    /// `store` names it when the URL does not.
    ///
    /// ```swift
    /// let backend = try RedisBackend(url: "redis://127.0.0.1:6379/0", store: "music")
    /// let same = try RedisBackend(url: "redis://127.0.0.1:6379/0/music")
    /// ```
    public convenience init(url: String, store: String? = nil, options: Options = Options()) throws {
        var address = try RedisAddress(url: url, store: store)
        if address.password == nil { address.password = options.password }
        if address.username == nil { address.username = options.username }
        try self.init(address: address, options: options)
    }

    /// Connects to the store at `address`.
    public init(address: RedisAddress, options: Options = Options()) throws {
        self.address = address
        path = address.description
        session = RedisSession(address: address, connectTimeout: options.connectTimeout, commandTimeout: options.commandTimeout,
                               readOnly: options.readOnly, stagingThreshold: options.stagingThreshold)
        subscriber = RedisSubscriber(session: session, address: address, connectTimeout: options.connectTimeout)
        // Connects (and authenticates) now, so a wrong address or password fails here; listens
        // for other processes' saves first, so that none after the version read goes unheard.
        try subscriber.subscribe()
        let version = try session.currentVersion()
        session.knownVersion = version
        session.takenVersion = version
        subscriber.start()
    }

    deinit {
        subscriber.stop()
        session.disconnectAll()
    }

    public var services: any StoreServices { self }

    var keys: RedisKeys { session.keys }

    // MARK: Tables

    public func openTable(named name: String) throws -> any StorageTable {
        try open(name, ordered: false)
    }

    public func openOrderedTable(named name: String) throws -> any OrderedStorageTable {
        try open(name, ordered: true) as! RedisOrderedTable
    }

    private func open(_ name: String, ordered: Bool) throws -> RedisTable {
        try session.checkOpen()
        if let table = tables[name] {
            if ordered && !(table is RedisOrderedTable) { throw notOrdered(name) }
            return table
        }
        let listed = try RedisReply.optionalString(session.call(RedisCommand("HGET", keys.tables, name), operation: "open table"),
                                                   of: "HGET of the table list", at: path)
        var kind = listed.flatMap { RedisKeys.TableKind(rawValue: String(decoding: $0, as: UTF8.self)) }
        if listed != nil && kind == nil {
            throw CabinetError.notADatabase(RecordLocation(file: location(ofTable: name)),
                                            reason: "the store's table list names it with an unknown kind '\(String(decoding: listed!, as: UTF8.self))'")
        }
        if kind == nil {
            guard !session.readOnly else {
                throw CabinetError.readOnly(path: path, reason: "the table '\(name)' does not exist, and opening it would create it")
            }
            kind = ordered ? .ordered : .hash
            // HSETNX: two processes creating it at once agree on its kind.
            try session.call(RedisCommand("HSETNX", keys.tables, name, kind!.rawValue), operation: "create table")
            kind = try RedisReply.optionalString(session.call(RedisCommand("HGET", keys.tables, name), operation: "open table"),
                                                 of: "HGET of the table list", at: path)
                .flatMap { RedisKeys.TableKind(rawValue: String(decoding: $0, as: UTF8.self)) } ?? kind
        }
        if ordered && kind != .ordered { throw notOrdered(name) }
        try checkType(of: keys.table(name), expected: "hash", table: name)
        if kind == .ordered { try checkType(of: keys.order(name), expected: "zset", table: name) }
        let table = kind == .ordered ? RedisOrderedTable(session: session, name: name, path: location(ofTable: name))
                                     : RedisTable(session: session, name: name, path: location(ofTable: name))
        tables[name] = table
        return table
    }

    private func notOrdered(_ name: String) -> CabinetError {
        CabinetError.notADatabase(RecordLocation(file: location(ofTable: name)), reason: "it is a table that keeps no order, where an ordered one was expected")
    }

    /// A key in a table's place that is not of the table's type is not the table.
    private func checkType(of key: String, expected: String, table: String) throws {
        guard case .status(let type) = try session.call(RedisCommand("TYPE", key), operation: "open table"),
              type == "none" || type == expected else {
            throw CabinetError.notADatabase(RecordLocation(file: location(ofTable: table)),
                                            reason: "the key \(key) is not a \(expected)")
        }
    }

    public func removeTable(named name: String) throws {
        try session.checkWritable()
        tables.removeValue(forKey: name)?.close()
        var entry = RedisCommitLog.Entry(token: RedisSession.newToken())
        entry.touchWhole(name)
        try session.commit([], extra: [RedisCommand("DEL", keys.table(name)), RedisCommand("DEL", keys.order(name)),
                                       RedisCommand("HDEL", keys.tables, name)], logged: entry)
    }

    public func tableNames() throws -> [String] {
        let names = try RedisReply.stringList(session.call(RedisCommand("HKEYS", keys.tables), operation: "list tables"),
                                              of: "HKEYS of the table list", at: path)
        return names.map { String(decoding: $0, as: UTF8.self) }.sorted()
    }

    public func hasTable(named name: String) throws -> Bool {
        try RedisReply.count(session.call(RedisCommand("HEXISTS", keys.tables, name), operation: "look for table"),
                             of: "HEXISTS of the table list", at: path) == 1
    }

    public func location(ofTable name: String) -> String { path + "/" + name }

    public func close() {
        for table in tables.values { table.close() }
        tables = [:]
        session.isClosed = true
        subscriber.stop()
        session.disconnectAll()
    }

    /// The tables handed out, closed: for ``replaceContents(with:formatMarker:)``.
    func closeTables() {
        for table in tables.values { table.close() }
        tables = [:]
    }
}

extension RedisBackend {
    /// Every table's changes in one `MULTI`/`EXEC` (its tables commit together),
    /// big ones staged first (`RedisStagedWrite`): all or nothing, no journal.
    /// What the batch adds to the catalog is merged into the catalog as it is
    /// at the `EXEC` (watched), in the same `MULTI`: two processes that register
    /// different classes at once both get them in; if they gave one class ID to
    /// two classes, the second throws `CabinetError.Code.saveConflict` with nothing written.
    ///
    /// A flushed batch (``/CabinetStorage/CommitDurability/flushed``) returns once the server
    /// has it in its append-only file, fsynced: confirmed by `WAITAOF` (Redis
    /// 7.2 and later), or promised by a server with `appendonly yes` and
    /// `appendfsync always`. A server that can do neither makes it throw
    /// `CabinetError.Code.durabilityUnavailable` before anything is sent.
    public func commit(_ batch: WriteBatch) throws {
        if batch.durability == .flushed { session.flush = try session.flushConfirmation() }
        defer { session.flush = nil }
        guard !batch.catalogAdditions.isEmpty else { return try commits.commit(batch, to: self) }
        session.catalogAdditions = batch.catalogAdditions
        session.committedCatalog = nil
        defer { session.catalogAdditions = [:] }
        // Also when the commit throws: durabilityUnconfirmed comes after the EXEC wrote the catalog.
        defer { if let written = session.committedCatalog { lastCatalog = .some(written) } }
        if batch.changesNoTable { try session.commit([]) } else { try commits.commit(batch, to: self) }
    }

    /// `false`: a Redis commit is never left half-applied.
    public var hasUnfinishedCommit: Bool { false }

    @discardableResult
    public func finishUnfinishedCommit() throws -> Int? { nil }
}

extension RedisBackend: DurabilityChecking {
    /// Asks the server as a flushed commit does (`RedisSession.flushConfirmation()`), sending no write.
    package func checkDurability(_ level: CommitDurability) throws {
        if level == .flushed { _ = try session.flushConfirmation() }
    }
}

extension RedisBackend: OtherWritersBackend {
    /// Whether another process's save was announced since ``takeOthersSaves()`` last looked.
    public var othersHaveSaved: Bool { subscriber.othersHaveSaved || session.isTakingOthersSaves }

    /// The saves of other processes this open has not taken in, from the store's
    /// log; see `OtherWritersBackend.takeOthersSaves()`.
    public func takeOthersSaves() throws -> [OthersSave] {
        subscriber.lower()
        do {
            return try session.takeOthersSaves().map { OthersSave(tables: $0.tables, wholeStore: $0.wholeStore) }
        } catch {
            subscriber.raise()
            throw error
        }
    }

    public func keepConflicting(_ stale: [String: Set<[UInt8]>?]) {
        session.keepConflicting(stale)
    }

    public func observeOthersSaves(_ handler: (@Sendable (OthersSave) -> Void)?) {
        subscriber.observe(handler)
    }

    /// Changes one record by compare-and-set, announced as a save of it; see
    /// `OtherWritersBackend.updateRecord(inTable:forKey:_:)` and docs/FORMAT.md.
    public func updateRecord(inTable name: String, forKey key: [UInt8],
                             _ transform: ([UInt8]?) throws -> [UInt8]) throws -> [UInt8] {
        try session.updateRecord(table: name, field: key, transform)
    }
}

extension RedisBackend: ConcurrentReadingBackend {
    /// `true`: each read takes a connection of its own, and a table's
    /// transaction state is only changed by the writer, while no one reads.
    public var allowsConcurrentReads: Bool { true }
}

extension RedisBackend.Options: CustomReflectable {
    /// What `dump`, `print` and debuggers show: the password as `***`.
    public var customMirror: Mirror {
        Mirror(self, children: ["password": password == nil ? "nil" : "***", "username": username as Any, "database": database,
                                "readOnly": readOnly, "connectTimeout": connectTimeout, "commandTimeout": commandTimeout])
    }
}
