/// The records of out-of-line lists in the `StoredLists` table (`docs/FORMAT.md`,
/// "Stored lists"), each followed by the store's record trailer (its CRC):
///
/// - root, key = scope (6 bytes): kind 2, element count (UInt32), root node ID (16 bytes);
/// - leaf, key = scope + node ID: kind 0, n (UInt32), n row IDs (UInt32);
/// - inner node, key = scope + node ID: kind 1, n (UInt32), n × (element count UInt32, node ID).
///
/// In the owner's record an out-of-line list is the marker 0xFFFFFFFF (a count no
/// inline list can have), its slot (UInt8) and its element count (UInt32).
enum ListRecords {
    static let leafKind: UInt8 = 0
    static let innerKind: UInt8 = 1
    static let rootKind: UInt8 = 2
    /// Where an inline list's count would be: the list is out of line.
    static let outOfLineMarker = UInt32.max
    /// Where an inline list's count would be in an undo snapshot (never on
    /// disk): the list's tree is kept beside the bytes (``UndoListTrees``),
    /// followed by its place there and its count (UInt32 each).
    static let undoTreeMarker = UInt32.max - 1

    /// The name of the table that holds out-of-line lists.
    static let tableName = "StoredLists"

    // MARK: Writing

    static func encodeRoot(count: Int, root: ListNodeID, format: RecordFormat) -> [UInt8] {
        var buffer = DataBuffer(capacity: 32)
        buffer.writeUInt8(rootKind)
        buffer.writeUInt32(UInt32(count))
        write(root, to: &buffer)
        buffer.appendTrailer(for: format)
        return buffer.allBytes
    }

    /// A node's record; `childID` gives the ID of each child (assigned by the save for new ones).
    static func encode(_ node: ListNode, rowIDs: [UInt32], childIDs: [ListNodeID], format: RecordFormat) -> [UInt8] {
        var buffer = DataBuffer(capacity: 9 + max(rowIDs.count * 4, childIDs.count * 20) + format.trailerSize)
        if node.isLeaf {
            buffer.writeUInt8(leafKind)
            buffer.writeUInt32(UInt32(rowIDs.count))
            // One copy where memory is little-endian already: a pool's group rewrites a
            // leaf of up to 512 row IDs, and writing them one by one cost a group more
            // than the copy (BENCHMARKS.md, "What the code's shape was chosen against").
            if isLittleEndianHost { rowIDs.withUnsafeBytes { buffer.append($0) } } else { for rowID in rowIDs { buffer.writeUInt32(rowID) } }
        } else {
            buffer.writeUInt8(innerKind)
            buffer.writeUInt32(UInt32(node.children.count))
            for (child, id) in zip(node.children, childIDs) {
                buffer.writeUInt32(UInt32(child.count))
                write(id, to: &buffer)
            }
        }
        buffer.appendTrailer(for: format)
        return buffer.allBytes
    }

    /// Whether this machine stores integers little-endian, as the records do.
    private static let isLittleEndianHost = UInt32(1).littleEndian == 1

    private static func write(_ id: ListNodeID, to buffer: inout DataBuffer) {
        buffer.writeUInt64(id.high)
        buffer.writeUInt64(id.low)
    }

    // MARK: Reading (untrusted bytes: every count is checked against what is there)

    static func decodeRoot(_ bytes: UnsafeRawBufferPointer, format: RecordFormat, location: RecordLocation) throws -> (count: Int, root: ListNodeID) {
        var buffer = DataBuffer(bytes: bytes)
        buffer.context = RecordContext(location: location)
        try buffer.removeTrailer(for: format)
        guard try buffer.readUInt8() == rootKind else { throw buffer.malformed("a list root of an unknown kind") }
        let count = Int(try buffer.readUInt32())
        let root = try readID(&buffer)
        guard count > 0 else { throw buffer.malformed("a stored list of no elements") }
        return (count, root)
    }

    static func decodeNode(_ bytes: UnsafeRawBufferPointer, storage: ListNodeStorage, format: RecordFormat,
                           location: RecordLocation) throws -> ListNode {
        var buffer = DataBuffer(bytes: bytes)
        buffer.context = RecordContext(location: location)
        try buffer.removeTrailer(for: format)
        let kind = try buffer.readUInt8()
        let count = Int(try buffer.readUInt32())
        guard count > 0 else { throw buffer.malformed("an empty list node") }
        switch kind {
        case leafKind:
            guard count <= buffer.readableBytes / 4 else { throw buffer.malformed("a leaf of \(count) row IDs in \(buffer.readableBytes) bytes") }
            // Read in one pass (the count was checked against the bytes above), then checked.
            let start = try buffer.consume(count * 4)
            // The bytes are the buffer's: it is kept alive for as long as they are read.
            let rowIDs = withExtendedLifetime(buffer) {
                let leaf = buffer.slice(start..<start + count * 4)
                return [UInt32](unsafeUninitializedCapacity: count) { ids, initialized in
                    for index in 0..<count { ids[index] = UInt32(littleEndian: leaf.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self)) }
                    initialized = count
                }
            }
            if let index = rowIDs.firstIndex(where: { $0 < ClassMetadata.firstObjectRowID }) {
                buffer.readerIndex = start + index * 4
                throw buffer.malformed("a list element at row \(rowIDs[index]), which holds no object")
            }
            return ListNode(leaf: rowIDs, storage: storage)
        case innerKind:
            guard count <= buffer.readableBytes / 20 else { throw buffer.malformed("a list node of \(count) children in \(buffer.readableBytes) bytes") }
            var children: [ListChild] = []
            children.reserveCapacity(count)
            for _ in 0..<count {
                let elements = Int(try buffer.readUInt32())
                guard elements > 0 else { throw buffer.malformed("a list node with an empty child") }
                children.append(ListChild(count: elements, id: try readID(&buffer)))
            }
            return ListNode(children: children, storage: storage)
        default:
            throw buffer.malformed("a list node of unknown kind \(kind)")
        }
    }

    private static func readID(_ buffer: inout DataBuffer) throws -> ListNodeID {
        ListNodeID(high: try buffer.readUInt64(), low: try buffer.readUInt64())
    }
}
