@testable import CabinetStorage
import Foundation

/// One record of a Tokyo Cabinet hash file, where its parts lie in the file: so a
/// test can damage exactly the bytes it means to.
struct HashFileRecord {
    var key: [UInt8]
    var value: [UInt8]
    /// The record's magic byte.
    var offset: Int
    /// Its two variable-length sizes (key, then value), right after its fixed head.
    var sizes: Int
    var keyStart: Int
    var valueStart: Int
}

/// Every record of the hash file at `path` (a class file, or the file under a B+ tree), in file order.
func hashFileRecords(_ path: String) throws -> [HashFileRecord] {
    let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    return try bytes.withUnsafeBytes { file in
        guard let header = TokyoCabinetHashHeader(head: file, order: .bigEndian, fileSize: file.count)
                ?? TokyoCabinetHashHeader(head: file, order: .littleEndian, fileSize: file.count) else {
            throw CabinetError.notADatabase(RecordLocation(file: path), reason: "no header the test can read")
        }
        let reader = BlockReader(file: file, bigEndian: header.byteOrder == .bigEndian, wideOffsets: header.wideOffsets, path: path)
        var records: [HashFileRecord] = []
        var offset = Int(header.firstRecord)
        while offset < Int(header.fileSize) {
            let block = try reader.block(at: offset)
            if let record = block.record {
                let keyStart = file.baseAddress!.distance(to: record.key.baseAddress ?? file.baseAddress!)
                let valueStart = file.baseAddress!.distance(to: record.value.baseAddress ?? file.baseAddress!)
                records.append(HashFileRecord(key: Array(record.key), value: Array(record.value), offset: offset,
                                              sizes: offset + 2 + 2 * Int(header.bucketWidth) + 2,
                                              keyStart: keyStart, valueStart: valueStart))
            }
            offset += block.size
        }
        return records
    }
}

/// Writes `bytes` over the file at `path`, from `offset` on.
func overwrite(_ path: String, at offset: Int, with bytes: [UInt8]) throws {
    let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    try handle.seek(toOffset: UInt64(offset))
    try handle.write(contentsOf: Data(bytes))
}

/// Tokyo Cabinet's variable-length sizes that claim about 1.9 GB each (`255 - byte`
/// per continuation byte, so four 0xFF carry nothing, then 7 × 2^28): a key and a
/// value of these add up past 2^31, which Tokyo Cabinet allocates as one block
/// (`tchdbreadrecbody`), fails, and ends the process ("out of memory").
let twoHugeSizes: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF, 0x07, 0xFF, 0xFF, 0xFF, 0xFF, 0x07]

/// Zeroes the bucket-array entry of `key` in the hash file at `path`: a lookup of
/// the key then walks an empty bucket, while a scan of the file still reads its record.
func zeroBucket(of key: [UInt8], in path: String) throws {
    let head = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    guard let header = head.withUnsafeBytes({ TokyoCabinetHashHeader(head: $0, order: .bigEndian, fileSize: $0.count)
        ?? TokyoCabinetHashHeader(head: $0, order: .littleEndian, fileSize: $0.count) }) else {
        throw CabinetError.notADatabase(RecordLocation(file: path), reason: "no header the test can read")
    }
    let (bucket, _) = key.withUnsafeBytes { TokyoCabinetHashHeader.bucketAndHash(of: $0, bucketCount: header.bucketCount) }
    let width = Int(header.bucketWidth)
    try overwrite(path, at: TokyoCabinetLookup.bucketsOffset + Int(bucket) * width, with: [UInt8](repeating: 0, count: width))
}

/// The row key of `rowID` in a class file.
func rowKeyBytes(_ rowID: UInt32) -> [UInt8] { withUnsafeBytes(of: rowID.littleEndian, Array.init) }

/// A B+ tree file "T.index" of `count` distinct keys (a prefix and a big-endian
/// counter, as an index's), values empty, written and closed; its keys in order.
func writtenIndexTree(_ directory: TemporaryDirectory, count: Int) throws -> [[UInt8]] {
    let backend = try TokyoCabinetBackend(directory: directory.path)
    defer { backend.close() }
    let table = try backend.openOrderedTable(named: "T.index")
    var keys: [[UInt8]] = []
    try table.transaction {
        for i in 0..<count {
            let key = Array("artist\(i % 37)".utf8) + [0] + withUnsafeBytes(of: UInt32(i).bigEndian, Array.init)
            try key.withUnsafeBytes { key in try [UInt8]().withUnsafeBytes { try table.setValue($0, forKey: key) } }
            keys.append(key)
        }
    }
    return keys.sorted { $0.lexicographicallyPrecedes($1) }
}

/// Damages the leaf page of the B+ tree file at `path` that holds the first key
/// `matching`: the record's three sizes (key, value, duplicates, a byte each)
/// and what follows made two sizes that claim about 1.9 GB each
/// (``twoHugeSizes``), which Tokyo Cabinet's page loader would trust. Returns
/// the leaf's ID (its page's key in the hash file, hexadecimal).
@discardableResult
func damageLeaf(inTree path: String, holdingKey matching: ([UInt8]) -> Bool) throws -> String {
    for record in try hashFileRecords(path) where record.key.first != UInt8(ascii: "#") {
        let found: Int? = record.value.withUnsafeBytes { page in
            withUnsafeTemporaryAllocation(of: TokyoCabinetTreeScan.Entry.self, capacity: page.count / 3 + 1) { room in
                guard let (_, _, count) = TokyoCabinetTreeScan.parseLeaf(page, into: room) else { return nil }
                return room[0..<count].first { entry in
                    entry.key >= 3 && page[entry.key - 1] == 0 && Int(page[entry.key - 3]) == entry.keySize
                        && matching(Array(page[entry.key..<entry.value]))
                }.map { $0.key - 3 }
            }
        }
        guard let found else { continue }
        try overwrite(path, at: record.valueStart + found, with: twoHugeSizes)
        return String(decoding: record.key, as: UTF8.self)
    }
    throw CabinetError.missingRecord(RecordLocation(file: path))
}
