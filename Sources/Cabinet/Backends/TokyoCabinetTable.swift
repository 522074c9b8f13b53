import CTokyoCabinet
import Foundation

/// The closure of a `tchdbforeach` scan, and the error it threw. A class with a
/// `let` closure, so each record's callback borrows the closure instead of copying it.
private final class Scan {
    let body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
    let hdb: UnsafeMutablePointer<TCHDB>
    var error: (any Error)?
    var recordsSinceRelease = 0

    /// How many records a scan reads between releases of the mapped file's pages.
    static let recordsPerRelease = 16_384

    init(body: @escaping (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool, hdb: UnsafeMutablePointer<TCHDB>) {
        self.body = body
        self.hdb = hdb
    }

    /// A scan touches every page of the file's memory map, and touched pages of
    /// a mapped file count as the process's resident memory. Handing them back
    /// now and then keeps a scan of any size in bounded memory. The map is
    /// shared, so the pages stay in the kernel's page cache (nothing is lost or
    /// written); a page still needed is simply mapped again.
    func releaseMappedPages() {
        recordsSinceRelease = 0
        // The map covers the header and buckets (msiz) and, beyond, up to xmsiz bytes of records.
        let mapped = min(max(hdb.pointee.msiz, hdb.pointee.xmsiz), hdb.pointee.fsiz)
        guard let map = hdb.pointee.map, mapped > 0 else { return }
        _ = madvise(map, Int(mapped), Int32(MADV_DONTNEED))
    }
}

/// One Tokyo Cabinet hash database file.
final class TokyoCabinetTable: StorageTable {
    /// The first bytes of every Tokyo Cabinet database file.
    static let magic = Array("ToKyO CaBiNeT\n".utf8)

    let path: String
    let readOnly: Bool
    private var handle: UnsafeMutablePointer<TCHDB>?
    /// Reused for single reads, so a fault costs no allocation.
    private var scratch: UnsafeMutableRawPointer
    private var scratchCapacity = 1024

    init(path: String, options: TokyoCabinetBackend.Options) throws {
        self.path = path
        readOnly = options.readOnly
        // Checked before tchdbnew: throwing after it would leak the handle.
        if options.readOnly && !FileManager.default.fileExists(atPath: path) {
            throw CabinetError.readOnly(path: path, reason: "the file does not exist, and a read-only store cannot create it")
        }
        guard let hdb = tchdbnew() else {
            throw CabinetError.backendFailure(RecordLocation(file: path), operation: "tchdbnew", code: -1, message: "out of memory")
        }
        _ = tchdbtune(hdb, options.bucketCount, options.alignmentPower, options.freeBlockPoolPower, 0)
        _ = tchdbsetxmsiz(hdb, options.mappedSize)
        var mode = options.readOnly ? Int32(HDBOREADER | HDBOLCKNB) : Int32(HDBOREADER | HDBOWRITER | HDBOCREAT | HDBOLCKNB)
        if options.syncOnCommit { mode |= Int32(HDBOTSYNC) }
        guard tchdbopen(hdb, path, mode) else {
            let code = tchdbecode(hdb)
            tchdbdel(hdb)
            throw TokyoCabinetTable.openError(path: path, code: code)
        }
        handle = hdb
        scratch = UnsafeMutableRawPointer.allocate(byteCount: scratchCapacity, alignment: 16)
    }

    deinit {
        close()
        scratch.deallocate()
    }

    private static func openError(path: String, code: Int32) -> CabinetError {
        let location = RecordLocation(file: path)
        let message = String(cString: tchdberrmsg(code))
        switch Int(code) {
        case Int(TCEMETA), Int(TCERHEAD), Int(TCEREAD), Int(TCEMMAP):
            let reason = hasMagic(atPath: path) ? "its header is damaged: \(message)" : "it does not start with Tokyo Cabinet's magic"
            return .notADatabase(location, reason: reason)
        case Int(TCELOCK):
            return .storeLocked(path: path, pid: nil)
        default:
            return .backendFailure(location, operation: "open", code: code, message: message)
        }
    }

    static func hasMagic(atPath path: String) -> Bool {
        guard let file = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? file.close() }
        let head = (try? file.read(upToCount: magic.count)) ?? Data()
        return Array(head) == magic
    }

    private func failure(_ operation: String) -> CabinetError {
        guard let handle else { return .storeClosed(path: path) }
        let code = tchdbecode(handle)
        return .backendFailure(RecordLocation(file: path), operation: operation, code: code, message: String(cString: tchdberrmsg(code)))
    }

