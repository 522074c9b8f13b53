import CTokyoCabinet
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Finds one record of an open Tokyo Cabinet hash database in the library's own
/// map of the file, as `tchdbget3` does, without its per-call cost.
///
/// Why: Debian's libtokyocabinet yields the CPU inside `tchdbget3` (its test-yield
/// build, as ``TokyoCabinetFileScan`` explains for scans): about 0.6
/// `sched_yield` calls per read, a sixth of the time a query spends loading its
/// objects. Writes, and every read this does not settle, still go through Tokyo
/// Cabinet.
///
/// How Tokyo Cabinet finds a key: its bucket (the key's first hash modulo the
/// bucket count) holds the offset of the first record of a binary tree, ordered
/// by a second, one-byte hash and then by the key (longer first, then `memcmp`);
/// each record's header holds its hash byte and the offsets of its two children.
/// `docs/FORMAT.md` describes the record header.
///
/// Three answers are final: a record found (its key compared byte for byte), no
/// record, when the walk ends at an empty link as Tokyo Cabinet's own ends
/// (every record on the way inside the map, with its magic byte, and its links
/// followed as Tokyo Cabinet follows them), and damage: a link outside the
/// file's records, a block that is not a record, a size that does not end or
/// runs past the end of the file, a walk longer than the file can hold records
/// (links in a circle). Every offset and length is checked against the mapped
/// size and the file's. Damage is never handed to Tokyo Cabinet, which trusts
/// the sizes it reads (a value claiming 2 GiB is a `malloc` that ends the
/// process, a link past the map a read of unmapped memory): the caller throws.
/// A record beyond the map is ``Outcome/unsettled``: the caller reads it with
/// `pread(2)` the same way (``readUnmapped(_:key:bigEndian:_:)``). Only a file
/// this does not read at all (compression or a custom codec, delayed writes) is
/// left to Tokyo Cabinet.
///
/// Why "no record" too: a save asks for keys that are not there all the time
/// (whether a staged record is new, whether a fresh list node ID is free), and
/// each went to `tchdbget3`, a tenth of a list append.
///
/// It reads the map and the handle's sizes and changes nothing, so threads may
/// look up at once on a handle in Tokyo Cabinet's thread-safe mode, under the
/// same rule as its reads there (``TokyoCabinetBackend/Options/concurrentReads``):
/// while no thread writes.
enum TokyoCabinetLookup {
    enum Outcome: Equatable {
        /// The value's bytes, in Tokyo Cabinet's map: valid until the next write.
        case found(UnsafeRawBufferPointer)
        /// No record has the key: the walk of its bucket's tree ended where Tokyo
        /// Cabinet's own (`tchdbgetimpl`) ends with "no record", every record on the
        /// way read and checked in the map.
        case absent
        /// A record beyond the map (read it with `pread`), or a file this does not read.
        case unsettled
        /// The walk met damage: the file must not be handed to Tokyo Cabinet.
        case damaged(Damage)

        static func == (a: Outcome, b: Outcome) -> Bool {
            switch (a, b) {
            case (.found(let x), .found(let y)): x.baseAddress == y.baseAddress && x.count == y.count
            case (.absent, .absent), (.unsettled, .unsettled): true
            case (.damaged(let x), .damaged(let y)): x == y
            default: false
            }
        }
    }

    /// Where a walk met damage, and what it found there.
    struct Damage: Equatable, Error {
        var offset: Int
        var what: String

        /// The error a read of the file at `path` throws: the same words as a scan's (``BlockReader``).
        func error(path: String, operation: String = "read") -> CabinetError {
            .backendFailure(RecordLocation(file: path), operation: operation, code: Int32(TCERHEAD),
                            message: "invalid record header at offset \(offset) (\(what)); run `cabinet verify`, then restore a backup")
        }
    }

    /// Where the bucket array starts (Tokyo Cabinet's `HDBHEADSIZ`).
    static let bucketsOffset = 256

    /// The byte order of `hdb`'s numbers, or `nil` when lookups here are not
    /// supported for it (ask once per open: it does not change).
    static func byteOrder(of hdb: UnsafeMutablePointer<TCHDB>) -> Bool? {
        let db = hdb.pointee
        guard !db.zmode, db.enc == nil, let map = db.map,
              db.msiz >= UInt64(bucketsOffset), db.bnum > 0 else { return nil }
        return TokyoCabinetFileScan.byteOrderIsBigEndian(UnsafeRawBufferPointer(start: map, count: Int(clamping: db.msiz)),
                                                         bucketCount: db.bnum)
    }

