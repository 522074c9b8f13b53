import Foundation

/// A Tokyo Cabinet hash database read record by record without Tokyo Cabinet,
/// in either byte order: how a store written on a Mac (little-endian) is read
/// on Debian (big-endian), whose Tokyo Cabinet refuses it.
///
/// The file is read into memory whole (a file on a mounted volume that shrinks
/// while it is read must not fault a mapping). Every byte is untrusted. Reading
/// is two passes: a survey, then the records it found.
/// - The survey walks the blocks in file order with ``BlockReader``, as Cabinet's
///   own scans read native files. A block counts only if it starts on the file's
///   alignment, parses, and (a record) carries the hash byte Tokyo Cabinet keeps
///   of its key. After a block that does not, the walk resumes at the first
///   record the file's hash index (its buckets and their chains) reaches past the
///   last sound block, so a damaged size cannot hide the records it jumped over.
/// - When anything was damaged, or the count differs from the header's, the
///   records are checked against the index: a record the index reaches but the
///   walk stepped over is taken, and the record whose size covered it is not.
/// Nothing here writes.
package final class TokyoCabinetHashFileReader {
    /// What went wrong at one place in the file: `key` when the record's key could
    /// be read; `recordLost` when a record there is not read (not for a file-wide note).
    package struct Damage {
        package var offset: Int
        package var key: [UInt8]?
        package var reason: String
        package var recordLost = true
    }

    /// The records a survey found: their offsets in the file, in file order.
    package struct Survey {
        package var offsets: [Int] = []
        package var count: Int { offsets.count }
    }

    /// The most damage reports one file gives; past it, one line says how many more.
    package static let damageReportLimit = 1_000

    package let path: String
    package let header: TokyoCabinetHashHeader
    private let bytes: [UInt8]

    /// Reads the file at `path`, refusing what it cannot read: a file that is not
    /// a Tokyo Cabinet hash database (or whose header makes no sense in either
    /// byte order), a B+ tree's file, compressed records.
    package init(path: String) throws {
        self.path = path
        let location = RecordLocation(file: path)
        // Read to its end, whatever its size is by then (no link followed, no FIFO opened).
        guard let bytes = try DirectoryFiles.read(path) else {
            throw CabinetError.notADatabase(location, reason: "it is gone")
        }
        guard let header = bytes.withUnsafeBytes({ TokyoCabinetHashHeader(head: $0, fileSize: bytes.count) }) else {
            let why = bytes.starts(with: TokyoCabinetDirectory.magic) && bytes.count >= TokyoCabinetDirectory.headerSize
                ? "its header makes no sense in either byte order (damaged)" : "it does not start with Tokyo Cabinet's magic"
            throw CabinetError.notADatabase(location, reason: why)
        }
        switch header.type {
        case TokyoCabinetHashHeader.hashType: break
        case TokyoCabinetHashHeader.bTreeType:
            throw CabinetError.notADatabase(location, reason: "it is the hash file under a B+ tree, which a class file or a named-buffer file never is")
        default:
            throw CabinetError.notADatabase(location, reason: "it is a Tokyo Cabinet database of type \(header.type), not a hash database")
        }
        guard !header.isCompressed else {
            throw CabinetError.notADatabase(location, reason: "its records are compressed (Tokyo Cabinet option \(header.options)), which Cabinet does not read without Tokyo Cabinet")
        }
        (self.header, self.bytes) = (header, bytes)
    }

    /// The whole file's bytes.
    package func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes(body)
    }

    /// Finds the file's sound records, handing each damaged place to `damaged`
    /// (at most ``damageReportLimit`` of them, then one that counts the rest).
    package func survey(damaged: (Damage) -> Void) -> Survey {
        var given = 0, withheld = 0, lastWithheld = 0
        let found = bytes.withUnsafeBytes { file in
            Self.survey(file, header: header, path: path) { damage in
                guard given < Self.damageReportLimit else {
                    withheld += 1
                    lastWithheld = damage.offset
                    return
                }
                given += 1
                damaged(damage)
            }
        }
        if withheld > 0 {
            damaged(Damage(offset: lastWithheld, reason: "and \(withheld) more damaged places in this file, not listed one by one"))
        }
        return found
    }

    /// Hands the records of `survey` to `body`, in file order.
    package func forEachRecord(in survey: Survey, _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Void) throws {
        try bytes.withUnsafeBytes { try Self.forEachRecord(in: $0, at: survey, header: header, path: path, body) }
    }

    /// Survey, then every record (for the fuzzer and tests): how many were read.
    package static func forEachRecord(in file: UnsafeRawBufferPointer, header: TokyoCabinetHashHeader, path: String,
                                      _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Void,
                                      damaged: (Damage) -> Void) throws -> Int {
        let found = survey(file, header: header, path: path, damaged: damaged)
        try forEachRecord(in: file, at: found, header: header, path: path, body)
        return found.count
    }

    private static func forEachRecord(in file: UnsafeRawBufferPointer, at survey: Survey, header: TokyoCabinetHashHeader, path: String,
                                      _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Void) throws {
        let reader = blockReader(file, header: header, path: path)
        for offset in survey.offsets {
            if let (key, value) = try reader.block(at: offset).record { try body(key, value) }
        }
    }

    static func blockReader(_ file: UnsafeRawBufferPointer, header: TokyoCabinetHashHeader, path: String) -> BlockReader {
        let end = min(Int(clamping: header.fileSize), file.count)
        return BlockReader(file: UnsafeRawBufferPointer(rebasing: file[..<end]), bigEndian: header.byteOrder == .bigEndian,
                           wideOffsets: header.wideOffsets, path: path, advice: "the record there is not imported")
    }
}
