import CTokyoCabinet
import Foundation

/// Reads every record of an open Tokyo Cabinet hash database straight from its
/// file, in file order: what `tchdbforeach` delivers, without its per-record cost.
///
/// Why not `tchdbforeach`: Debian's libtokyocabinet is built with Tokyo Cabinet's
/// test-yield macro, so it calls `sched_yield()` about once per record it reads
/// (0.23 s of system calls in a scan of a million records on the machine in
/// BENCHMARKS.md, half of the whole scan). Writes still go through Tokyo
/// Cabinet; only whole-file scans are read here.
///
/// The record region is a sequence of blocks from the first record's offset to
/// the file size, each a record (magic 0xC8) or a free block (magic 0xB0), as
/// `docs/FORMAT.md` describes. The file is mapped read-only for the scan, over
/// the database's own descriptor (opening the path again would drop Tokyo
/// Cabinet's locks when closed). Every length is checked against the mapped
/// size before it is used: a damaged file ends the scan with an error naming
/// the offset, never a read out of bounds.
///
/// The scan steps aside (`.unsupported`, and the caller uses `tchdbforeach`)
/// for anything it does not read itself: compressed or custom-coded records, a
/// transaction or delayed writes in progress, or a header whose byte order it
/// cannot tell.
enum TokyoCabinetFileScan {
    enum Outcome {
        case finished, stopped, unsupported
    }

    static let recordMagic: UInt8 = 0xC8
    static let freeBlockMagic: UInt8 = 0xB0
    /// Where the bucket count sits in the header: how the byte order is told.
    static let bucketCountOffset = 40

