import CTokyoCabinet
import Foundation

/// One Tokyo Cabinet B+ tree database file: an ``OrderedStorageTable``, the
/// file an index keeps its entries in (`tcbdb.h`). Keys compare with Tokyo
/// Cabinet's default (lexical: `memcmp`, then length), the order the protocol
/// promises.
///
/// A B+ tree file is a hash database file underneath, with the same header and
/// the same write-ahead log: a transaction is all-or-nothing as a hash file's
/// is, a killed writer's is rolled back at the next writable open, and a failed
/// write makes the handle "fatal" until it is closed and reopened (which rolls
/// the transaction back), so the table does that after any failure.
///
/// A reader in another process (``TokyoCabinetBackend/Options/readOnly``) reopens
/// its handle at every refresh: the tree caches pages, which a writer may have
/// rewritten in place without changing any count a stamp could compare.
final class TokyoCabinetOrderedTable: OrderedStorageTable, TransactionalTable, TokyoCabinetFile {
    let path: String
    let directory: String
    let name: String
    let options: TokyoCabinetBackend.Options
    private(set) var handle: UnsafeMutablePointer<TCBDB>? {
        didSet { handleChanged() }
    }
    private var isClosed = false
    /// The byte order of the open file's numbers when ascending scans read its
    /// pages in the map (``TokyoCabinetTreeScan``), `nil` when they may not.
    private var scanByteOrder: Bool?
    /// A write made outside a transaction: its pages may be in the tree's cache
    /// only, until a sync, a transaction or a reopen flushes them.
    private var unflushedWrites = false
    /// Whether the file may hold changes only in the page cache (see
    /// ``TokyoCabinetTable/hasUnflushedChanges``; set from the open too).
    var hasUnflushedChanges: Bool
    /// Counts every change of the file or the handle: a scan of the map that sees
    /// it change under it goes on with Tokyo Cabinet's cursor instead.
    var generation = 0
    /// The inner nodes ascending scans have parsed (``TokyoCabinetTreeNodes``).
    private let treeNodes = TokyoCabinetTreeNodes()
    /// Set when a commit finished although a write in it failed (see ``OrderedStorageTable/isDamaged``).
    var isDamaged = false
    /// What the open transaction's writes have had read first (see ``TokyoCabinetTreeScan/WriteCheck``).
    var writeCheck: TokyoCabinetTreeScan.WriteCheck?

    init(directory: String, name: String, options: TokyoCabinetBackend.Options) throws {
        self.directory = directory
        self.name = name
        self.path = directory + "/" + name
        self.options = options
        hasUnflushedChanges = !options.readOnly && !options.syncOnCommit
        try TokyoCabinetDirectory.refuseLinks(forTable: path)
        // A writer hit a failed write in it (read before the open, which rolls the
        // header back with the rest): Tokyo Cabinet may have changed what it could
        // not log, so the rollback cannot be trusted; the owner rebuilds the file.
        isDamaged = !options.readOnly && TokyoCabinetTable.hadFailedWrite(path)
        if !options.readOnly {
            // A kill's leftovers in the log, settled before Tokyo Cabinet's open reads it.
            try TokyoCabinetLog.trimCutEntry(ofTable: path)
            if try TokyoCabinetOrderedTable.removeSpentLog(of: path) { isDamaged = true }
        }
        handle = try TokyoCabinetOrderedTable.openHandle(path: path, options: options)
        handleChanged()
    }

    deinit { close() }

    private func handleChanged() {
        generation &+= 1
        unflushedWrites = false
        writeCheck = nil
        scanByteOrder = handle.flatMap(TokyoCabinetOrderedTable.scanByteOrder(of:))
    }

    /// Whether the map of `bdb` can be scanned here, and its byte order: its hash
    /// file is one ``TokyoCabinetLookup`` reads, and its keys compare as Tokyo
    /// Cabinet's default (lexical) order, the one the scan follows.
    private static func scanByteOrder(of bdb: UnsafeMutablePointer<TCBDB>) -> Bool? {
        let lexical: TCCMP = tccmplexical
        guard let hdb = bdb.pointee.hdb, let compare = bdb.pointee.cmp,
              unsafeBitCast(compare, to: UnsafeRawPointer.self) == unsafeBitCast(lexical, to: UnsafeRawPointer.self) else { return nil }
        return TokyoCabinetLookup.byteOrder(of: hdb)
    }

    /// Notes a change of the file made by `bdb`'s last call.
    private func wrote(_ bdb: UnsafeMutablePointer<TCBDB>) {
        generation &+= 1
        if !bdb.pointee.tran {
            unflushedWrites = true
            hasUnflushedChanges = true
        }
    }

