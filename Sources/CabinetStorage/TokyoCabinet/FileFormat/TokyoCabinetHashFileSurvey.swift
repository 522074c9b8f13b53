/// The survey of a hash file read without Tokyo Cabinet (see
/// ``TokyoCabinetHashFileReader``): which blocks are sound records, found by
/// walking the file and checked against the file's own hash index.
extension TokyoCabinetHashFileReader {
    /// One record the survey found: where it starts and ends, and whether the
    /// file's hash index reaches it (every record of a sound file is reached).
    fileprivate struct Found {
        var start: Int
        var end: Int
        var indexed: Bool
    }

    static func survey(_ file: UnsafeRawBufferPointer, header: TokyoCabinetHashHeader, path: String,
                       damaged: (Damage) -> Void) -> Survey {
        let stated = header.fileSize
        if stated < UInt64(file.count) {
            // Tokyo Cabinet grows an open file in zero-filled steps: zeros past the
            // stated end are what a copy of a store that was open holds.
            if !file[Int(stated)...].allSatisfy({ $0 == 0 }) {
                damaged(Damage(offset: Int(stated), reason: "\(file.count - Int(stated)) bytes follow the end the header gives (\(stated)), not all zeros; they are not read", recordLost: false))
            }
        } else if stated > UInt64(file.count) {
            damaged(Damage(offset: file.count, reason: "the header says the file has \(stated) bytes, but it has \(file.count): it was cut short, and the records past the cut are missing", recordLost: false))
        }
        let region = UnsafeRawBufferPointer(rebasing: file[..<min(Int(clamping: stated), file.count)])
        let index = RecordIndex(file: region, header: header)
        var walk = Walk(file: region, header: header, reader: blockReader(file, header: header, path: path), index: index)
        // Places are reported once the records are known: a place the walk landed on
        // inside a sound record (after a damaged size) is no place of its own.
        var places: [Damage] = []
        var found = walk.run { places.append($0) }

        // Records the index reaches that the walk stepped over (a damaged size jumped them).
        var walked = Set(found.map(\.start))
        for offset in index.offsets where !walked.contains(offset) {
            if let end = walk.soundRecord(at: offset) {
                found.append(Found(start: offset, end: end, indexed: true))
                walked.insert(offset)
            } else if !walk.reported.contains(offset) {
                places.append(Damage(offset: offset, reason: "the file's hash index points here, where no sound record is; a record may be missing"))
            }
        }
        let indexed = Set(index.offsets)
        for position in found.indices { found[position].indexed = indexed.contains(found[position].start) }
        let kept = dropOverlaps(found.sorted { $0.start < $1.start }, walk: walk, damaged: damaged)
        for place in places.sorted(by: { $0.offset < $1.offset }) where !isInside(place.offset, kept) {
            damaged(place)
        }
        for record in kept where !record.indexed {
            damaged(Damage(offset: record.start, key: walk.key(at: record.start),
                           reason: "a record the file's hash index does not reach (the index is damaged, or this is not a record); imported as read",
                           recordLost: false))
        }
        if UInt64(kept.count) != header.recordCount {
            damaged(Damage(offset: 0, reason: "the header counts \(header.recordCount) records; \(kept.count) sound ones were read", recordLost: false))
        }
        return Survey(offsets: kept.map(\.start))
    }

    /// Whether `offset` lies inside one of `records` (sorted, not overlapping), past its start.
    private static func isInside(_ offset: Int, _ records: [Found]) -> Bool {
        var low = 0, high = records.count
        while low < high {
            let middle = (low + high) / 2
            if records[middle].start < offset { low = middle + 1 } else { high = middle }
        }
        return low > 0 && offset < records[low - 1].end
    }

    /// Two records cannot share bytes: of two that overlap, the one the index does
    /// not reach goes, or else the earlier, whose size ran into the other.
    private static func dropOverlaps(_ records: [Found], walk: Walk, damaged: (Damage) -> Void) -> [Found] {
        var kept: [Found] = []
        for record in records {
            var record: Found? = record
            while let next = record, let last = kept.last, last.end > next.start {
                let dropLast = !(last.indexed && !next.indexed)
                let dropped = dropLast ? last : next
                let other = dropLast ? next : last
                damaged(Damage(offset: dropped.start, key: walk.key(at: dropped.start),
                               reason: "its size runs over the record at offset \(other.start)"))
                if dropLast { kept.removeLast() } else { record = nil }
            }
            if let record { kept.append(record) }
        }
        return kept
    }

