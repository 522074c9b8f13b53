import CabinetStorage

/// What one save changed, kept in the store's log list (newest first, the last
/// ``capacity`` saves) so that a process whose save finds the store's version
/// moved on can tell whether the saves it missed touched what it is about to
/// write (docs/FORMAT.md, "Redis").
///
/// Encoding, all lengths UInt32 big-endian:
/// `token[16]`, then per table: name length, name, scope (0: the keys that
/// follow; 1: the whole table; 2: the whole store; 3: the keys that follow, in
/// a table whose saves conflict as whole tables: an index), key count, each
/// key's length and bytes. The log is read as untrusted bytes: anything that does
/// not decode is taken as "touched everything", a conflict, never a trap.
struct RedisCommitLog {
    /// How many saves the log remembers; a process more saves behind has a conflict.
    static let capacity = 1000
    /// A table that changes more keys than this is logged whole.
    static let keysPerTable = 4096

    enum Scope: UInt8 {
        case keys = 0, wholeTable = 1, wholeStore = 2
        /// An index's keys: listed for live observations (which rows' entries
        /// changed), yet a save of the same index by another process is a conflict
        /// whatever keys it changed (a posting block's range depends on its
        /// neighbours). A reader older than this scope refuses the entry as
        /// undecodable: a conflict, as it was before, never a missed one.
        case keysOfWholeTable = 3
    }

    struct Entry {
        var token: [UInt8]
        /// Table name → its changed keys, or `nil` for the whole table.
        var tables: [String: Set<[UInt8]>?] = [:]
        var wholeStore = false
        /// Tables whose keys are listed but whose saves conflict as whole tables (scope 3).
        var conflictsAsWhole: Set<String> = []

        init(token: [UInt8]) { self.token = token }

        /// Table `name` conflicts as a whole with any other save of it, its keys still listed.
        mutating func conflictAsWhole(_ name: String) { conflictsAsWhole.insert(name) }

        mutating func touch(_ table: String, keys: some Sequence<[UInt8]>, count: Int) {
            if count > RedisCommitLog.keysPerTable { tables[table] = .some(nil); return }
            if case .some(.none) = tables[table] { return }
            var set = tables[table].flatMap { $0 } ?? []
            set.formUnion(keys)
            tables[table] = set
        }

        mutating func touchWhole(_ table: String) { tables[table] = .some(nil) }

        /// Adds what `other` changed to what this entry records.
        mutating func merge(_ other: Entry) {
            if other.wholeStore { wholeStore = true }
            conflictsAsWhole.formUnion(other.conflictsAsWhole)
            for (name, keys) in other.tables {
                if let keys { touch(name, keys: keys, count: keys.count + ((tables[name] ?? nil)?.count ?? 0)) } else { touchWhole(name) }
            }
        }

        var encoded: [UInt8] {
            var out = token
            func append(_ value: Int) { withUnsafeBytes(of: UInt32(value).bigEndian) { out.append(contentsOf: $0) } }
            if wholeStore {
                append(0); out.append(Scope.wholeStore.rawValue); append(0)
                return out
            }
            for (name, keys) in tables.sorted(by: { $0.key < $1.key }) {
                let bytes = Array(name.utf8)
                append(bytes.count); out.append(contentsOf: bytes)
                guard let keys else { out.append(Scope.wholeTable.rawValue); append(0); continue }
                out.append((conflictsAsWhole.contains(name) ? Scope.keysOfWholeTable : .keys).rawValue); append(keys.count)
                for key in keys { append(key.count); out.append(contentsOf: key) }
            }
            return out
        }

        /// Decodes an entry; `nil` if the bytes are not one (damage: treat as everything).
        init?(decoding bytes: [UInt8]) {
            guard bytes.count >= 16 else { return nil }
            token = Array(bytes[0..<16])
            var at = 16
            func readLength() -> Int? {
                guard bytes.count - at >= 4 else { return nil }
                let value = bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) }
                at += 4
                return value
            }
            func readBytes(_ count: Int) -> [UInt8]? {
                guard count <= bytes.count - at else { return nil }
                defer { at += count }
                return Array(bytes[at..<at + count])
            }
            while at < bytes.count {
                guard let nameLength = readLength(), let name = readBytes(nameLength), at < bytes.count,
                      let scope = Scope(rawValue: bytes[at]) else { return nil }
                at += 1
                guard let count = readLength() else { return nil }
                switch scope {
                case .wholeStore: wholeStore = true
                case .wholeTable: tables[String(decoding: name, as: UTF8.self)] = .some(nil)
                case .keys, .keysOfWholeTable:
                    if scope == .keysOfWholeTable { conflictsAsWhole.insert(String(decoding: name, as: UTF8.self)) }
                    var keys = Set<[UInt8]>()
                    for _ in 0..<min(count, bytes.count) {
                        guard let length = readLength(), let key = readBytes(length) else { return nil }
                        keys.insert(key)
                    }
                    guard keys.count <= count else { return nil }
                    tables[String(decoding: name, as: UTF8.self)] = keys
                }
            }
        }

        /// The first place where this entry and `other` change the same thing, in
        /// words, or `nil` if they change nothing in common.
        func overlap(with other: Entry) -> String? {
            if wholeStore || other.wholeStore { return "it replaced or removed the whole store" }
            for (name, keys) in tables {
                guard let theirs = other.tables[name] else { continue }
                let asWhole = conflictsAsWhole.contains(name) || other.conflictsAsWhole.contains(name)
                guard let keys, let theirs, !asWhole else { return "both changed the table '\(name)'" }
                if let shared = keys.first(where: theirs.contains) {
                    return "both changed \(RedisCommitLog.describe(key: shared)) of '\(name)'"
                }
            }
            return nil
        }
    }

    /// A row key as "row N"; any other key as its bytes in hex.
    static func describe(key: [UInt8]) -> String {
        if key.count == 4 {
            let row = UInt32(key[0]) | UInt32(key[1]) << 8 | UInt32(key[2]) << 16 | UInt32(key[3]) << 24
            return "row \(row)"
        }
        return "key " + key.prefix(32).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
