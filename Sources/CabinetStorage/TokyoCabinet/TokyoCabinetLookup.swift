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
/// Only a record found here is an answer: its key is compared byte for byte, and
/// every offset and length is checked against the mapped size. Everything else
/// (no such key, a record beyond the map, a header that does not parse, a file
/// with compression or a custom codec, delayed writes) is ``Outcome/unsettled``,
/// and the caller asks Tokyo Cabinet, whose answer (or error) stands. So a
/// mistake here can cost a call, never a record.
///
/// It reads the map and the handle's sizes and changes nothing, so threads may
/// look up at once on a handle in Tokyo Cabinet's thread-safe mode, under the
/// same rule as its reads there (``TokyoCabinetBackend/Options/concurrentReads``):
/// while no thread writes.
enum TokyoCabinetLookup {
    enum Outcome {
        /// The value's bytes, in Tokyo Cabinet's map: valid until the next write.
        case found(UnsafeRawBufferPointer)
        case unsettled
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
        let db = hdb.pointee
        guard !db.async, let base = db.map else { return .unsettled }
        // The map covers the header and buckets (msiz) and, beyond, up to xmsiz bytes of the file.
        let mapped = Int(clamping: min(max(db.msiz, db.xmsiz), db.fsiz))
        let file = UnsafeRawBufferPointer(start: base, count: mapped)
        let wide = db.ba64 != nil
        let apow = Int(db.apow)
        guard apow < 32 else { return .unsettled }

        // Tokyo Cabinet's two hashes of the key (tchdbbidx).
        let (bucketIndex, hash) = TokyoCabinetHashHeader.bucketAndHash(of: key, bucketCount: db.bnum)
        let bucket = Int(bucketIndex)
        let count = key.count
        let entry = bucketsOffset + bucket * (wide ? 8 : 4)
        guard entry + (wide ? 8 : 4) <= min(Int(clamping: db.msiz), mapped) else { return .unsettled }
        func number<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
            let raw = file.loadUnaligned(fromByteOffset: offset, as: T.self)
            return bigEndian ? T(bigEndian: raw) : T(littleEndian: raw)
        }
        func link(at offset: Int) -> Int? {
            let value = wide ? number(UInt64.self, at: offset) : UInt64(number(UInt32.self, at: offset))
            guard value <= UInt64(Int.max) >> apow else { return nil }
            return Int(value) << apow
        }
        guard var offset = link(at: entry) else { return .unsettled }
        // A damaged file could link records in a circle (or claim any count): the
        // walk stops at as many steps as there are records, and at most 100,000,
        // far deeper than any bucket's tree.
        var steps = db.rnum < 100_000 ? Int(db.rnum) + 1 : 100_001
        let header = 2 + (wide ? 16 : 8) + 2
        while offset > 0 {
            steps -= 1
            guard steps >= 0, offset <= mapped - header, file[offset] == TokyoCabinetFileScan.recordMagic else { return .unsettled }
            let recordHash = file[offset + 1]
            let left = offset + 2, right = left + (wide ? 8 : 4)
            if hash != recordHash {
                guard let next = link(at: hash > recordHash ? left : right) else { return .unsettled }
                offset = next
                continue
            }
            var cursor = offset + header
            guard let keySize = BlockReader.decodeSize(file, &cursor), let valueSize = BlockReader.decodeSize(file, &cursor),
                  keySize <= mapped - cursor, valueSize <= mapped - cursor - keySize else { return .unsettled }
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
            guard let next = link(at: order > 0 ? left : right) else { return .unsettled }
            offset = next
        }
        return .unsettled
    }
}
