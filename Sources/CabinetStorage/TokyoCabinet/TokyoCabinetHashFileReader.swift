import Foundation

/// A Tokyo Cabinet hash database read record by record without Tokyo Cabinet,
/// in either byte order: how a store written on a Mac (little-endian) is read
/// on Debian (big-endian), whose Tokyo Cabinet refuses it.
///
/// Records are read in file order with ``BlockReader``, as Cabinet's own scans
/// read native files, and each is checked against the hash byte Tokyo Cabinet
/// keeps of its key. Every byte is untrusted: a damaged block is reported with
/// its offset and the walk goes on at the next record the file's hash index
/// (its buckets and their chains) points to, so one damaged record costs that
/// record only. Nothing here writes; the file is mapped read-only.
package final class TokyoCabinetHashFileReader {
    /// What went wrong at one place in the file: `key` when the record's key could be read.
    package struct Damage {
        package var offset: Int
        package var key: [UInt8]?
        package var reason: String
    }

    package let path: String
    package let header: TokyoCabinetHashHeader
    private let descriptor: Int32
    private let map: UnsafeMutableRawPointer?
    private let length: Int

    /// Opens and maps the file at `path`, refusing what it cannot read: a file
    /// that is not a Tokyo Cabinet hash database (or whose header makes no sense
    /// in either byte order), a B+ tree file, compressed records.
    package init(path: String) throws {
        self.path = path
        let location = RecordLocation(file: path)
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            throw DirectoryFiles.failure("open", path)
        }
        var status = stat()
        guard fstat(fd, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            _ = close(fd)
            throw CabinetError.notADatabase(location, reason: "it is not a regular file")
        }
        let size = Int(status.st_size)
        var head = [UInt8](repeating: 0, count: TokyoCabinetDirectory.headerSize)
        let read = head.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard read == head.count, let header = head.withUnsafeBytes({ TokyoCabinetHashHeader(head: $0, fileSize: size) }) else {
            _ = close(fd)
            let why = head.starts(with: TokyoCabinetDirectory.magic) && read == head.count
                ? "its header makes no sense in either byte order (damaged)" : "it does not start with Tokyo Cabinet's magic"
            throw CabinetError.notADatabase(location, reason: why)
        }
        guard header.type == TokyoCabinetHashHeader.hashType else {
            _ = close(fd)
            throw CabinetError.notADatabase(location, reason: "it is the hash file under a B+ tree (an index file), which is read only through Tokyo Cabinet; leave it out, and `cabinet reindex` builds the index again from the records")
        }
        guard !header.isCompressed else {
            _ = close(fd)
            throw CabinetError.notADatabase(location, reason: "its records are compressed (Tokyo Cabinet option \(header.options)), which Cabinet does not read without Tokyo Cabinet")
        }
        guard let map = mmap(nil, size, PROT_READ, MAP_SHARED, fd, 0), map != MAP_FAILED else {
            let code = errno
            _ = close(fd)
            throw DirectoryFiles.failure("mmap", path, code: code)
        }
        _ = madvise(map, size, Int32(MADV_SEQUENTIAL))
        (self.header, descriptor, self.map, length) = (header, fd, map, size)
    }

    deinit {
        if let map { munmap(map, length) }
        _ = close(descriptor)
    }

    /// The whole file's bytes, mapped read-only.
    package func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: map, count: length))
    }

    /// Hands every readable record to `body` in file order and every damaged
    /// place to `damaged`; returns how many records `body` got.
    package func forEachRecord(_ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Void,
                               damaged: (Damage) -> Void) throws -> Int {
        try Self.forEachRecord(in: UnsafeRawBufferPointer(start: map, count: length), header: header, path: path, body, damaged: damaged)
    }

    /// The walk over `file`'s bytes (the whole file), apart from any mapping so
    /// that `make fuzz` can feed it arbitrary bytes.
    package static func forEachRecord(in file: UnsafeRawBufferPointer, header: TokyoCabinetHashHeader, path: String,
                                      _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Void,
                                      damaged: (Damage) -> Void) throws -> Int {
        let stated = Int(clamping: header.fileSize)
        if stated != file.count {
            damaged(Damage(offset: min(stated, file.count), reason: "the header says the file has \(stated) bytes, but it has \(file.count): it was cut short or grown while it was copied; records past the end are missing"))
        }
        let end = min(stated, file.count)
        let region = UnsafeRawBufferPointer(rebasing: file[..<end])
        let reader = BlockReader(file: region, bigEndian: header.byteOrder == .bigEndian, wideOffsets: header.wideOffsets, path: path,
                                 advice: "the record there is skipped")
        var index: RecordIndex?
        var offset = Int(clamping: header.firstRecord)
        var records = 0
        var damagedBlocks = 0
        while offset < end {
            let block: BlockReader.Block
            do {
                block = try reader.block(at: offset)
            } catch let error as CabinetError {
                damagedBlocks += 1
                damaged(Damage(offset: offset, reason: error.underlying?.message ?? "\(error)"))
                // Resume at the next record the hash index knows of.
                if index == nil { index = RecordIndex(file: region, header: header) }
                guard let next = index?.firstOffset(after: offset) else { break }
                offset = next
                continue
            }
            if let (key, value) = block.record {
                let expected = TokyoCabinetHashHeader.bucketAndHash(of: key, bucketCount: header.bucketCount).hash
                if region[offset + 1] == expected {
                    try body(key, value)
                    records += 1
                } else {
                    damagedBlocks += 1
                    damaged(Damage(offset: offset, key: Array(key),
                                   reason: "the record's key does not match the hash Tokyo Cabinet kept of it (stored \(region[offset + 1]), computed \(expected)): its key or header is damaged"))
                }
            }
            offset += block.size
        }
        if damagedBlocks == 0, UInt64(records) != header.recordCount {
            damaged(Damage(offset: 0, reason: "the header counts \(header.recordCount) records, but \(records) were found in the file"))
        }
        return records
    }
}

