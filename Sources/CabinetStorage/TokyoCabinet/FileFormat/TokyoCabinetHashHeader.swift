import CTokyoCabinet
import Foundation

/// The byte order of a Tokyo Cabinet file's own structures (its header numbers,
/// bucket array and record headers; never the keys and values, which are the
/// application's bytes).
///
/// Tokyo Cabinet picks it when it is built: natively (little-endian on Intel
/// and Apple silicon, which is what a Mac's Tokyo Cabinet writes), or byte-swapped
/// with `--enable-swab`, as Debian builds it (big-endian). A Tokyo Cabinet reads
/// only its own layout: Debian's refuses a Mac's files ("invalid meta data").
public enum TokyoCabinetByteOrder: String, Sendable, CustomStringConvertible {
    case littleEndian = "little-endian"
    case bigEndian = "big-endian"

    public var description: String { rawValue }

    /// Who writes files in this layout, for messages.
    var writers: String {
        switch self {
        case .littleEndian: "the layout of Tokyo Cabinet on a Mac (Intel or Apple silicon), and wherever it is built natively"
        case .bigEndian: "the layout of Debian's and Ubuntu's Tokyo Cabinet, built with --enable-swab"
        }
    }

    /// The layout this process's Tokyo Cabinet writes, found once by writing a
    /// tiny file and reading its header back (the library does not say; `nil` if
    /// the probe could not run). Only asked for after an open has failed.
    package static let native: TokyoCabinetByteOrder? = probeNative()

