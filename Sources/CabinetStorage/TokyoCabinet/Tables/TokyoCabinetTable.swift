import CTokyoCabinet
import Foundation

/// The closure of a `tchdbforeach` scan, and the error it threw. A class with a
/// `let` closure, so each record's callback borrows the closure instead of copying it.
private final class Scan {
    let body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
    let hdb: UnsafeMutablePointer<TCHDB>
    var error: (any Error)?
    var pages = MappedPages()

    init(body: @escaping (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool, hdb: UnsafeMutablePointer<TCHDB>) {
        self.body = body
        self.hdb = hdb
    }

    /// Releases the pages of Tokyo Cabinet's map read so far (see ``MappedPages``).
    func releaseMappedPages() {
        // The map covers the header and buckets (msiz) and, beyond, up to xmsiz bytes of records.
        let mapped = min(max(hdb.pointee.msiz, hdb.pointee.xmsiz), hdb.pointee.fsiz)
        guard let map = hdb.pointee.map, mapped > 0 else { return }
        MappedPages.release(map, length: Int(mapped))
    }
}

/// One Tokyo Cabinet hash database file.
///
/// Tokyo Cabinet marks a handle "fatal" after any failed write (a full disk, an
/// I/O error) and refuses every later write through it. So after a failure the
/// table closes and reopens its file: the reopen rolls back, from Tokyo
/// Cabinet's write-ahead log, whatever the failed transaction had written, and
/// a later save can try again. If the reopen itself fails, the next operation
/// tries once more.
final class TokyoCabinetTable: TransactionalTable {
    let path: String
    /// The store directory and the table's name in it.
    let directory: String
    let name: String
    let options: TokyoCabinetBackend.Options
    var readOnly: Bool { options.readOnly }
    /// `nil` after ``close()``, or while a reopen after a failure has not succeeded.
    var handle: UnsafeMutablePointer<TCHDB>? {
        // Found when the handle is set, never while threads read (``concurrentReads``
        // reads run while no one writes, and a reopen is a write).
        didSet {
            lookupByteOrder = handle.flatMap(TokyoCabinetLookup.byteOrder(of:))
            changes &+= 1
        }
    }
    /// Counts writes and handle changes, so a read that lent out bytes of Tokyo
    /// Cabinet's map can tell whether the table changed under them (see ``withValue(forKey:_:)``).
    private var changes = 0
    private var isClosed = false
    /// Set while the index needs rebuilding after a failed transaction (see ``repairIndexAfterFailedTransaction()``).
    var needsIndexRebuild = false
    /// Whether the file may hold changes that are only in the page cache: a
    /// commit that was not synced, or a rollback, since the last flush. A
    /// flushed commit of another table flushes this one first (``sync()``).
    /// A writer's open without `syncOnCommit` starts with it set: an earlier
    /// process may have closed the file unflushed, and opening it may have
    /// rolled back a killed writer's transaction.
    var hasUnflushedChanges: Bool
    /// Whether a rebuild flushes its copy, and the directory once it is
    /// renamed into place: set by the backend once a flushed commit was made
    /// (``TokyoCabinetBackend/hadFlushedCommit``), so that a later default
    /// save's rebuild cannot replace a flushed file with an unflushed one.
    var syncsRebuilds = false
    /// Reused for single reads, so a fault costs no allocation (not when ``concurrentReads``).
    private var scratch: UnsafeMutableRawPointer
    private var scratchCapacity = 1024
    /// Whether threads may read at once (``TokyoCabinetBackend/Options/concurrentReads``).
    private let concurrentReads: Bool
    /// The byte order ``TokyoCabinetLookup`` reads the file in; `nil` when it cannot.
    private(set) var lookupByteOrder: Bool?
    /// Whether single reads look in Tokyo Cabinet's map first (``TokyoCabinetLookup``).
    var readsThroughMap: Bool { lookupByteOrder != nil }
    /// Whether a lookup that finds nothing can be believed (``TokyoCabinetMissCheck``):
    /// locked, as concurrent readers may ask at once.
    let missCheck = Locked(TokyoCabinetMissCheck.State.notYet)