    /// Notes that every changed page is in the file (a begun or committed
    /// transaction, a sync, a compaction); each caller also starts a new generation.
    func flushed() {
        unflushedWrites = false
    }

    func open() throws -> UnsafeMutablePointer<TCBDB> {
        if let handle { return handle }
        guard !isClosed else { throw CabinetError.storeClosed(path: path) }
        let reopened = try TokyoCabinetOrderedTable.openHandle(path: path, options: options)
        handle = reopened
        return reopened
    }

    /// Closes and reopens the file after a failure: closing rolls back an open
    /// transaction, and opening rolls back from the log what the close could not.
    ///
    /// After a failed commit the tree's page cache may still hold pages of the
    /// failed transaction, and its counts (root, records) the new ones, which a
    /// close writes into the file outside any transaction. So the close runs
    /// inside a transaction of the hash file underneath, which the close itself
    /// rolls back: nothing it writes stays. If even that transaction cannot
    /// start, the table says it is damaged, and its owner rebuilds it.
    func reopenAfterFailure() {
        guard let bdb = handle else { return }
        handle = nil
        if let hdb = bdb.pointee.hdb, !hdb.pointee.tran {
            hdb.pointee.fatal = false   // Tokyo Cabinet refuses to begin a transaction on a fatal file
            // Without it, the close may write pages of the failed transaction: the owner rebuilds the file.
            if !tchdbtranbegin(hdb) { isDamaged = true }
        }
        _ = tcbdbclose(bdb)
        tcbdbdel(bdb)
        handle = try? TokyoCabinetOrderedTable.openHandle(path: path, options: options)
    }

    func failure(_ operation: String) -> CabinetError {
        guard let handle else { return .storeClosed(path: path) }
        let code = tcbdbecode(handle)
        return .backendFailure(RecordLocation(file: path), operation: operation, code: code, message: String(cString: tcbdberrmsg(code)))
    }

    var isFatal: Bool { handle?.pointee.hdb?.pointee.fatal ?? false }

    /// Runs while the header is logged, just before Tokyo Cabinet rewrites it
    /// outside a transaction (a begin, a sync, an optimize, a close): tests tear
    /// the header there, as a kill would, and take the files as a kill leaves them.
    var whileHeaderLogged: (() throws -> Void)?

    func close() {
        isClosed = true
        guard let bdb = handle else { return }
        handle = nil
        // The close rewrites the header outside a transaction, and removes the log after.
        if !options.readOnly && TokyoCabinetOrderedTable.logHeader(of: bdb) { try? whileHeaderLogged?() }
        _ = tcbdbclose(bdb)
        tcbdbdel(bdb)
    }

    // MARK: TokyoCabinetFile

    func sync() throws {
        let bdb = try open()
        defer { generation &+= 1 }
        guard try withHeaderLogged(bdb, { tcbdbsync(bdb) }) else { throw failure("sync") }
        flushed()
        hasUnflushedChanges = false
    }

    var readingStamp: TokyoCabinetTable.ReadingStamp? { nil }

    /// A reader's handle is opened afresh at every refresh (see the type's comment).
    func refreshForReading(since seen: TokyoCabinetTable.ReadingStamp?) throws -> TokyoCabinetTable.ReadingStamp? {
        if let bdb = handle {
            handle = nil
            _ = tcbdbclose(bdb)
            tcbdbdel(bdb)
        }
        handle = try TokyoCabinetOrderedTable.openHandle(path: path, options: options)
        return nil
    }

    // MARK: StorageTable

    /// The header's count, at most as many records as the file can hold (see
    /// ``TokyoCabinetTable/recordCount``): a record in a leaf takes 3 bytes at least.
    var recordCount: Int {
        guard let handle else { return 0 }
        return Int(clamping: min(tcbdbrnum(handle), tcbdbfsiz(handle) / 3))
    }

    var byteCount: UInt64 {
        guard let handle else { return 0 }
        return tcbdbfsiz(handle)
    }

    /// One read per key, each a B+ tree lookup.
    func withValues(forKeys keys: [[UInt8]], _ body: (Int, UnsafeRawBufferPointer?) throws -> Void) throws {
        try withValuesOneByOne(forKeys: keys, body)
    }

