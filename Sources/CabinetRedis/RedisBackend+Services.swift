import CabinetStorage

/// The journal, format marker and catalog are plain string keys beside the
/// tables (`{store}/format`, `{store}/catalog`, `{store}/journal`); a `SET`
/// replaces a value whole, and it is as durable as the server's AOF setting makes it.
extension RedisBackend: StoreServices {
    /// Whether the backend was opened with ``Options/readOnly``. There is no
    /// writer's lock: several processes may write one Redis store, each save
    /// checked against the others' (see ``RedisBackend``).
    public var isReadOnly: Bool { session.readOnly }

    /// Runs `body`. Each command is atomic on the server and each save one
    /// `MULTI`/`EXEC`, so a single read never sees half a save; a read made of
    /// several commands may see the saves other processes commit between them.
    public func withCommittedState<R>(_ body: () throws -> R) throws -> R { try body() }

    /// Runs `body`: a save is one `MULTI`/`EXEC`, which readers elsewhere see whole.
    public func withExclusiveCommit<R>(_ body: () throws -> R) throws -> R { try body() }

    /// `false`: a save across several tables is one `MULTI`/`EXEC` (`GroupCommittingTable`), all or nothing without a journal.
    public var needsJournal: Bool { false }

    public var journalLocation: String { path + " " + keys.journal }

    public func writeJournal(_ bytes: [UInt8]) throws {
        try session.checkWritable()
        try session.call(RedisCommand("SET", keys.journal, bytes: bytes), operation: "write the journal")
    }

    public func readJournal() throws -> [UInt8]? {
        try RedisReply.optionalString(session.call(RedisCommand("GET", keys.journal), operation: "read the journal"),
                                      of: "GET of the journal", at: journalLocation)
    }

    public func removeJournal() throws {
        try session.checkWritable()
        try session.call(RedisCommand("DEL", keys.journal), operation: "remove the journal")
    }

    public var formatMarkerLocation: String { path + " " + keys.formatMarker }

    public func readFormatMarker() throws -> String? {
        // A reply of another type is not "no marker": that would read a checksummed store as plain.
        try RedisReply.optionalString(session.call(RedisCommand("GET", keys.formatMarker), operation: "read the format marker"),
                                      of: "GET of the format marker", at: formatMarkerLocation).map { String(decoding: $0, as: UTF8.self) }
    }

    public func writeFormatMarker(_ text: String) throws {
        try session.checkWritable()
        try session.call(RedisCommand("SET", keys.formatMarker, text), operation: "write the format marker")
    }

    public func readCatalog() throws -> StoreCatalog? {
        let bytes = try RedisReply.optionalString(session.call(RedisCommand("GET", keys.catalog), operation: "read the catalog"),
                                                  of: "GET of the catalog", at: path + " " + keys.catalog)
        lastCatalog = .some(bytes)
        return try bytes.map { try StoreCatalog(encoded: $0, file: path + " " + keys.catalog) }
    }

    /// Replaces the catalog if it is still the one this backend last read or
    /// wrote (`WATCH`, compare, `MULTI`/`EXEC`): two processes registering
    /// classes at once must not drop each other's (or take the same class ID).
    /// The loser throws `CabinetError.Code.saveConflict`: reopen the store and register again.
    public func writeCatalog(_ catalog: StoreCatalog) throws {
        try session.checkWritable()
        let encoded = catalog.encoded
        let conflict = CabinetError.saveConflict(path: path, reason: "another process changed the store's catalog (registered a class) since this one read it; reopen the store and register again")
        try session.withConnection { connection in
            let watched = try connection.send([RedisCommand("WATCH", keys.catalog), RedisCommand("GET", keys.catalog)], operation: "write the catalog", transaction: true)
            if let message = watched.lazy.compactMap(\.errorMessage).first { throw session.serverError(message, operation: "write the catalog") }
            if let expected = lastCatalog, watched[1].bytes != expected {
                _ = try? connection.send([RedisCommand("UNWATCH")], operation: "write the catalog")
                throw conflict
            }
            let replies = try connection.send([RedisCommand("MULTI"), RedisCommand("SET", keys.catalog, bytes: encoded),
                                               RedisCommand("EXEC")], operation: "write the catalog", transaction: true)
            if let message = replies.lazy.compactMap(\.errorMessage).first { throw session.serverError(message, operation: "write the catalog") }
            guard case .array? = replies.last else { throw conflict }
        }
        lastCatalog = .some(encoded)
    }

    /// Always empty: a save is applied whole by `EXEC` or not at all, and an
    /// interrupted restore's copy expires by itself (docs/FORMAT.md).
    public func pendingRecovery() throws -> [PendingRecovery] { [] }
}