    init(directory: String, name: String, options: TokyoCabinetBackend.Options) throws {
        self.directory = directory
        self.name = name
        self.path = directory + "/" + name
        self.options = options
        concurrentReads = options.concurrentReads
        hasUnflushedChanges = !options.readOnly && !options.syncOnCommit
        try TokyoCabinetDirectory.refuseLinks(forTable: path)
        // Read before Tokyo Cabinet's open, which rolls the header back with the rest.
        let failedWriteInterrupted = !options.readOnly && TokyoCabinetTable.hadFailedWrite(path)
        handle = try TokyoCabinetTable.openHandle(path: path, options: options)
        // (didSet does not run in an initializer.)
        lookupByteOrder = handle.flatMap(TokyoCabinetLookup.byteOrder(of:))
        scratch = UnsafeMutableRawPointer.allocate(byteCount: scratchCapacity, alignment: 16)
        if failedWriteInterrupted {
            // Best effort: a file that is damaged besides cannot be rebuilt, and stays writable as before.
            needsIndexRebuild = true
            if (try? rebuildIndexIfNeeded()) == nil { needsIndexRebuild = false }
        }
    }

    /// Whether the file's header says a writer hit a failed write in it
    /// (`HDBFFATAL`, which Tokyo Cabinet sets in the mapped header at once, and
    /// which ``TokyoCabinetFailedWriteMark`` keeps through every rollback): the
    /// process may have died before Cabinet rebuilt the index after the rollback
    /// (see ``repairIndexAfterFailedTransaction()``), or inside the rollback, which
    /// the open then does again; the rebuild is then done once the file is open.
    /// A rebuilt file starts without the flag.
    static func hadFailedWrite(_ path: String) -> Bool {
        guard let flags = TokyoCabinetDirectory.headerFlags(of: path) else { return false }
        return flags & UInt8(HDBFFATAL) != 0
    }

    deinit {
        close()
        scratch.deallocate()
    }

    func failure(_ operation: String) -> CabinetError {
        guard let handle else { return .storeClosed(path: path) }
        let code = tchdbecode(handle)
        return .backendFailure(RecordLocation(file: path), operation: operation, code: code, message: String(cString: tchdberrmsg(code)))
    }

    /// The open handle; after a failure whose reopen did not succeed, reopens the file now.
    func open() throws -> UnsafeMutablePointer<TCHDB> {
        if let handle { return handle }
        guard !isClosed else { throw CabinetError.storeClosed(path: path) }
        let reopened = try TokyoCabinetTable.openHandle(path: path, options: options)
        handle = reopened
        return reopened
    }

    /// Closes and reopens the file after Tokyo Cabinet marked the handle fatal (or
    /// a commit failed): closing rolls back an open transaction, and opening
    /// rolls back from the write-ahead log whatever the close could not.
    func reopenAfterFailure() {
        guard let hdb = handle else { return }
        handle = nil
        TokyoCabinetTable.closeHandle(hdb, path: path)
        handle = try? TokyoCabinetTable.openHandle(path: path, options: options)
    }

    /// The header's count, at most as many records as the file can hold: a
    /// damaged header may claim any count (even one above `Int.max`), and callers
    /// size arrays and add by it. A record takes 14 bytes at least (its head and
    /// two one-byte sizes), so a count above that is damage `cabinet verify` reports.
    var recordCount: Int {
        guard let handle else { return 0 }
        return Int(clamping: min(tchdbrnum(handle), tchdbfsiz(handle) / 14))
    }

    /// The file's size in bytes, free space included.
    var byteCount: UInt64 {
        guard let handle else { return 0 }
        return tchdbfsiz(handle)
    }