    /// Looks `key` up in `hdb`, whose numbers are big-endian when `bigEndian`.
    static func find(_ hdb: UnsafeMutablePointer<TCHDB>, key: UnsafeRawBufferPointer, bigEndian: Bool) -> Outcome {
        guard let walk = LookupWalk(hdb, bigEndian: bigEndian), let (entry, hash) = walk.bucket(of: key) else { return .unsettled }
        guard var offset = walk.link(at: entry) else { return .damaged(walk.badLink(at: entry)) }
        // A damaged file could link records in a circle: the walk is bounded (`LookupWalk.maxSteps`).
        var steps = walk.maxSteps
        while offset > 0 {
            guard steps > 0 else { return .damaged(walk.circle(at: offset)) }
            steps -= 1
            switch walk.visit(offset, key: key, hash: hash) {
            case .found(let value): return .found(value)
            case .next(let next): offset = next
            case .unmapped: return .unsettled
            case .damaged(let damage): return .damaged(damage)
            }
        }
        return .absent
    }

    /// Brings the records of `keys` into the CPU's cache, for ``find(_:key:bigEndian:)``
    /// calls that follow: the lookups walk side by side, one step each per round,
    /// each step asking for the next step's cache line ahead (`cabinet_prefetch`),
    /// so their cache misses overlap instead of coming one after another.
    ///
    /// Why: a lookup is a chain of dependent reads in a map far larger than the
    /// cache (the bucket, then about three records of its tree: Tokyo Cabinet's
    /// hash gives a million row keys several records per bucket), and an index
    /// query that loads many objects spent much of its time waiting for them.
    ///
    /// A hint only: it changes nothing, and a key it cannot follow (or not within
    /// `rounds` steps) is dropped. Returns how many keys it followed to their value
    /// (for tests). Same rule as `find`: while no thread writes.
    @discardableResult
    static func prefetch<K: Keys>(_ hdb: UnsafeMutablePointer<TCHDB>, keys: K, bigEndian: Bool,
                                  rounds: Int = prefetchRounds) -> Int {
        guard keys.count > 1, let walk = LookupWalk(hdb, bigEndian: bigEndian) else { return 0 }
        var pending: [Pending] = []
        pending.reserveCapacity(keys.count)
        for index in 0..<keys.count {
            guard let (entry, hash) = keys.withKey(index, { walk.bucket(of: $0) }) else { continue }
            walk.prefetch(entry, bytes: 8)
            pending.append(Pending(key: index, hash: hash, offset: entry, atBucket: true))
        }
        var round = 0, reached = 0
        while !pending.isEmpty && round < min(rounds, walk.maxSteps + 1) {
            round += 1
            var kept = 0
            for index in pending.indices {
                var lookup = pending[index]
                let next: Int?
                if lookup.atBucket {
                    next = walk.link(at: lookup.offset)
                    lookup.atBucket = false
                } else {
                    switch keys.withKey(lookup.key, { walk.visit(lookup.offset, key: $0, hash: lookup.hash) }) {
                    case .found(let value):
                        walk.prefetch(value.baseAddress.map { UnsafeRawPointer(walk.base).distance(to: $0) } ?? -1, bytes: value.count)
                        reached += 1
                        next = nil
                    case .next(let offset): next = offset
                    case .unmapped, .damaged: next = nil
                    }
                }
                guard let next, next > 0 else { continue }
                lookup.offset = next
                walk.prefetch(next, bytes: LookupWalk.recordHeadBytes)
                pending[kept] = lookup
                kept += 1
            }
            pending.removeLast(pending.count - kept)
        }
        return reached
    }

    /// Rounds of ``prefetch(_:keys:bigEndian:rounds:)`` before it stops: a bucket's
    /// tree is about three records deep (a few more in a file tuned with few buckets).
    static let prefetchRounds = 16
}

extension TokyoCabinetLookup {
    /// The keys of a batch of lookups (``prefetch(_:keys:bigEndian:rounds:)``).
    protocol Keys {
        var count: Int { get }
        func withKey<R>(_ index: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R
    }

