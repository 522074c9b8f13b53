import Foundation

/// Rewrites Tokyo Cabinet hash files in the other byte order, for a store that
/// goes to a Mac (`cabinet export`). Only Tokyo Cabinet's own numbers change
/// (`docs/FORMAT.md`, "Files from a Mac"): the header's four counts and offsets,
/// the bucket array, and each block's chain offsets, padding size or free size.
/// Keys, values, varints and the free-block pool are the same in both layouts.
///
/// It converts sound files only, such as those a backup has just written: any
/// damage stops it with an error, since a converted file is read by no check here.
package enum TokyoCabinetByteSwap {
    /// Converts the store directory `source` (written by this machine's Tokyo
    /// Cabinet, closed, sound) into a new directory `destination` whose hash files
    /// are in `order`, whole or not at all (written beside it under a hidden name,
    /// flushed, then renamed into place). Index files (B+ trees) are left out: the
    /// next open with their classes builds them again. Returns what was left out.
    package static func convertStore(at source: String, to destination: String, as order: TokyoCabinetByteOrder) throws -> [String] {
        var skipped: [String] = []
        try TokyoCabinetDirectory.publishDirectory(at: destination, what: "an export") { staging in
            guard mkdir(staging, 0o755) == 0 else { throw DirectoryFiles.failure("create directory", staging) }
            for name in try TokyoCabinetDirectory.allNames(in: source) {
                let from = source + "/" + name, to = staging + "/" + name
                if name.hasPrefix(".") {
                    // The format marker and the catalog are Cabinet's own bytes, the same
                    // everywhere; the rest are the backup's lock files.
                    guard [TokyoCabinetBackend.formatFileName, TokyoCabinetBackend.catalogFileName].contains(name) else { continue }
                    try DirectoryFiles.write(try DirectoryFiles.read(from) ?? [], to: to, sync: true)
                } else if let header = TokyoCabinetHashHeader.read(path: from), header.type == TokyoCabinetHashHeader.hashType {
                    try convertFile(from, to: to, as: order)
                } else {
                    skipped.append("\(name): an index file, built again from the records when the store is opened with its classes")
                }
            }
            try DirectoryFiles.syncDirectory(staging)
        }
        return skipped
    }

    /// Copies the hash file at `source` to the new file `destination`, in `order`:
    /// read through a read-only map, converted block by block in a buffer, and
    /// written with plain `write(2)` calls (a full disk is an error, never a fault
    /// in a mapped page), then flushed.
    package static func convertFile(_ source: String, to destination: String, as order: TokyoCabinetByteOrder) throws {
        let reader = try TokyoCabinetHashFileReader(path: source)
        let fd = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw DirectoryFiles.failure("create", destination) }
        defer { _ = close(fd) }
        var output = ConvertedFile(descriptor: fd, path: destination, swapping: reader.header.byteOrder != order)
        try reader.withBytes { try convert($0, header: reader.header, path: source, into: &output) }
        try output.flush()
        guard fsync(fd) == 0 else { throw DirectoryFiles.failure("sync", destination) }
    }

    /// Writes `file` (the whole source file) to `output`, its numbers reversed.
    private static func convert(_ file: UnsafeRawBufferPointer, header: TokyoCabinetHashHeader, path: String,
                                into output: inout ConvertedFile) throws {
        guard header.fileSize == UInt64(file.count) else {
            throw CabinetError.notADatabase(RecordLocation(file: path), reason: "its header says \(header.fileSize) bytes, but it has \(file.count); only a sound file is converted")
        }
        let start = try output.append(file[0..<TokyoCabinetDirectory.headerSize])
        for offset in [TokyoCabinetHashHeader.bucketCountOffset, TokyoCabinetHashHeader.recordCountOffset,
                       TokyoCabinetHashHeader.fileSizeOffset, TokyoCabinetHashHeader.firstRecordOffset] {
            output.reverse(at: start + offset, width: 8)
        }
        // The buckets, a slice at a time; then the free-block pool (varints) as it is.
        let width = Int(header.bucketWidth)
        let bucketsEnd = TokyoCabinetDirectory.headerSize + Int(header.bucketCount) * width
        var position = TokyoCabinetDirectory.headerSize
        while position < bucketsEnd {
            let end = min(position + 16_384 * width, bucketsEnd)
            let slice = try output.append(file[position..<end])
            for bucket in stride(from: 0, to: end - position, by: width) { output.reverse(at: slice + bucket, width: width) }
            position = end
        }
        _ = try output.append(file[bucketsEnd..<Int(header.firstRecord)])
        // The blocks are read in the source's order, then their numbers reversed.
        let reader = BlockReader(file: file, bigEndian: header.byteOrder == .bigEndian,
                                 wideOffsets: header.wideOffsets, path: path, advice: "the store was not converted")
        var offset = Int(header.firstRecord)
        while offset < file.count {
            let block = try reader.block(at: offset)
            let copy = try output.append(file[offset..<(offset + block.size)])
            if block.record != nil {
                output.reverse(at: copy + 2, width: width)              // left child
                output.reverse(at: copy + 2 + width, width: width)      // right child
                output.reverse(at: copy + 2 + 2 * width, width: 2)      // padding size
            } else {
                output.reverse(at: copy + 1, width: 4)                  // free block size
            }
            offset += block.size
        }
    }
}

/// The converted file on its way to the disk: a buffer written out a megabyte at a time.
private struct ConvertedFile {
    let descriptor: Int32
    let path: String
    /// False when the source is already in the asked order: a plain copy.
    let swapping: Bool
    private var buffer: [UInt8] = []

    init(descriptor: Int32, path: String, swapping: Bool) {
        (self.descriptor, self.path, self.swapping) = (descriptor, path, swapping)
        buffer.reserveCapacity(1 << 21)
    }

    /// Adds `bytes` (writing out what came before, if the buffer is full); returns where they start in it.
    mutating func append(_ bytes: Slice<UnsafeRawBufferPointer>) throws -> Int {
        if buffer.count >= 1 << 20 { try flush() }
        buffer.append(contentsOf: bytes)
        return buffer.count - bytes.count
    }

    /// Reverses the `width` bytes at `position` of the buffer (a number of the block just appended).
    mutating func reverse(at position: Int, width: Int) {
        guard swapping else { return }
        buffer[position..<(position + width)].reverse()
    }

    mutating func flush() throws {
        var written = 0
        while written < buffer.count {
            let count = buffer[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw DirectoryFiles.failure("write", path, code: count == 0 ? EIO : errno) }
            written += count
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
