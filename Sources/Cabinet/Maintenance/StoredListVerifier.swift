import CabinetStorage

/// The kinds of damage ``StoreVerifier`` reports in the `StoredLists` table.
extension StorageProblem.Kind {
    /// A key that is neither a list's root (6 bytes) nor a node's (22 bytes).
    public static let listKey = Self(rawValue: "listKey")
    /// A list's root or node record does not decode (checksum, layout, kind).
    public static let listUnreadable = Self(rawValue: "listUnreadable")
    /// A node that its parent (or the list's root) names is not stored.
    public static let listNodeMissing = Self(rawValue: "listNodeMissing")
    /// A count disagrees with what is below it: a root's with its root node,
    /// a parent's with its child, or the owner's record's with the root.
    public static let listCountMismatch = Self(rawValue: "listCountMismatch")
    /// A node named by more than one parent of its list (or by its own subtree).
    public static let listNodeShared = Self(rawValue: "listNodeShared")
    /// A tree deeper than any a save writes (`ListNode.maximumDepth`).
    public static let listTooDeep = Self(rawValue: "listTooDeep")
    /// A list's root whose owner row is gone, or no longer keeps that slot out of line.
    public static let listOrphanRoot = Self(rawValue: "listOrphanRoot")
    /// Node records that no list's root reaches.
    public static let listOrphanNodes = Self(rawValue: "listOrphanNodes")
}

/// Checks every out-of-line list of a store (`docs/FORMAT.md`, "Stored lists")
/// without the app's classes: each root and node decodes, counts add up, every
/// node is reached from its root exactly once within the depth a save can
/// write, each root's owner row exists and holds the list's marker for that
/// slot with the same count, and no node record is left that no root reaches.
///
/// Memory stays bounded by one list: a first scan of the table keeps only the
/// lists' scopes and a count of node records per scope; each list is then
/// walked from its root alone, and only a list whose scope holds more node
/// records than its walk reached is scanned for again, to name the orphans.
///
/// The lists' elements are not checked against their class: the root does not
/// record the element class, and without the app's classes the verifier reads
/// no references (dangling ones included) in any record.
enum StoredListVerifier {
    private typealias Owner = (name: String, table: any StorageTable)

    static func problems(in backend: any StorageBackend, format: RecordFormat) throws -> [StorageProblem] {
        guard try backend.hasTable(named: ListRecords.tableName) else { return [] }
        let table = try backend.openTable(named: ListRecords.tableName)
        let path = backend.location(ofTable: ListRecords.tableName)
        var problems: [StorageProblem] = []
        var roots = Set<ListScope>()
        var nodeRecords: [ListScope: Int] = [:]
        try table.forEach { key, _ in
            switch key.count {
            case 6: roots.insert(scope(of: key))
            case 22: nodeRecords[scope(of: key), default: 0] += 1
            default:
                problems.append(StorageProblem(location: RecordLocation(file: path), reason: "a key of \(key.count) bytes; a list's root has 6, a node 22. Nothing reads it: restore the store from a backup if lists are missing", kind: .listKey))
            }
            return true
        }
        let owners = try ownerTables(backend)
        var partlyReached: [ListScope: Set<ListNodeID>] = [:]
        for scope in roots.union(nodeRecords.keys).sorted(by: { ($0.classID, $0.row, $0.slot) < ($1.classID, $1.row, $1.slot) }) {
            var walk = ListWalk(scope: scope, table: table, format: format, path: path, owner: owners[scope.classID]?.name)
            if roots.contains(scope) {
                let count = walk.checkTree()
                walk.checkOwner(owners[scope.classID], rootCount: count)
            }
            problems += walk.problems
            if (nodeRecords[scope] ?? 0) > walk.reached.count { partlyReached[scope] = walk.reached }
        }
        if !partlyReached.isEmpty {
            problems += try orphanNodes(in: table, path: path, reached: partlyReached, owners: owners)
        }
        return problems
    }

    /// Each class's name and table by its class ID, read from the metadata rows.
    private static func ownerTables(_ backend: any StorageBackend) throws -> [UInt8: Owner] {
        var owners: [UInt8: Owner] = [:]
        for name in try backend.tableNames() where !ObjectStore.isAuxiliaryTable(name) {
            // A class file that does not open or has no metadata is reported by the table checks.
            guard let table = try? backend.openTable(named: name),
                  let metadata = try? ClassRegistrar.readMetadata(of: table, className: name) else { continue }
            owners[metadata.classID] = (name, table)
        }
        return owners
    }

    /// The node records of `reached`'s scopes that their walks did not reach, one problem per list.
    private static func orphanNodes(in table: any StorageTable, path: String, reached: [ListScope: Set<ListNodeID>],
                                    owners: [UInt8: Owner]) throws -> [StorageProblem] {
        var orphans: [ListScope: [ListNodeID]] = [:]
        try table.forEach { key, _ in
            guard key.count == 22 else { return true }
            let scope = scope(of: key)
            let id = ListNodeID(high: UInt64(littleEndian: key.loadUnaligned(fromByteOffset: 6, as: UInt64.self)),
                                low: UInt64(littleEndian: key.loadUnaligned(fromByteOffset: 14, as: UInt64.self)))
            if let known = reached[scope], !known.contains(id) { orphans[scope, default: []].append(id) }
            return true
        }
        return orphans.keys.sorted(by: { ($0.classID, $0.row, $0.slot) < ($1.classID, $1.row, $1.slot) }).map { scope in
            let ids = orphans[scope]!
            let named = ids.prefix(5).map(\.description).joined(separator: ", ") + (ids.count > 5 ? ", …" : "")
            return StorageProblem(location: RecordLocation(file: "\(path) [list \(scope.slot)]", className: owners[scope.classID]?.name, rowID: scope.row),
                                  reason: "\(ids.count) node record(s) of \(scope) that its root does not reach (\(named)). Nothing reads them: they only take space",
                                  kind: .listOrphanNodes)
        }
    }

