import CTokyoCabinet
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension TokyoCabinetLookup {
    /// What ``readUnmapped(_:key:bigEndian:path:_:)`` found.
    enum UnmappedOutcome<R> {
        case found(R)
        case absent
        /// A file this does not read (compression, a custom codec, delayed writes): Tokyo Cabinet's to answer.
        case notRead
    }

    /// ``find(_:key:bigEndian:)`` for a key whose walk leaves Tokyo Cabinet's map
    /// (a file larger than ``TokyoCabinetBackend/Options/mappedSize``): the same
    /// walk from the bucket, each record's head, key and value read with
    /// `pread(2)` from the database's descriptor, every offset and size checked
    /// against the file's size before it is used. The value is copied into a
    /// buffer of its own for `body`.
    ///
    /// Why not `tchdbget3`: Tokyo Cabinet trusts the sizes in a record's head (it
    /// allocates what a damaged one claims, and ends the process when that fails),
    /// so a record this reader refuses must never reach it. Damage throws
    /// `backendFailure` naming the file and the offset.
    static func readUnmapped<R>(_ hdb: UnsafeMutablePointer<TCHDB>, key: UnsafeRawBufferPointer, bigEndian: Bool, path: String,
                                _ body: (UnsafeRawBufferPointer) throws -> R) throws -> UnmappedOutcome<R> {
        let fd = hdb.pointee.fd
        guard fd >= 0, let walk = LookupWalk(hdb, bigEndian: bigEndian), let (entry, hash) = walk.bucket(of: key) else { return .notRead }
        guard var offset = walk.link(at: entry) else { throw walk.badLink(at: entry).error(path: path) }
        var steps = walk.maxSteps
        // A record's head: magic, hash, two links, padding size, then two sizes of at most 5 bytes.
        let head = UnsafeMutableRawBufferPointer.allocate(byteCount: walk.header + 10, alignment: 8)
        defer { head.deallocate() }
        while offset > 0 {
            guard steps > 0 else { throw walk.circle(at: offset).error(path: path) }
            steps -= 1
            guard offset >= walk.firstRecord, offset <= walk.fileSize - walk.header else {
                throw walk.outsideRecords(offset).error(path: path)
            }
            let headBytes = UnsafeRawBufferPointer(rebasing: head[0..<min(head.count, walk.fileSize - offset)])
            try readFully(fd, into: UnsafeMutableRawBufferPointer(mutating: headBytes), at: offset, path: path)
            guard headBytes[0] == TokyoCabinetFileScan.recordMagic else {
                throw walk.notARecord(offset, magic: headBytes[0]).error(path: path)
            }
            let left = 2, right = left + (walk.wide ? 8 : 4)
            func follow(_ side: Int) throws -> Int {
                guard let next = walk.link(in: headBytes, at: side) else { throw walk.badLink(at: offset + side).error(path: path) }
                return next
            }
            let recordHash = headBytes[1]
            if hash != recordHash {
                offset = try follow(hash > recordHash ? left : right)
                continue
            }
            var cursor = walk.header
            guard let keySize = BlockReader.decodeSize(headBytes, &cursor), let valueSize = BlockReader.decodeSize(headBytes, &cursor) else {
                throw walk.endlessSize(offset).error(path: path)
            }
            let keyStart = offset + cursor
            guard keySize <= walk.fileSize - keyStart, valueSize <= walk.fileSize - keyStart - keySize else {
                throw walk.tooLong(offset, keySize, valueSize).error(path: path)
            }
            var order: Int32 = key.count == keySize ? 0 : key.count > keySize ? 1 : -1
            if order == 0 && keySize > 0 {
                let stored = UnsafeMutableRawBufferPointer.allocate(byteCount: keySize, alignment: 1)
                defer { stored.deallocate() }
                try readFully(fd, into: stored, at: keyStart, path: path)
                order = memcmp(key.baseAddress!, stored.baseAddress!, keySize)
            }
            if order == 0 {
                let value = UnsafeMutableRawBufferPointer.allocate(byteCount: max(valueSize, 1), alignment: 16)
                defer { value.deallocate() }
                let bytes = UnsafeMutableRawBufferPointer(rebasing: value[0..<valueSize])
                try readFully(fd, into: bytes, at: keyStart + keySize, path: path)
                return .found(try body(UnsafeRawBufferPointer(bytes)))
            }
            offset = try follow(order > 0 ? left : right)
        }
        return .absent
    }

    /// Reads `buffer.count` bytes at `offset` of `fd`; a file that ends first is damage (it is shorter than its header says).
    private static func readFully(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int, path: String) throws {
        var done = 0
        while done < buffer.count {
            let count = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
            if count < 0 {
                if errno == EINTR { continue }
                throw CabinetError.systemCallFailure(RecordLocation(file: path), operation: "read", errno: errno,
                                                     message: String(cString: strerror(errno)))
            }
            guard count > 0 else {
                throw Damage(offset: offset, what: "the file ends at \(offset + done), before the record does").error(path: path)
            }
            done += count
        }
    }
}

extension TokyoCabinetLookup {
    /// Whether `hdb` holds `key`, its walk made in the map, or beyond it with
    /// `pread` (the value not read); `nil` for a file this does not read. Damage
    /// on the walk throws `backendFailure` naming `path` and `operation`.
    @inline(__always)
    static func holds(_ hdb: UnsafeMutablePointer<TCHDB>, key: UnsafeRawBufferPointer, bigEndian: Bool,
                      path: String, operation: String) throws -> Bool? {
        switch find(hdb, key: key, bigEndian: bigEndian) {
        case .found: return true
        case .absent: return false
        case .damaged(let damage): throw damage.error(path: path, operation: operation)
        case .unsettled:
            switch try readUnmapped(hdb, key: key, bigEndian: bigEndian, path: path, { _ in () }) {
            case .found: return true
            case .absent: return false
            case .notRead: return nil
            }
        }
    }

    /// Throws if the walk to `key`'s place in `hdb` meets damage: Tokyo Cabinet's
    /// put and delete walk the same records (the bucket's tree, to the key or the
    /// empty link where it goes), trusting their sizes as its reads do.
    @inline(__always)
    static func refuseDamagedWalk(_ hdb: UnsafeMutablePointer<TCHDB>, key: UnsafeRawBufferPointer, bigEndian: Bool,
                                  path: String, operation: String) throws {
        _ = try holds(hdb, key: key, bigEndian: bigEndian, path: path, operation: operation)
    }
}
