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
        try TokyoCabinetDirectory.refuseNonEmpty(destination, for: "an export")
        let url = URL(fileURLWithPath: destination)
        let parent = url.deletingLastPathComponent().path
        let staging = parent + "/." + url.lastPathComponent + ".cabinet-partial"
        try? FileManager.default.removeItem(atPath: staging)
        var skipped: [String] = []
        do {
            try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: false)
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
            try DirectoryFiles.replace(destination, with: staging, directory: parent, sync: true)
        } catch {
            try? FileManager.default.removeItem(atPath: staging)
            throw error
        }
        return skipped
    }

    /// Copies the hash file at `source` to the new file `destination`, in `order`.
    package static func convertFile(_ source: String, to destination: String, as order: TokyoCabinetByteOrder) throws {
        try FileManager.default.copyItem(atPath: source, toPath: destination)
        let fd = open(destination, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw DirectoryFiles.failure("open", destination) }
        defer { _ = close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw DirectoryFiles.failure("fstat", destination) }
        let size = Int(status.st_size)
        guard size >= TokyoCabinetDirectory.headerSize,
              let map = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), map != MAP_FAILED else {
            throw CabinetError.notADatabase(RecordLocation(file: source), reason: "it is too short or cannot be mapped to convert")
        }
        defer { munmap(map, size) }
        try swap(UnsafeMutableRawBufferPointer(start: map, count: size), path: source, to: order)
        guard msync(map, size, MS_SYNC) == 0, fsync(fd) == 0 else { throw DirectoryFiles.failure("sync", destination) }
    }

    /// Swaps the structures of the hash file in `file` into `order` in place.
    static func swap(_ file: UnsafeMutableRawBufferPointer, path: String, to order: TokyoCabinetByteOrder) throws {
        guard let header = TokyoCabinetHashHeader(head: UnsafeRawBufferPointer(file), fileSize: file.count),
              header.type == TokyoCabinetHashHeader.hashType, !header.isCompressed, header.fileSize == UInt64(file.count) else {
            throw CabinetError.notADatabase(RecordLocation(file: path), reason: "it is not a sound, uncompressed Tokyo Cabinet hash file")
        }
        guard header.byteOrder != order else { return }
        for offset in [TokyoCabinetHashHeader.bucketCountOffset, TokyoCabinetHashHeader.recordCountOffset,
                       TokyoCabinetHashHeader.fileSizeOffset, TokyoCabinetHashHeader.firstRecordOffset] {
            reverse(file, at: offset, width: 8)
        }
        let width = Int(header.bucketWidth)
        for bucket in 0..<Int(header.bucketCount) {
            reverse(file, at: TokyoCabinetDirectory.headerSize + bucket * width, width: width)
        }
        // The blocks are read in the source's order, then their numbers reversed.
        let reader = BlockReader(file: UnsafeRawBufferPointer(file), bigEndian: header.byteOrder == .bigEndian,
                                 wideOffsets: header.wideOffsets, path: path, advice: "the store was not converted")
        var offset = Int(header.firstRecord)
        while offset < file.count {
            let block = try reader.block(at: offset)
            if block.record != nil {
                reverse(file, at: offset + 2, width: width)              // left child
                reverse(file, at: offset + 2 + width, width: width)      // right child
                reverse(file, at: offset + 2 + 2 * width, width: 2)      // padding size
            } else {
                reverse(file, at: offset + 1, width: 4)                  // free block size
            }
            offset += block.size
        }
    }

    /// Reverses the `width` bytes at `offset` (callers stay inside the block they read).
    private static func reverse(_ file: UnsafeMutableRawBufferPointer, at offset: Int, width: Int) {
        var low = offset, high = offset + width - 1
        while low < high {
            file.swapAt(low, high)
            low += 1
            high -= 1
        }
    }
}
