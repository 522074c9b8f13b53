// libFuzzer entry point for Cabinet's decoders (records, metadata rows, journals,
// index row records and posting blocks) and for its reader of Tokyo
// Cabinet's record region (`make fuzz`). Compiled into the Cabinet module with the
// library's sources, so it reaches the same decode paths a fetch and a scan use.
// Every input must end in a value or a thrown CabinetError; anything else (a
// trap, a sanitizer report) is a finding.
import CabinetStorage
import Foundation

final class FuzzSong: StoredObject {
    @Stored var title = ""
    @Stored var seconds: UInt32 = 0
    @Stored var when: Date?
    @Stored var blob = Data()
    override func read(from buffer: inout DataBuffer) throws {
        title = try buffer.readString()
        seconds = try buffer.readUInt32()
        when = try buffer.readDate()
        blob = try buffer.readData()
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(title)
        buffer.writeUInt32(seconds)
        buffer.writeDate(when)
        buffer.writeData(blob)
    }
}

final class FuzzList: StoredObject {
    @Stored var songs: [FuzzSong] = []
    @Stored var anything: [StoredObject] = []
    @Stored var first: FuzzSong?
    override func read(from buffer: inout DataBuffer) throws {
        songs = try buffer.readReferences(to: FuzzSong.self)
        anything = try buffer.readAnyReferences()
        first = try buffer.readReference(to: FuzzSong.self)
        _ = try buffer.readOptionalString()
        _ = try buffer.readFloat64()
        _ = try buffer.readInt()
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeReferences(songs)
        buffer.writeAnyReferences(anything)
        buffer.writeReference(first)
        buffer.writeOptionalString(nil)
        buffer.writeFloat64(0)
        buffer.writeInt(0)
    }
}

nonisolated(unsafe) let fuzzStore: ObjectStore = {
    // Plain records, so inputs reach the decoders instead of stopping at the checksum.
    let store = try! ObjectStore(backend: MemoryBackend(), options: .init(recordFormat: .plain))
    try! store.register(FuzzSong.self, FuzzList.self)
    store.undoManager.isEnabled = false
    return store
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    let store = fuzzStore
    for type in [FuzzSong.self, FuzzList.self] as [StoredObject.Type] {
        guard let entry = store.entry(for: type) else { continue }
        let object = type.init()
        object.rowID = 1_000_000
        object.hasContent = false
        entry.adopt(object)
        var buffer = DataBuffer(bytes: bytes)
        _ = try? store.decode(&buffer, into: object, entry: entry)
        entry.release(object)
    }
    _ = try? ClassMetadata(bytes: bytes, location: RecordLocation(file: "fuzz"))
    _ = try? WriteBatch(decoding: Array(bytes), location: RecordLocation(file: "fuzz"))
    // The input as an index file's records: a row's entries, a posting block, word positions.
    _ = try? RowEntries.decode(bytes, format: .plain, location: RecordLocation(file: "fuzz"))
    let firstRow = size >= 4 ? UInt32(bigEndian: bytes.loadUnaligned(as: UInt32.self)) : 0
    if let members = try? PostingBlock.members(of: bytes, firstRow: firstRow) {
        for member in members { _ = member.positions.withUnsafeBytes(FullTextIndexing.decode) }
    }
    var rows: [UInt32] = []
    _ = try? PostingBlock.appendRows(of: bytes, firstRow: firstRow, to: &rows)
    _ = FullTextIndexing.decode(bytes)
    var offset = 0
    while let _ = Varint.read(bytes, at: &offset) {}
    // The input as the record region of a Tokyo Cabinet file, read as whole-file scans read it.
    for (bigEndian, wideOffsets) in [(true, false), (false, true)] {
        let reader = BlockReader(file: bytes, bigEndian: bigEndian, wideOffsets: wideOffsets, path: "fuzz")
        var offset = 0
        while offset < bytes.count, let block = try? reader.block(at: offset) {
            if let record = block.record { _ = record.key.last; _ = record.value.last }
            offset += block.size
        }
    }
    // The input as a whole hash file written on a Mac (little-endian), read as `cabinet
    // import` reads it: behind a small header of its own (8 buckets, then records), so
    // the walk, its damage reports and the bucket index it resumes from all see the input;
    // and the input as a header itself.
    var file = [UInt8](repeating: 0, count: TokyoCabinetDirectory.headerSize)
    file.replaceSubrange(0..<TokyoCabinetDirectory.magic.count, with: TokyoCabinetDirectory.magic)
    for (offset, value) in [(40, 8), (48, min(size, 1_000)), (56, 256 + size), (64, 256 + 32)] {
        withUnsafeBytes(of: UInt64(value).littleEndian) { file.replaceSubrange(offset..<(offset + 8), with: $0) }
    }
    file += bytes
    for candidate in [file, Array(bytes)] {
        candidate.withUnsafeBytes { whole in
            guard let header = TokyoCabinetHashHeader(head: whole, fileSize: whole.count) else { return }
            _ = try? TokyoCabinetHashFileReader.forEachRecord(in: whole, header: header, path: "fuzz", { key, value in
                _ = key.last; _ = value.last
            }, damaged: { _ in })
        }
    }
    return 0
}