    func withValue<R>(forKey key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        let hdb = try open()
        // Found in Tokyo Cabinet's map, or asked of Tokyo Cabinet (see TokyoCabinetLookup).
        // It changes no shared state, so concurrent readers use it too: no one writes meanwhile.
        if let bigEndian = lookupByteOrder {
            switch TokyoCabinetLookup.find(hdb, key: key, bigEndian: bigEndian) {
            case .found(let value):
                // The bytes live in the map: a write (or a close) of this table inside
                // `body` could move or unmap them. None of the store's reads does; one that
                // did is a clear trap, not a read of freed or rewritten bytes gone unnoticed.
                let before = changes
                defer { precondition(changes == before, "Cabinet: \(path) was written or closed inside a read of one of its records; copy the bytes out first") }
                return try body(value)
            case .absent:
                return nil
            case .damaged(let damage):
                // Never handed to Tokyo Cabinet, which trusts the sizes it reads.
                throw damage.error(path: path)
            case .unsettled:
                // Beyond the map: read with pread, as carefully. Only a file it does not read goes on to Tokyo Cabinet.
                switch try TokyoCabinetLookup.readUnmapped(hdb, key: key, bigEndian: bigEndian, path: path, body) {
                case .found(let result): return result
                case .absent: return nil
                case .notRead: break
                }
            }
        }
        if concurrentReads { return try withValueInOwnBuffer(hdb, key, body) }
        while true {
            switch try read(hdb, key, into: scratch, capacity: scratchCapacity) {
            case .missing: return nil
            case .read(let size): return try body(UnsafeRawBufferPointer(start: scratch, count: size))
            case .needs(let size):
                scratch.deallocate()
                scratchCapacity = size + 1
                scratch = UnsafeMutableRawPointer.allocate(byteCount: scratchCapacity, alignment: 16)
            }
        }
    }

    /// ``withValue(forKey:_:)`` for threads that read at once: a buffer of its own
    /// per call (on the stack up to 1 KiB), never the shared scratch, and no reopen
    /// of the shared handle (the next transaction reopens a fatal one).
    private func withValueInOwnBuffer<R>(_ hdb: UnsafeMutablePointer<TCHDB>, _ key: UnsafeRawBufferPointer,
                                         _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try withUnsafeTemporaryAllocation(byteCount: 1024, alignment: 16) { stack in
            guard var buffer = stack.baseAddress else { return nil }
            var capacity = stack.count
            var heap: UnsafeMutableRawPointer?
            defer { heap?.deallocate() }
            while true {
                switch try read(hdb, key, into: buffer, capacity: capacity) {
                case .missing: return nil
                case .read(let size): return try body(UnsafeRawBufferPointer(start: buffer, count: size))
                case .needs(let size):
                    heap?.deallocate()
                    capacity = size + 1
                    heap = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
                    buffer = heap ?? buffer
                }
            }
        }
    }

    private enum ReadOutcome {
        /// No such record.
        case missing
        /// The whole value is in the buffer: this many bytes.
        case read(Int)
        /// The value has this many bytes, more than the buffer holds.
        case needs(Int)
    }

    /// Reads one value into `buffer`, or says how large a buffer it needs.
    @inline(__always)
    private func read(_ hdb: UnsafeMutablePointer<TCHDB>, _ key: UnsafeRawBufferPointer,
                      into buffer: UnsafeMutableRawPointer, capacity: Int) throws -> ReadOutcome {
        let size = Int(tchdbget3(hdb, key.baseAddress, Int32(key.count), buffer, Int32(capacity)))
        if size < 0 {
            if tchdbecode(hdb) == Int32(TCENOREC) { return .missing }
            let error = failure("read")
            // A handle a failed write left fatal reads nothing more; outside a transaction it can start afresh.
            if isFatal && !hdb.pointee.tran && !concurrentReads { reopenAfterFailure() }
            throw error
        }
        if size < capacity { return .read(size) }
        // The value may have been cut to fit: ask for its size and read again with room for it.
        let full = Int(tchdbvsiz(hdb, key.baseAddress, Int32(key.count)))
        if full < 0 { throw failure("read") }
        // The size comes from the record's header on disk: no record is larger than its file.
        guard UInt64(full) <= tchdbfsiz(hdb) else {
            throw CabinetError.malformedRecord(RecordLocation(file: path), reason: "a record claims \(full) bytes, more than the file holds")
        }
        return full < capacity ? .read(full) : .needs(full)
    }

