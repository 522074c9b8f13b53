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
/// Two answers are final: a record found (its key compared byte for byte), and
/// no record, when the walk ends at an empty link as Tokyo Cabinet's own ends
/// (every record on the way inside the map, with its magic byte, and its links
/// followed as Tokyo Cabinet follows them). Every offset and length is checked
/// against the mapped size. Everything else (a record beyond the map, a header
/// that does not parse, a walk longer than the file has records, a file with
/// compression or a custom codec, delayed writes) is ``Outcome/unsettled``, and
/// the caller asks Tokyo Cabinet, whose answer (or error) stands.
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
        case unsettled

        static func == (a: Outcome, b: Outcome) -> Bool {
            switch (a, b) {
            case (.found(let x), .found(let y)): x.baseAddress == y.baseAddress && x.count == y.count
            case (.absent, .absent), (.unsettled, .unsettled): true
            default: false
            }
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
        guard let walk = Walk(hdb, bigEndian: bigEndian), let (entry, hash) = walk.bucket(of: key),
              var offset = walk.link(at: entry) else { return .unsettled }
        // A damaged file could link records in a circle: the walk is bounded (`Walk.maxSteps`).
        var steps = walk.maxSteps
        while offset > 0 {
            guard steps > 0 else { return .unsettled }
            steps -= 1
            switch walk.visit(offset, key: key, hash: hash) {
            case .found(let value): return .found(value)
            case .next(let next): offset = next
            case .unsettled: return .unsettled
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
    /// hash puts a million 4-byte row keys in 154,865 buckets), and an index query
    /// that loads a thousand objects spent a third of its time waiting for them.
    ///
    /// A hint only: it changes nothing, and a key it cannot follow (or not within
    /// `rounds` steps) is dropped. Returns how many keys it followed to their value
    /// (for tests). Same rule as `find`: while no thread writes.
    @discardableResult
    static func prefetch<K: Keys>(_ hdb: UnsafeMutablePointer<TCHDB>, keys: K, bigEndian: Bool,
                                  rounds: Int = prefetchRounds) -> Int {
        guard keys.count > 1, let walk = Walk(hdb, bigEndian: bigEndian) else { return 0 }
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
                    case .unsettled: next = nil
                    }
                }
                guard let next, next > 0 else { continue }
                lookup.offset = next
                walk.prefetch(next, bytes: Walk.recordHeadBytes)
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
private struct Walk {
    enum Step {
        /// The key's value, in the map.
        case found(UnsafeRawBufferPointer)
        /// The next record of the tree to look at (0: none, the key is not there).
        case next(Int)
        /// Not something this walk reads: ask Tokyo Cabinet.
        case unsettled
    }

    /// A damaged file could link records in a circle (or claim any count): a walk
    /// stops after as many steps as there are records, and at most 100,000, far
    /// deeper than any bucket's tree.
    let maxSteps: Int
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
        maxSteps = db.rnum < 100_000 ? Int(db.rnum) + 1 : 100_001
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

    @inline(__always)
    private func number<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
        let raw = file.loadUnaligned(fromByteOffset: offset, as: T.self)
        return bigEndian ? T(bigEndian: raw) : T(littleEndian: raw)
    }

    /// The record offset stored at `offset` (a bucket entry or a child link), `nil` if it cannot be one.
    @inline(__always)
    func link(at offset: Int) -> Int? {
        let value = wide ? number(UInt64.self, at: offset) : UInt64(number(UInt32.self, at: offset))
        guard value <= UInt64(Int.max) >> apow else { return nil }
        return Int(value) << apow
    }

    /// One step: the record at `offset` holds `key` (hash byte `hash`), or names the next record to look at.
    @inline(__always)
    func visit(_ offset: Int, key: UnsafeRawBufferPointer, hash: UInt8) -> Step {
        let mapped = file.count
        guard offset <= mapped - header, file[offset] == TokyoCabinetFileScan.recordMagic else { return .unsettled }
        let recordHash = file[offset + 1]
        let left = offset + 2, right = left + (wide ? 8 : 4)
        if hash != recordHash {
            return link(at: hash > recordHash ? left : right).map(Step.next) ?? .unsettled
        }
        var cursor = offset + header
        guard let keySize = BlockReader.decodeSize(file, &cursor), let valueSize = BlockReader.decodeSize(file, &cursor),
              keySize <= mapped - cursor, valueSize <= mapped - cursor - keySize else { return .unsettled }
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
        return link(at: order > 0 ? left : right).map(Step.next) ?? .unsettled
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