    func withValue<R>(forKey key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        let bdb = try open()
        // Read in the map whenever the file holds the whole tree: a damaged page
        // is an error here, where Tokyo Cabinet's loader would trust its sizes.
        if let bigEndian = mapScanByteOrder(bdb),
           let answer = try TokyoCabinetTreeScan.value(of: key, in: bdb, bigEndian: bigEndian, path: path,
                                                       nodes: treeNodes, generation: generation, body) {
            return answer
        }
        // In a transaction: the pages Tokyo Cabinet loads for it, read first.
        try refuseDamagedPages(bdb, key: key, removing: false)
        var size: Int32 = 0
        // A copy of its own: another thread's read may evict the page tcbdbget3 would point into.
        guard let value = tcbdbget(bdb, key.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(key.count), &size) else {
            if tcbdbecode(bdb) == Int32(TCENOREC) { return nil }
            throw failure("read")
        }
        defer { free(value) }
        return try body(UnsafeRawBufferPointer(start: value, count: Int(size)))
    }

    func setValue(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer) throws {
        let bdb = try open()
        guard value.count <= StorageLimits.largestValue, key.count <= StorageLimits.largestValue else {
            throw CabinetError.valueTooLarge(RecordLocation(file: path), size: max(value.count, key.count), limit: StorageLimits.largestValue)
        }
        try refuseDamagedPages(bdb, key: key, removing: false)
        let empty: UInt8 = 0
        let stored = withUnsafeBytes(of: empty) { placeholder in
            tcbdbput(bdb, key.baseAddress ?? placeholder.baseAddress, Int32(key.count), value.baseAddress ?? placeholder.baseAddress, Int32(value.count))
        }
        wrote(bdb)   // a failed put too: it may have changed pages in the cache
        guard stored else { throw failure("write") }
    }

    func removeValue(forKey key: UnsafeRawBufferPointer) throws -> Bool {
        let bdb = try open()
        try refuseDamagedPages(bdb, key: key, removing: true)
        if tcbdbout(bdb, key.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(key.count)) {
            wrote(bdb)
            return true
        }
        if tcbdbecode(bdb) == Int32(TCENOREC) { return false }   // nothing there, nothing changed
        wrote(bdb)
        throw failure("delete")
    }

    func reserveCapacity(_ records: Int) throws { _ = try open() }

    /// A new empty file renamed over this one, then opened. The old handle is
    /// closed after the rename: what its close writes (a damaged file's cached
    /// pages) goes to the old file, which is no longer the table's.
    func removeAll() throws {
        if options.readOnly { throw CabinetError.readOnly(path: path, reason: "emptying an index writes the file") }
        try TokyoCabinetOrderedTable.create(directory: directory, name: name, options: options)
        if let bdb = handle {
            handle = nil
            _ = tcbdbclose(bdb)
            tcbdbdel(bdb)
        }
        // The new empty file was renamed into place unflushed: a flushed commit flushes it.
        hasUnflushedChanges = !options.syncOnCommit
        handle = try TokyoCabinetOrderedTable.openHandle(path: path, options: options)
        isDamaged = false
    }

    /// Rewrites the file without free space (`tcbdboptimize`, which writes a
    /// copy and renames it over the file: whole or not at all).
    func compact() throws {
        if options.readOnly { throw CabinetError.readOnly(path: path, reason: "compacting writes the file") }
        // Tokyo Cabinet's optimize loads every page, trusting the sizes in each:
        // every page is read here first, and a damaged one is an error naming it.
        let bdb = try open()
        if mapScanByteOrder(bdb) != nil { try forEach { _, _ in true } }
        defer { generation &+= 1 }
        // Tokyo Cabinet's optimize writes its copy and renames it unflushed: a flushed commit flushes it.
        hasUnflushedChanges = !options.syncOnCommit
        guard try optimize(bdb) else {
            let error = failure("compact")
            reopenAfterFailure()
            throw error
        }
        flushed()   // the optimize wrote every page into the new file it reopened
    }

    func forEach(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        try forEach(from: nil, to: nil, descending: false, body)
    }

    func forEach(from lower: UnsafeRawBufferPointer?, to upper: UnsafeRawBufferPointer?, descending: Bool,
                 _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        let bdb = try open()
        guard let bigEndian = mapScanByteOrder(bdb) else {
            return try cursorForEach(bdb, from: lower, to: upper, descending: descending, body)
        }
        let generation = self.generation
        var delivered: [UInt8]?
        let outcome = descending
            ? try TokyoCabinetTreeScan.forEachDescending(bdb, bigEndian: bigEndian, path: path, from: lower, to: upper, nodes: treeNodes,
                                                         generation: generation, delivered: &delivered,
                                                         isCurrent: { self.generation == generation }, body)
            : try TokyoCabinetTreeScan.forEach(bdb, bigEndian: bigEndian, path: path, from: lower, to: upper, nodes: treeNodes,
                                               generation: generation, delivered: &delivered,
                                               isCurrent: { self.generation == generation }, body)
        guard outcome == .unsettled else { return }
        // Tokyo Cabinet goes on past the last key delivered (keys are unique: a put replaces).
        guard let delivered else { return try cursorForEach(try open(), from: lower, to: upper, descending: descending, body) }
        try delivered.withUnsafeBytes { last in
            if descending {
                return try cursorForEach(try open(), from: lower, to: last, descending: true, body)
            }
            try cursorForEach(try open(), from: last, to: upper, descending: false) { key, value in
                key.elementsEqual(last) ? true : try body(key, value)
            }
        }
    }