    static func forEach(_ hdb: UnsafeMutablePointer<TCHDB>, path: String,
                        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws -> Outcome {
        let db = hdb.pointee
        guard !db.zmode, db.enc == nil, !db.tran, !db.async, db.fd >= 0 else { return .unsupported }
        var status = stat()
        guard fstat(db.fd, &status) == 0 else { return .unsupported }
        let fileSize = Int(clamping: db.fsiz)
        let firstRecord = Int(clamping: db.frec)
        // Mapping beyond the end of the file would fault on access: Tokyo Cabinet's
        // idea of the size must be backed by the file.
        guard fileSize <= Int(status.st_size), firstRecord > bucketCountOffset + 8, firstRecord <= fileSize else {
            return .unsupported
        }
        guard let map = mmap(nil, fileSize, PROT_READ, MAP_SHARED, db.fd, 0), map != MAP_FAILED else {
            return .unsupported
        }
        defer { munmap(map, fileSize) }
        _ = madvise(map, fileSize, Int32(MADV_SEQUENTIAL))
        let file = UnsafeRawBufferPointer(start: map, count: fileSize)
        guard let bigEndian = byteOrderIsBigEndian(file, bucketCount: db.bnum) else { return .unsupported }
        let reader = BlockReader(file: file, bigEndian: bigEndian, wideOffsets: db.ba64 != nil, path: path)

        var offset = firstRecord
        var pages = MappedPages()
        while offset < fileSize {
            let block = try reader.block(at: offset)
            offset += block.size
            guard let record = block.record else { continue }
            if try !body(record.key, record.value) { return .stopped }
            if pages.countRecord() { MappedPages.release(map, length: offset) }
        }
        return .finished
    }

    /// The header stores the bucket count in the byte order the library wrote
    /// (Debian's writes big-endian); the handle knows the count, so whichever
    /// reading matches tells the order. Neither, or both: nil.
    static func byteOrderIsBigEndian(_ file: UnsafeRawBufferPointer, bucketCount: UInt64) -> Bool? {
        guard file.count >= bucketCountOffset + 8 else { return nil }
        let stored = file.loadUnaligned(fromByteOffset: bucketCountOffset, as: UInt64.self)
        let big = UInt64(bigEndian: stored) == bucketCount
        let little = UInt64(littleEndian: stored) == bucketCount
        guard big != little else { return nil }
        return big
    }
}

/// Decodes the blocks of a mapped Tokyo Cabinet hash file, checking every length.
/// (`package`: the fuzzer in `make fuzz` feeds it arbitrary bytes.)
package struct BlockReader {
    package struct Block {
        package var size: Int
        package var record: (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)?
    }

    let file: UnsafeRawBufferPointer
    let bigEndian: Bool
    /// Files made with Tokyo Cabinet's large option keep 8-byte chain offsets.
    let wideOffsets: Bool
    let path: String
    /// What the message of a damaged block tells the user to do.
    let advice: String

    package init(file: UnsafeRawBufferPointer, bigEndian: Bool, wideOffsets: Bool, path: String,
                 advice: String = "run `cabinet verify`, then restore a backup or `cabinet compact` a copy") {
        self.file = file
        self.bigEndian = bigEndian
        self.wideOffsets = wideOffsets
        self.path = path
        self.advice = advice
    }

    /// The block at `offset`: its size, and its key and value if it is a record.
    @inline(__always)
    package func block(at offset: Int) throws -> Block {
        var cursor = offset
        let magic = try number(UInt8.self, &cursor, at: offset)
        if magic == TokyoCabinetFileScan.freeBlockMagic {
            let size = Int(try number(UInt32.self, &cursor, at: offset))
            // Its magic and its own size take 5 bytes: a smaller one is not a block.
            guard size >= 5, size <= file.count - offset else {
                throw damaged(at: offset, "a free block of \(size) bytes")
            }
            return Block(size: size)
        }
        guard magic == TokyoCabinetFileScan.recordMagic else {
            throw damaged(at: offset, "a block that starts with byte \(magic), neither a record nor a free block")
        }
        let hash = try number(UInt8.self, &cursor, at: offset)
        cursor += wideOffsets ? 16 : 8   // the two chain offsets
        let padding = Int(try number(UInt16.self, &cursor, at: offset))
        let keySize = try varint(&cursor, at: offset)
        let valueSize = try varint(&cursor, at: offset)
        let keyStart = cursor
        let available = file.count - keyStart
        guard keySize <= available, valueSize <= available - keySize, padding <= available - keySize - valueSize else {
            throw damaged(at: offset, "a record of \(keySize) + \(valueSize) bytes that runs past the end of the file")
        }
        let valueStart = keyStart + keySize
        let key = UnsafeRawBufferPointer(rebasing: file[keyStart..<valueStart])
        // A checksum covers a record's value, not its key: a key damaged onto another
        // row would hand the object out under that row. Tokyo Cabinet's hash byte catches it.
        guard TokyoCabinetHashHeader.hashByte(of: key) == hash else {
            throw damaged(at: offset, "a record whose key does not match the hash Tokyo Cabinet keeps for it (its key is damaged)")
        }
        return Block(size: valueStart + valueSize + padding - offset,
                     record: (key, UnsafeRawBufferPointer(rebasing: file[valueStart..<(valueStart + valueSize)])))
    }

    /// A number of `T`'s width at `cursor`, in the file's byte order.
    @inline(__always)
    private func number<T: FixedWidthInteger>(_: T.Type, _ cursor: inout Int, at block: Int) throws -> T {
        let size = MemoryLayout<T>.size
        guard cursor <= file.count - size else { throw damaged(at: block, "a block header cut short by the end of the file") }
        defer { cursor += size }
        let raw = file.loadUnaligned(fromByteOffset: cursor, as: T.self)
        return bigEndian ? T(bigEndian: raw) : T(littleEndian: raw)
    }

    /// Tokyo Cabinet's variable-length size (``decodeSize(_:_:)``); damage names the block.
    @inline(__always)
    private func varint(_ cursor: inout Int, at block: Int) throws -> Int {
        guard let size = BlockReader.decodeSize(file, &cursor) else {
            throw damaged(at: block, "a size cut short by the end of the file, or one that does not end")
        }
        return size
    }

    /// Tokyo Cabinet's variable-length size at `cursor`: 7 bits per byte, least
    /// significant first; a byte with the top bit set (negative as a signed byte)
    /// continues, and carries the bits `255 - byte`. Sizes are 31-bit: a longer
    /// run, or one cut short by the end of `file`, is `nil`. Moves `cursor` past it.
    @inline(__always)
    static func decodeSize(_ file: UnsafeRawBufferPointer, _ cursor: inout Int) -> Int? {
        var value = 0, shift = 0
        while cursor < file.count {
            let byte = file[cursor]
            cursor += 1
            if byte < 0x80 { return value | Int(byte) << shift }
            value |= Int(255 - byte) << shift
            shift += 7
            if shift >= 35 { return nil }
        }
        return nil
    }

    private func damaged(at offset: Int, _ what: String) -> CabinetError {
        .backendFailure(RecordLocation(file: path), operation: "iterate", code: Int32(TCERHEAD),
                        message: "invalid record header at offset \(offset) (\(what)); \(advice)")
    }
}