/// The offsets of the records a hash file's index reaches: every bucket's
/// record and, through their left and right child offsets, the rest of its
/// chain. Built only after damage, to find where the next whole record starts.
private struct RecordIndex {
    private var offsets: [Int]

    init(file: UnsafeRawBufferPointer, header: TokyoCabinetHashHeader) {
        let width = Int(header.bucketWidth)
        let shift = Int(header.alignmentPower)
        let first = Int(clamping: header.firstRecord)
        func offset(at position: Int) -> Int? {
            guard position >= 0, position <= file.count - width else { return nil }
            let raw: UInt64 = width == 8 ? file.loadUnaligned(fromByteOffset: position, as: UInt64.self)
                                         : UInt64(file.loadUnaligned(fromByteOffset: position, as: UInt32.self))
            let value = header.byteOrder == .bigEndian ? (width == 8 ? UInt64(bigEndian: raw) : UInt64(UInt32(bigEndian: UInt32(raw))))
                                                       : (width == 8 ? UInt64(littleEndian: raw) : UInt64(UInt32(littleEndian: UInt32(raw))))
            guard value > 0, value <= UInt64(Int.max) >> shift else { return nil }
            let target = Int(value) << shift
            return target >= first && target < file.count ? target : nil
        }
        var seen = Set<Int>()
        var pending: [Int] = []
        let buckets = Int(clamping: header.bucketCount)
        for bucket in 0..<buckets {
            if let target = offset(at: TokyoCabinetDirectory.headerSize + bucket * width) { pending.append(target) }
        }
        // Each offset is visited once (a damaged chain may loop), and only records have children.
        while let next = pending.popLast() {
            guard seen.insert(next).inserted, file[next] == TokyoCabinetFileScan.recordMagic else { continue }
            if let left = offset(at: next + 2) { pending.append(left) }
            if let right = offset(at: next + 2 + width) { pending.append(right) }
        }
        offsets = seen.sorted()
    }

    /// The first record offset the index knows past `offset`, if any.
    func firstOffset(after offset: Int) -> Int? {
        var low = 0, high = offsets.count
        while low < high {
            let middle = (low + high) / 2
            if offsets[middle] <= offset { low = middle + 1 } else { high = middle }
        }
        return low < offsets.count ? offsets[low] : nil
    }
}