    private static func scope(of key: UnsafeRawBufferPointer) -> ListScope {
        ListScope(classID: key[0], row: UInt32(littleEndian: key.loadUnaligned(fromByteOffset: 1, as: UInt32.self)), slot: key[5])
    }
}

/// One list's walk from its root: the problems found, and the nodes reached.
private struct ListWalk {
    let scope: ListScope
    let table: any StorageTable
    let format: RecordFormat
    let path: String
    let owner: String?
    var problems: [StorageProblem] = []
    var reached = Set<ListNodeID>()

    /// What to do about a list that cannot be read whole.
    private var damagedAdvice: String {
        "the list cannot be read whole: restore the store from a backup (`cabinet restore`), or give the owner's list its elements again and save, which writes a new tree"
    }

    init(scope: ListScope, table: any StorageTable, format: RecordFormat, path: String, owner: String?) {
        self.scope = scope
        self.table = table
        self.format = format
        self.path = path
        self.owner = owner
    }

    private func location(_ id: ListNodeID? = nil) -> RecordLocation {
        RecordLocation(file: "\(path) [list \(scope.slot)\(id.map { ", node \($0)" } ?? "")]", className: owner, rowID: scope.row)
    }

    private mutating func report(_ reason: String, _ kind: StorageProblem.Kind, node: ListNodeID? = nil) {
        problems.append(StorageProblem(location: location(node), reason: reason, kind: kind))
    }

    /// Walks the tree from the root record; returns the root's element count if it decodes.
    mutating func checkTree() -> Int? {
        let root: (count: Int, root: ListNodeID)?
        do {
            root = try ListWriter.readRoot(scope, in: table, format: format, owner: location())
        } catch {
            report("the list's root does not decode (\(error)); \(damagedAdvice)", .listUnreadable)
            return nil
        }
        guard let root else { return nil }
        checkNode(root.root, expected: root.count, depth: 0)
        return root.count
    }

    private mutating func checkNode(_ id: ListNodeID, expected: Int, depth: Int) {
        guard depth <= ListNode.maximumDepth else {
            return report("node \(id) lies more than \(ListNode.maximumDepth) levels below the root; \(damagedAdvice)", .listTooDeep, node: id)
        }
        guard reached.insert(id).inserted else {
            return report("node \(id) is named by more than one parent (or by a node below it); \(damagedAdvice)", .listNodeShared, node: id)
        }
        let node: ListNode?
        do {
            node = try ListWriter.readNode(ListNodeStorage(scope: scope, id: id), in: table, format: format, owner: location(id))
        } catch {
            return report("the node does not decode (\(error)); \(damagedAdvice)", .listUnreadable, node: id)
        }
        guard let node else {
            reached.remove(id)
            return report("node \(id) is named in the list's tree but not stored; \(damagedAdvice)", .listNodeMissing, node: id)
        }
        if node.count != expected {
            report("node \(id) holds \(node.count) elements, but its parent (or the list's root) counts \(expected); \(damagedAdvice)",
                   .listCountMismatch, node: id)
        }
        for child in node.children {
            guard let childID = child.id else { continue }
            checkNode(childID, expected: child.count, depth: depth + 1)
        }
    }

    /// Checks that the owner row exists and keeps this slot out of line with
    /// `rootCount` elements: its record holds the marker, the slot and the
    /// count (`docs/FORMAT.md`). The verifier cannot parse the record without
    /// its class, so it looks for those bytes; a record that names the list
    /// always holds them, so a missing marker is certain.
    mutating func checkOwner(_ owner: (name: String, table: any StorageTable)?, rootCount: Int?) {
        let orphanAdvice = "no object refers to this list, so nothing reads it: it only takes space"
        guard let owner else {
            return report("no class file has class ID \(scope.classID), which owns this list; \(orphanAdvice)", .listOrphanRoot)
        }
        let record: [UInt8]?
        do {
            record = try owner.table.withValue(forRow: scope.row) { Array($0) }
        } catch {
            return   // the class file's own checks report a row that cannot be read
        }
        guard let record else {
            return report("row \(scope.row) of \(owner.name), which owned this list, no longer exists; \(orphanAdvice)", .listOrphanRoot)
        }
        var counts: [Int] = []
        var index = 0
        while index + 9 <= record.count {
            if record[index] == 0xFF, record[index + 1] == 0xFF, record[index + 2] == 0xFF, record[index + 3] == 0xFF,
               record[index + 4] == scope.slot {
                counts.append(record[(index + 5)..<(index + 9)].reversed().reduce(0) { $0 << 8 | Int($1) })
            }
            index += 1
        }
        guard !counts.isEmpty else {
            return report("row \(scope.row) of \(owner.name) no longer keeps list \(scope.slot) out of line; \(orphanAdvice) (saving the object removes it)", .listOrphanRoot)
        }
        if let rootCount, !counts.contains(rootCount) {
            report("the owner's record counts \(counts[0]) elements in list \(scope.slot), its root \(rootCount); \(damagedAdvice)", .listCountMismatch)
        }
    }
}