    /// The walk through the blocks in file order, resuming from the index after damage.
    fileprivate struct Walk {
        let file: UnsafeRawBufferPointer
        let header: TokyoCabinetHashHeader
        let reader: BlockReader
        let index: RecordIndex
        /// Offsets already reported, so that a place the walk comes back to is named once.
        var reported = Set<Int>()

        /// The end of the sound record at `offset`, or nil: aligned, parsed, its hash byte its key's.
        func soundRecord(at offset: Int) -> Int? {
            guard offset % (1 << Int(header.alignmentPower)) == 0, let block = try? reader.block(at: offset),
                  let (key, _) = block.record, hashMatches(key, at: offset) else { return nil }
            return offset + block.size
        }

        func hashMatches(_ key: UnsafeRawBufferPointer, at offset: Int) -> Bool {
            file[offset + 1] == TokyoCabinetHashHeader.bucketAndHash(of: key, bucketCount: header.bucketCount).hash
        }

        /// The key of the record at `offset`, if its header parses.
        func key(at offset: Int) -> [UInt8]? {
            (try? reader.block(at: offset))?.record.map { Array($0.key) }
        }

        mutating func run(damaged: (Damage) -> Void) -> [Found] {
            let alignment = 1 << Int(header.alignmentPower)
            var found: [Found] = []
            var lastSound = Int(clamping: header.firstRecord) - 1
            var offset = Int(clamping: header.firstRecord)
            while offset < file.count {
                let why: String
                var key: [UInt8]?
                if offset % alignment != 0 {
                    why = "a block that does not start on the file's \(alignment)-byte alignment (the size before it is damaged)"
                } else {
                    do {
                        let block = try reader.block(at: offset)
                        if let (blockKey, _) = block.record {
                            if hashMatches(blockKey, at: offset) {
                                found.append(Found(start: offset, end: offset + block.size, indexed: false))
                                lastSound = offset
                                offset += block.size
                                continue
                            }
                            key = Array(blockKey)
                            why = "the record's key does not match the hash Tokyo Cabinet kept of it: its key or header is damaged"
                        } else {
                            lastSound = offset
                            offset += block.size
                            continue
                        }
                    } catch let error as CabinetError {
                        why = error.underlying?.message ?? "\(error)"
                    } catch {
                        why = "\(error)"
                    }
                }
                if reported.insert(offset).inserted { damaged(Damage(offset: offset, key: key, reason: why)) }
                // Back to the first record the index knows past the last sound block, if the
                // damage jumped over one; else past this place. Each time the walk comes back,
                // its last sound block lies further on, so it ends.
                guard let next = index.firstOffset(after: lastSound) else { break }
                offset = next < offset ? next : (index.firstOffset(after: offset) ?? file.count)
                lastSound = max(lastSound, min(offset, file.count) - 1)
            }
            return found
        }
    }
}

/// The offsets of the records a hash file's index reaches: every bucket's
/// record and, through their left and right child offsets, the rest of its chain.
struct RecordIndex {
    /// Sorted.
    private(set) var offsets: [Int]

    init(file: UnsafeRawBufferPointer, header: TokyoCabinetHashHeader) {
        let width = Int(header.bucketWidth)
        let shift = Int(header.alignmentPower)
        let first = Int(clamping: header.firstRecord)
        func offset(at position: Int) -> Int? {
            guard position >= 0, position <= file.count - width else { return nil }
            let value: UInt64
            if width == 8 {
                let raw = file.loadUnaligned(fromByteOffset: position, as: UInt64.self)
                value = header.byteOrder == .bigEndian ? UInt64(bigEndian: raw) : UInt64(littleEndian: raw)
            } else {
                let raw = file.loadUnaligned(fromByteOffset: position, as: UInt32.self)
                value = UInt64(header.byteOrder == .bigEndian ? UInt32(bigEndian: raw) : UInt32(littleEndian: raw))
            }
            guard value > 0, value <= UInt64(Int.max) >> shift else { return nil }
            let target = Int(value) << shift
            return target >= first && target < file.count ? target : nil
        }
        var seen = Set<Int>()
        var pending: [Int] = []
        for bucket in 0..<Int(clamping: header.bucketCount) {
            if let target = offset(at: TokyoCabinetDirectory.headerSize + bucket * width) { pending.append(target) }
        }
        // Each offset is visited once (a damaged chain may loop), and only records have children.
        while let next = pending.popLast() {
            guard file[next] == TokyoCabinetFileScan.recordMagic, seen.insert(next).inserted else { continue }
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