    private func open() throws -> UnsafeMutablePointer<TCHDB> {
        guard let handle else { throw CabinetError.storeClosed(path: path) }
        return handle
    }

    var recordCount: Int {
        guard let handle else { return 0 }
        return Int(tchdbrnum(handle))
    }

    /// The file's size in bytes.
    var fileSize: UInt64 {
        guard let handle else { return 0 }
        return tchdbfsiz(handle)
    }

    func withValue<R>(forKey key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        let hdb = try open()
        while true {
            let size = Int(tchdbget3(hdb, key.baseAddress, Int32(key.count), scratch, Int32(scratchCapacity)))
            if size < 0 {
                if tchdbecode(hdb) == Int32(TCENOREC) { return nil }
                throw failure("read")
            }
            if size < scratchCapacity {
                return try body(UnsafeRawBufferPointer(start: scratch, count: size))
            }
            // The value may have been cut to fit: ask for its size and read again with room for it.
            let full = Int(tchdbvsiz(hdb, key.baseAddress, Int32(key.count)))
            if full < 0 { throw failure("read") }
            // The size comes from the record's header on disk: no record is larger than its file.
            guard UInt64(full) <= tchdbfsiz(hdb) else {
                throw CabinetError.malformedRecord(RecordLocation(file: path), reason: "a record claims \(full) bytes, more than the file holds")
            }
            if full < scratchCapacity {
                return try body(UnsafeRawBufferPointer(start: scratch, count: full))
            }
            scratch.deallocate()
            scratchCapacity = full + 1
            scratch = UnsafeMutableRawPointer.allocate(byteCount: scratchCapacity, alignment: 16)
        }
    }

    func setValue(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer) throws {
        let hdb = try open()
        guard tchdbput(hdb, key.baseAddress, Int32(key.count), value.baseAddress ?? UnsafeRawPointer(scratch), Int32(value.count)) else {
            throw failure("write")
        }
    }

    func removeValue(forKey key: UnsafeRawBufferPointer) throws -> Bool {
        let hdb = try open()
        if tchdbout(hdb, key.baseAddress, Int32(key.count)) { return true }
        if tchdbecode(hdb) == Int32(TCENOREC) { return false }
        throw failure("delete")
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
                        scan.recordsSinceRelease &+= 1
                        if scan.recordsSinceRelease == Scan.recordsPerRelease { scan.releaseMappedPages() }
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

    /// Grows the bucket array before it is overfilled: a hash file keeps the bucket
    /// count it was created with, and with several records per bucket every write
    /// walks a chain. Rebuilding is cheap while the file is small (a store that
    /// grows by saves doubles its buckets, so the rebuilds cost O(n) in all).
    func reserveCapacity(_ records: Int) throws {
        let hdb = try open()
        let buckets = Int(tchdbbnum(hdb))
        guard records > buckets * TokyoCabinetTable.recordsPerBucketBeforeGrowing else { return }
        // One bucket per two records: short chains, and half the bucket array's bytes on disk.
        let target = max(records / 2, buckets * 2)
        guard tchdboptimize(hdb, Int64(target), -1, -1, UInt8.max) else { throw failure("grow buckets") }
    }

    /// Tokyo Cabinet's optimize: the file is rewritten without free blocks, with
    /// buckets for twice its records (written to a temporary file, then renamed).
    func compact() throws {
        let hdb = try open()
        guard tchdboptimize(hdb, 0, -1, -1, UInt8.max) else { throw failure("compact") }
    }

    /// How full the buckets may get before ``reserveCapacity(_:)`` rebuilds the file.
    static let recordsPerBucketBeforeGrowing = 3

    /// The file's bucket count.
    var bucketCount: Int {
        guard let handle else { return 0 }
        return Int(tchdbbnum(handle))
    }

    func beginTransaction() throws {
        if readOnly { throw CabinetError.readOnly(path: path, reason: "a save needs to write") }
        guard tchdbtranbegin(try open()) else { throw failure("begin transaction") }
    }

    func commitTransaction() throws {
        guard tchdbtrancommit(try open()) else { throw failure("commit") }
    }

    func abortTransaction() throws {
        guard tchdbtranabort(try open()) else { throw failure("abort transaction") }
    }

    /// Copies the file to `destination` while holding its lock: a consistent snapshot.
    func copy(to destination: String) throws {
        guard tchdbcopy(try open(), destination) else { throw failure("copy") }
    }

    func close() {
        guard let handle else { return }
        _ = tchdbclose(handle)
        tchdbdel(handle)
        self.handle = nil
    }
}