    private static func probeNative() -> TokyoCabinetByteOrder? {
        var template = Array((NSTemporaryDirectory() + "/cabinet-byte-order-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else { return nil }
        let directory = String(cString: made)
        let path = directory + "/probe"
        defer {
            unlink(path)
            rmdir(directory)
        }
        TokyoCabinetYields.skip()
        guard let hdb = tchdbnew() else { return nil }
        defer { tchdbdel(hdb) }
        _ = tchdbtune(hdb, 17, 4, 1, 0)
        guard tchdbopen(hdb, path, Int32(HDBOWRITER | HDBOCREAT)), tchdbclose(hdb) else { return nil }
        return TokyoCabinetHashHeader.read(path: path)?.byteOrder
    }
}

/// The 256-byte header of a Tokyo Cabinet hash database, read without Tokyo
/// Cabinet in whichever byte order makes sense of it (`docs/FORMAT.md`,
/// "Files from a Mac").
///
/// The byte order is told by the numbers themselves: in the wrong order the
/// bucket count reads as something like 10^19, which no file can hold. When both
/// orders are plausible the size field decides (it equals the file's length in
/// exactly one of them).
package struct TokyoCabinetHashHeader: Equatable {
    package var byteOrder: TokyoCabinetByteOrder
    /// 0 for a hash database; 1 for the hash file under a B+ tree (an index).
    package var type: UInt8
    package var flags: UInt8
    package var alignmentPower: UInt8
    package var freeBlockPoolPower: UInt8
    /// `HDBTLARGE` (64-bit offsets) and the compression options.
    package var options: UInt8
    package var bucketCount: UInt64
    package var recordCount: UInt64
    package var fileSize: UInt64
    package var firstRecord: UInt64

    static let typeOffset = 32, alignmentOffset = 34, poolOffset = 35, optionsOffset = 36
    static let bucketCountOffset = 40, recordCountOffset = 48, fileSizeOffset = 56, firstRecordOffset = 64
    static let largeOption: UInt8 = 1 << 0
    /// Deflate, BZIP2, TCBS, custom codec: records Cabinet cannot read without Tokyo Cabinet.
    static let compressionOptions: UInt8 = 0b1_1110
    static let hashType: UInt8 = 0
    /// The hash file under a B+ tree (an index file).
    static let bTreeType: UInt8 = 1

    /// Whether chain offsets and buckets are 8 bytes wide (`HDBTLARGE`).
    package var wideOffsets: Bool { options & Self.largeOption != 0 }
    package var isCompressed: Bool { options & Self.compressionOptions != 0 }
    package var bucketWidth: UInt64 { wideOffsets ? 8 : 4 }

    /// The header in `head` (at least 256 bytes), read in `order`; `nil` if its
    /// numbers cannot describe a file (`fileSize`: the file's real length, if known).
    package init?(head: UnsafeRawBufferPointer, order: TokyoCabinetByteOrder, fileSize realSize: Int?) {
        guard head.count >= TokyoCabinetDirectory.headerSize,
              head.prefix(TokyoCabinetDirectory.magic.count).elementsEqual(TokyoCabinetDirectory.magic) else { return nil }
        func number(_ offset: Int) -> UInt64 {
            let raw = head.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            return order == .bigEndian ? UInt64(bigEndian: raw) : UInt64(littleEndian: raw)
        }
        byteOrder = order
        type = head[Self.typeOffset]
        flags = head[TokyoCabinetDirectory.flagsOffset]
        alignmentPower = head[Self.alignmentOffset]
        freeBlockPoolPower = head[Self.poolOffset]
        options = head[Self.optionsOffset]
        bucketCount = number(Self.bucketCountOffset)
        recordCount = number(Self.recordCountOffset)
        fileSize = number(Self.fileSizeOffset)
        firstRecord = number(Self.firstRecordOffset)
        // Bounds that hold for every file Tokyo Cabinet writes: the buckets lie
        // between the header and the first record, which lies inside the file.
        let limit = UInt64(realSize ?? Int.max)
        guard alignmentPower <= 16, bucketCount > 0, bucketCount < 1 << 40,
              firstRecord >= 256 + bucketCount * bucketWidth, firstRecord <= min(fileSize, limit) else { return nil }
    }

    /// The header in `head`, in whichever byte order makes sense of it; `nil`
    /// when neither does (not a hash database's header, or a damaged one).
    package init?(head: UnsafeRawBufferPointer, fileSize: Int?) {
        let little = TokyoCabinetHashHeader(head: head, order: .littleEndian, fileSize: fileSize)
        let big = TokyoCabinetHashHeader(head: head, order: .bigEndian, fileSize: fileSize)
        switch (little, big) {
        case (let one?, nil), (nil, let one?): self = one
        case (let little?, let big?):
            guard let fileSize, (little.fileSize == UInt64(fileSize)) != (big.fileSize == UInt64(fileSize)) else { return nil }
            self = little.fileSize == UInt64(fileSize) ? little : big
        case (nil, nil): return nil
        }
    }

    /// The header of the regular file at `path`, in whichever byte order it was
    /// written; `nil` if it is not a Tokyo Cabinet hash file with a sound header.
    package static func read(path: String) -> TokyoCabinetHashHeader? {
        var status = stat()
        guard lstat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG,
              let head = TokyoCabinetDirectory.readHead(of: path, count: TokyoCabinetDirectory.headerSize) else { return nil }
        return head.withUnsafeBytes { TokyoCabinetHashHeader(head: $0, fileSize: Int(status.st_size)) }
    }

    /// The hash byte Tokyo Cabinet's record of `key` carries (the second half of
    /// ``bucketAndHash(of:bucketCount:)``): a scan that finds a record whose byte
    /// differs has met a damaged key, which must not be read as another row.
    @inline(__always)
    package static func hashByte(of key: UnsafeRawBufferPointer) -> UInt8 {
        var hash: UInt32 = 751
        for position in stride(from: key.count - 1, through: 0, by: -1) {
            hash = (hash &* 31) ^ UInt32(key[position])
        }
        return UInt8(truncatingIfNeeded: hash)
    }

    /// Tokyo Cabinet's bucket for `key` and the hash byte its record carries
    /// (`tchdbbidx`): a record whose stored hash byte differs has a damaged key.
    /// (Inlined: every lookup of `TokyoCabinetLookup` computes it.)
    @inline(__always)
    package static func bucketAndHash(of key: UnsafeRawBufferPointer, bucketCount: UInt64) -> (bucket: UInt64, hash: UInt8) {
        var index: UInt64 = 19_780_211
        var hash: UInt32 = 751
        let count = key.count
        if count == 4, let base = key.baseAddress {
            // A row key, every put and most reads: the loop below unrolled, the same numbers.
            let b0 = UInt64(base.load(as: UInt8.self)), b1 = UInt64(base.load(fromByteOffset: 1, as: UInt8.self))
            let b2 = UInt64(base.load(fromByteOffset: 2, as: UInt8.self)), b3 = UInt64(base.load(fromByteOffset: 3, as: UInt8.self))
            index = ((((index &* 37 &+ b0) &* 37 &+ b1) &* 37 &+ b2) &* 37 &+ b3)
            hash = (hash &* 31) ^ UInt32(b3)
            hash = (hash &* 31) ^ UInt32(b2)
            hash = (hash &* 31) ^ UInt32(b1)
            hash = (hash &* 31) ^ UInt32(b0)
            return (index % bucketCount, UInt8(truncatingIfNeeded: hash))
        }
        for position in 0..<count {
            index = index &* 37 &+ UInt64(key[position])
            hash = (hash &* 31) ^ UInt32(key[count - 1 - position])
        }
        return (index % bucketCount, UInt8(truncatingIfNeeded: hash))
    }
}