    /// A lookup of ``prefetch(_:keys:bigEndian:rounds:)`` under way: its key, its hash
    /// byte, and the record (or, first, the bucket entry) to read next.
    fileprivate struct Pending {
        let key: Int
        let hash: UInt8
        var offset: Int
        var atBucket: Bool
    }

    /// Keys as arrays of bytes.
    struct ByteKeys: Keys {
        let keys: [[UInt8]]
        var count: Int { keys.count }
        func withKey<R>(_ index: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R { keys[index].withUnsafeBytes(body) }
    }

    /// Row keys: each 4-byte little-endian key made on the stack.
    struct RowKeys: Keys {
        let rows: [UInt32]
        var count: Int { rows.count }
        func withKey<R>(_ index: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R { withUnsafeBytes(of: rows[index].littleEndian, body) }
    }
}

/// Tokyo Cabinet's map of one open hash database, as a lookup reads it: the
/// steps of `TokyoCabinetLookup.find`, one record at a time, every offset and
/// length checked against the mapped size.
struct LookupWalk {
    enum Step {
        /// The key's value, in the map.
        case found(UnsafeRawBufferPointer)
        /// The next record of the tree to look at (0: none, the key is not there).
        case next(Int)
        /// The record runs past the map (not past the file): read it with `pread`.
        case unmapped
        /// Not a record a sound file has here.
        case damaged(TokyoCabinetLookup.Damage)
    }

    /// A damaged file could link records in a circle (or claim any record count):
    /// a walk stops after as many steps as the file can hold records (each takes
    /// its header and two sizes, at least one alignment unit), and at most
    /// 100,000, far deeper than any bucket's tree.
    let maxSteps: Int
    /// Tokyo Cabinet's size of the file (at most its length: checked at open) and
    /// where its records start: every link must point between them.
    let fileSize: Int
    let firstRecord: Int
    /// A record's header, sizes and a short key: what the next step reads.
    static let recordHeadBytes = 32

    let base: UnsafeMutableRawPointer
    let file: UnsafeRawBufferPointer
    let bucketCount: UInt64
    /// The end of the bucket array's part of the map (Tokyo Cabinet's `msiz`).
    let bucketsEnd: Int
    let wide: Bool
    let apow: Int
    let bigEndian: Bool
    let header: Int

    /// (Inlined: each put and read makes one, and most of its fields go unread.)
    @inline(__always)
    init?(_ hdb: UnsafeMutablePointer<TCHDB>, bigEndian: Bool) {
        let db = hdb.pointee
        guard !db.async, let base = db.map, db.apow < 32, db.bnum > 0 else { return nil }
        // The map covers the header and buckets (msiz) and, beyond, up to xmsiz bytes of the file.
        let mapped = Int(clamping: min(max(db.msiz, db.xmsiz), db.fsiz))
        self.base = UnsafeMutableRawPointer(base)
        file = UnsafeRawBufferPointer(start: base, count: mapped)
        bucketCount = db.bnum
        bucketsEnd = min(Int(clamping: db.msiz), mapped)
        wide = db.ba64 != nil
        apow = Int(db.apow)
        self.bigEndian = bigEndian
        header = 2 + (wide ? 16 : 8) + 2
        fileSize = Int(clamping: db.fsiz)
        firstRecord = min(Int(clamping: db.frec), fileSize)
        let smallestRecord = max(header + 2, 1 << apow)
        maxSteps = min((fileSize - firstRecord) / smallestRecord + 1, 100_001)
    }

    /// The damage of a walk that did not end within ``maxSteps``.
    func circle(at offset: Int) -> TokyoCabinetLookup.Damage {
        .init(offset: offset, what: "a bucket's records linked in a circle, or deeper than the file holds records")
    }

    /// The damage of a link at `offset` that cannot be a record's offset.
    func badLink(at offset: Int) -> TokyoCabinetLookup.Damage {
        .init(offset: offset, what: "a link to a record beyond any file")
    }

    /// The offset of `key`'s bucket entry and the key's hash byte (Tokyo Cabinet's `tchdbbidx`).
    @inline(__always)
    func bucket(of key: UnsafeRawBufferPointer) -> (entry: Int, hash: UInt8)? {
        let (bucketIndex, hash) = TokyoCabinetHashHeader.bucketAndHash(of: key, bucketCount: bucketCount)
        let width = wide ? 8 : 4
        let entry = TokyoCabinetLookup.bucketsOffset + Int(bucketIndex) * width
        guard entry + width <= bucketsEnd else { return nil }
        return (entry, hash)
    }