    /// Throws if a page that a put (or delete) of `key` makes Tokyo Cabinet load
    /// is damaged (``TokyoCabinetTreeScan/WriteCheck``): in a transaction through
    /// its check, outside one while the file holds every page. Writes outside a
    /// transaction after an unflushed one (none of Cabinet's) go unchecked.
    private func refuseDamagedPages(_ bdb: UnsafeMutablePointer<TCBDB>, key: UnsafeRawBufferPointer, removing: Bool) throws {
        if bdb.pointee.tran {
            try writeCheck?.check(key, removing: removing, in: bdb, path: path, nodes: treeNodes)
        } else if let bigEndian = mapScanByteOrder(bdb) {
            try TokyoCabinetTreeScan.WriteCheck(bdb, root: bdb.pointee.root, bigEndian: bigEndian, generation: generation)
                .check(key, removing: removing, in: bdb, path: path, nodes: treeNodes)
        }
    }

    /// A check for the transaction `bdb` has just begun: its file holds the
    /// whole tree now, and nothing is written to it before the commit.
    func startWriteCheck(_ bdb: UnsafeMutablePointer<TCBDB>) {
        writeCheck = scanByteOrder.map { TokyoCabinetTreeScan.WriteCheck(bdb, root: bdb.pointee.root, bigEndian: $0, generation: generation) }
    }

    /// The byte order of `bdb`'s map when a scan or a lookup reads it
    /// (``TokyoCabinetTreeScan``): not in a transaction, nor after a write
    /// outside one that no sync has flushed yet.
    func mapScanByteOrder(_ bdb: UnsafeMutablePointer<TCBDB>) -> Bool? {
        unflushedWrites || bdb.pointee.tran ? nil : scanByteOrder
    }

    /// A scan by Tokyo Cabinet's cursor: those the map cannot serve (in a
    /// transaction, after a write no sync flushed yet; ``TokyoCabinetTreeScan``).
    func cursorForEach(_ bdb: UnsafeMutablePointer<TCBDB>, from lower: UnsafeRawBufferPointer?, to upper: UnsafeRawBufferPointer?,
                               descending: Bool, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        guard let cursor = tcbdbcurnew(bdb) else { throw failure("scan") }
        defer { tcbdbcurdel(cursor) }
        // Each record copied out under the tree's lock (tcbdbcurrec): the page
        // may be evicted by the next read, `body`'s own reads included.
        let keyBytes = tcxstrnew(), valueBytes = tcxstrnew()
        defer { tcxstrdel(keyBytes); tcxstrdel(valueBytes) }
        var positioned: Bool
        if !descending {
            positioned = lower.map { tcbdbcurjump(cursor, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32($0.count)) } ?? tcbdbcurfirst(cursor)
        } else if let upper {
            // The first key not below `upper`, then one back; or the last key if every key is below it.
            positioned = tcbdbcurjump(cursor, upper.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(upper.count))
            positioned = positioned ? tcbdbcurprev(cursor) : tcbdbcurlast(cursor)
        } else {
            positioned = tcbdbcurlast(cursor)
        }
        while positioned {
            guard tcbdbcurrec(cursor, keyBytes, valueBytes) else { break }
            let key = UnsafeRawBufferPointer(start: tcxstrptr(keyBytes), count: Int(tcxstrsize(keyBytes)))
            let value = UnsafeRawBufferPointer(start: tcxstrptr(valueBytes), count: Int(tcxstrsize(valueBytes)))
            if !descending, let upper, !orderedKeyPrecedes(key, upper) { return }
            if descending, let lower, orderedKeyPrecedes(key, lower) { return }
            if try !body(key, value) { return }
            positioned = descending ? tcbdbcurprev(cursor) : tcbdbcurnext(cursor)
        }
        let code = tcbdbecode(bdb)
        if code != Int32(TCESUCCESS) && code != Int32(TCENOREC) { throw failure("scan") }
    }
}
