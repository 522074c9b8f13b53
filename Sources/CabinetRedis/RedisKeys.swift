/// The names of a store's keys (docs/FORMAT.md, "Redis"). Every key starts
/// with the store's name in braces, the cluster hash tag, so the whole store
/// is in one slot of a Redis Cluster and a save is one `MULTI`/`EXEC`.
/// Tables are `{store}:NAME`; what the store keeps beside them has a `/`
/// after the tag, which no table name can hold, so the two never collide.
struct RedisKeys {
    let store: String
    let tag: String

    init(store: String) {
        self.store = store
        tag = "{" + store + "}"
    }

    /// A table's records: a hash, field = the record's key, value = its bytes.
    func table(_ name: String) -> String { tag + ":" + name }
    /// An ordered table's keys in order: a sorted set of score 0, members = the keys (`ZRANGEBYLEX`).
    func order(_ name: String) -> String { tag + "/order:" + name }
    /// Which tables exist: a hash, field = table name, value = ``TableKind``.
    var tables: String { tag + "/tables" }
    var formatMarker: String { tag + "/format" }
    var catalog: String { tag + "/catalog" }
    var journal: String { tag + "/journal" }
    /// The count of committed saves, incremented by each (the optimistic lock's `WATCH`).
    var version: String { tag + "/version" }
    /// The last ``RedisCommitLog/capacity`` saves, newest first: what each changed.
    var log: String { tag + "/log" }
    /// The pub/sub channel each save announces its new version on.
    var saves: String { tag + "/saves" }
    /// The prefix of a restore's copy, renamed into place when it is complete.
    var restorePrefix: String { tag + "/restore/" }
    /// The prefix of a big save's staging, renamed over its table at the commit (``RedisStagedWrite``).
    var stagingPrefix: String { tag + "/staging/" }
    /// Every key of the store, for `SCAN MATCH` (the name holds no pattern characters).
    var pattern: String { tag + "*" }

    enum TableKind: String {
        case hash, ordered
    }
}