    /// The record offset stored at `offset` (a bucket entry or a child link), `nil` if it cannot be one.
    @inline(__always)
    func link(at offset: Int) -> Int? {
        link(in: file, at: offset)
    }

    /// ``link(at:)`` in `bytes` (a record's head read from the file), `offset` bytes in.
    @inline(__always)
    func link(in bytes: UnsafeRawBufferPointer, at offset: Int) -> Int? {
        let value: UInt64
        if wide {
            let raw = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            value = bigEndian ? UInt64(bigEndian: raw) : UInt64(littleEndian: raw)
        } else {
            let raw = bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
            value = UInt64(bigEndian ? UInt32(bigEndian: raw) : UInt32(littleEndian: raw))
        }
        guard value <= UInt64(Int.max) >> apow else { return nil }
        return Int(value) << apow
    }

    /// One step: the record at `offset` holds `key` (hash byte `hash`), or names the next record to look at.
    @inline(__always)
    func visit(_ offset: Int, key: UnsafeRawBufferPointer, hash: UInt8) -> Step {
        let mapped = file.count
        guard offset >= firstRecord, offset <= fileSize - header else { return .damaged(outsideRecords(offset)) }
        guard offset <= mapped - header else { return .unmapped }
        guard file[offset] == TokyoCabinetFileScan.recordMagic else { return .damaged(notARecord(offset, magic: file[offset])) }
        let recordHash = file[offset + 1]
        let left = offset + 2, right = left + (wide ? 8 : 4)
        if hash != recordHash {
            let side = hash > recordHash ? left : right
            return link(at: side).map(Step.next) ?? .damaged(badLink(at: side))
        }
        var cursor = offset + header
        guard let keySize = BlockReader.decodeSize(file, &cursor), let valueSize = BlockReader.decodeSize(file, &cursor) else {
            // Cut short by the end of the map, not of the file: read with pread.
            return cursor >= mapped && mapped < fileSize ? .unmapped : .damaged(endlessSize(offset))
        }
        guard keySize <= fileSize - cursor, valueSize <= fileSize - cursor - keySize else {
            return .damaged(tooLong(offset, keySize, valueSize))
        }
        guard keySize <= mapped - cursor, valueSize <= mapped - cursor - keySize else { return .unmapped }
        let count = key.count
        let order: Int32
        if count != keySize {
            order = count > keySize ? 1 : -1
        } else if count == 0 {
            order = 0
        } else {
            order = memcmp(key.baseAddress!, base + cursor, count)
        }
        if order == 0 {
            return .found(UnsafeRawBufferPointer(start: base + cursor + keySize, count: valueSize))
        }
        let side = order > 0 ? left : right
        return link(at: side).map(Step.next) ?? .damaged(badLink(at: side))
    }

    func outsideRecords(_ offset: Int) -> TokyoCabinetLookup.Damage {
        .init(offset: offset, what: "a link outside the file's records, which run from \(firstRecord) to \(fileSize)")
    }

    func notARecord(_ offset: Int, magic: UInt8) -> TokyoCabinetLookup.Damage {
        .init(offset: offset, what: "a link to a block that starts with byte \(magic), not a record")
    }

    func endlessSize(_ offset: Int) -> TokyoCabinetLookup.Damage {
        .init(offset: offset, what: "a size that does not end")
    }

    func tooLong(_ offset: Int, _ keySize: Int, _ valueSize: Int) -> TokyoCabinetLookup.Damage {
        .init(offset: offset, what: "a record of \(keySize) + \(valueSize) bytes that runs past the end of the file")
    }

    /// Asks for the cache lines of the `bytes` bytes at `offset` (at most 256), those that are mapped.
    @inline(__always)
    func prefetch(_ offset: Int, bytes: Int) {
        guard offset >= 0, offset < file.count else { return }
        let end = min(offset + min(max(bytes, 1), 256), file.count)
        // The map starts on a page, so offsets align as addresses do.
        var line = offset & ~63
        while line < end {
            cabinet_prefetch(base + line)
            line += 64
        }
    }
}