    func setValue(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer) throws {
        let hdb = try open()
        // Tokyo Cabinet takes sizes as Int32; a larger value must not wrap around.
        guard value.count <= StorageLimits.largestValue, key.count <= StorageLimits.largestValue else {
            throw CabinetError.valueTooLarge(RecordLocation(file: path), size: max(value.count, key.count), limit: StorageLimits.largestValue)
        }
        try refuseDamagedWalk(hdb, key: key, operation: "write")
        changes &+= 1
        guard tchdbput(hdb, key.baseAddress, Int32(key.count), value.baseAddress ?? UnsafeRawPointer(scratch), Int32(value.count)) else {
            throw failure("write")
        }
    }

    func removeValue(forKey key: UnsafeRawBufferPointer) throws -> Bool {
        let hdb = try open()
        try refuseDamagedWalk(hdb, key: key, operation: "delete")
        changes &+= 1
        if tchdbout(hdb, key.baseAddress, Int32(key.count)) { return true }
        if tchdbecode(hdb) == Int32(TCENOREC) { return false }
        throw failure("delete")
    }

    /// Throws if the walk to `key`'s place meets damage: Tokyo Cabinet's put and
    /// delete walk the same records (its bucket's tree, to the key or the empty
    /// link where it goes), trusting their sizes as its reads do. One more walk
    /// in the map, beside the write's own.
    private func refuseDamagedWalk(_ hdb: UnsafeMutablePointer<TCHDB>, key: UnsafeRawBufferPointer, operation: String) throws {
        guard let bigEndian = lookupByteOrder else { return }
        try TokyoCabinetLookup.refuseDamagedWalk(hdb, key: key, bigEndian: bigEndian, path: path, operation: operation)
    }

    func forEach(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        let hdb = try open()
        if try TokyoCabinetFileScan.forEach(hdb, path: path, body) != .unsupported { return }
        // tchdbforeach is Tokyo Cabinet's fastest scan (no per-record copy into
        // an extensible string), and its position is its own, so a nested scan
        // of the same file cannot disturb it. Its callback is a C function, so
        // the Swift closure and any error it throws travel through `op`.
        try withoutActuallyEscaping(body) { body in
            let scan = Scan(body: body, hdb: hdb)
            let finished = withExtendedLifetime(scan) {
                tchdbforeach(hdb, { key, keySize, value, valueSize, op in
                    guard let op else { return false }
                    // Borrowed, not retained: the scan outlives tchdbforeach.
                    return Unmanaged<Scan>.fromOpaque(op)._withUnsafeGuaranteedRef { scan in
                        if scan.pages.countRecord() { scan.releaseMappedPages() }
                        do {
                            return try scan.body(UnsafeRawBufferPointer(start: key, count: Int(keySize)),
                                                 UnsafeRawBufferPointer(start: value, count: Int(valueSize)))
                        } catch {
                            scan.error = error
                            return false
                        }
                    }
                }, Unmanaged.passUnretained(scan).toOpaque())
            }
            if let error = scan.error { throw error }
            if !finished && tchdbecode(hdb) != Int32(TCESUCCESS) && tchdbecode(hdb) != Int32(TCENOREC) {
                throw failure("iterate")
            }
        }
    }

    func close() {
        isClosed = true
        guard let handle else { return }
        self.handle = nil
        TokyoCabinetTable.closeHandle(handle, path: path)
    }
}
