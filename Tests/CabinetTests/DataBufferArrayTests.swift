@testable import Cabinet
import Foundation
import Testing

/// A class with arrays and optionals of values, as an app writes it.
final class Recording: StoredObject {
    @Stored var tags: [String] = []
    @Stored var markers: [UInt32] = []
    @Stored var offsets: [Int64] = []
    @Stored var levels: [Float64] = []
    @Stored var rating: UInt32? = nil
    @Stored var takes: [Date?] = []

    override func read(from buffer: inout DataBuffer) throws {
        tags = try buffer.readStrings()
        markers = try buffer.readUInt32s()
        offsets = try buffer.readInt64s()
        levels = try buffer.readFloat64s()
        rating = try buffer.readOptional { try $0.readUInt32() }
        takes = try buffer.readArray(minimumElementSize: 8) { try $0.readDate() }
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeStrings(tags)
        buffer.writeUInt32s(markers)
        buffer.writeInt64s(offsets)
        buffer.writeFloat64s(levels)
        buffer.writeOptional(rating) { $0.writeUInt32($1) }
        buffer.writeArray(takes) { $0.writeDate($1) }
    }
}

/// `DataBuffer`'s arrays of values and optional values (docs/FORMAT.md, "Values
/// inside a record"): their bytes, round trips, and damage read as errors.
@Suite struct DataBufferArrayTests {
    @Test func arraysAreACountThenTheElements() throws {
        var buffer = DataBuffer()
        buffer.writeUInt32s([1, 0x0102_0304])
        buffer.writeStrings(["é", ""])
        buffer.writeInt64s([-1])
        buffer.writeFloat64s([-2.0])
        buffer.writeUInt32s([])
        #expect(buffer.allBytes == [2, 0, 0, 0, 1, 0, 0, 0, 4, 3, 2, 1]
                                   + [2, 0, 0, 0, 2, 0, 0, 0, 0xC3, 0xA9, 0, 0, 0, 0]
                                   + [1, 0, 0, 0] + [UInt8](repeating: 0xFF, count: 8)
                                   + [1, 0, 0, 0, 0xC0, 0, 0, 0, 0, 0, 0, 0]
                                   + [0, 0, 0, 0])
        #expect(try buffer.readUInt32s() == [1, 0x0102_0304])
        #expect(try buffer.readStrings() == ["é", ""])
        #expect(try buffer.readInt64s() == [-1])
        #expect(try buffer.readFloat64s() == [-2.0])
        #expect(try buffer.readUInt32s() == [])
        #expect(buffer.readableBytes == 0)
    }

    @Test func optionalsAreAPresenceByteThenTheValue() throws {
        var buffer = DataBuffer()
        buffer.writeOptional(UInt32?.none) { $0.writeUInt32($1) }
        buffer.writeOptional(UInt32?.some(7)) { $0.writeUInt32($1) }
        buffer.writeOptional(Optional("x")) { $0.writeString($1) }
        #expect(buffer.allBytes == [0, 1, 7, 0, 0, 0, 1, 1, 0, 0, 0, UInt8(ascii: "x")])
        #expect(try buffer.readOptional { try $0.readUInt32() } == nil)
        #expect(try buffer.readOptional { try $0.readUInt32() } == 7)
        #expect(try buffer.readOptional { try $0.readString() } == "x")
    }

    @Test func damagedBytesAreErrorsThatLeaveTheCursor() throws {
        // A count far beyond the bytes that follow: refused before anything is allocated.
        var huge = DataBuffer(bytes: [0xFF, 0xFF, 0xFF, 0x7F, 1, 2, 3, 4])
        let count = #expect(throws: CabinetError.self) { try huge.readUInt32s() }
        #expect(count?.code == .malformedRecord && huge.readOffset == 0, "\(String(describing: count))")
        // Strings need 4 bytes each at least: 3 strings cannot fit in 8 bytes.
        var strings = DataBuffer(bytes: [3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
        #expect(throws: CabinetError.self) { try strings.readStrings() }
        // A presence byte that is neither 0 nor 1.
        var marker = DataBuffer(bytes: [2, 7, 0, 0, 0])
        let presence = #expect(throws: CabinetError.self) { try marker.readOptional { try $0.readUInt32() } }
        #expect(presence?.code == .malformedRecord && marker.readOffset == 0)
        // A value cut short after its presence byte.
        var cut = DataBuffer(bytes: [1, 7, 0])
        let truncated = #expect(throws: CabinetError.self) { try cut.readOptional { try $0.readUInt32() } }
        #expect(truncated?.code == .truncatedRecord && cut.readOffset == 0)
        // An element cut short inside an array.
        var element = DataBuffer(bytes: [2, 0, 0, 0, 1, 0, 0, 0, 2, 0])
        #expect(throws: CabinetError.self) { try element.readUInt32s() }
        #expect(element.readOffset == 0, "a failed read leaves the cursor where it was")
    }

    @Test(arguments: BackendKind.allCases)
    func aClassWithArraysAndOptionalsSavesAndReadsBack(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let when = Date(timeIntervalSinceReferenceDate: 800_000_000)
        do {
            let store = try fixture.open(Recording.self)
            let full = Recording()
            full.tags = ["live", "Café ☕", ""]
            full.markers = [0, 1, .max]
            full.offsets = [.min, -1, .max]
            full.levels = [-0.5, .infinity, 3.25]
            full.rating = 4
            full.takes = [when, nil]
            store.insert(full)
            store.insert(Recording())
            try store.save()
            store.close()
        }
        let store = try fixture.open(Recording.self)
        defer { store.close() }
        let read = try store.fetchAll(Recording.self).sorted { $0.rowID < $1.rowID }
        #expect(read.count == 2)
        #expect(read[0].tags == ["live", "Café ☕", ""] && read[0].markers == [0, 1, .max])
        #expect(read[0].offsets == [.min, -1, .max] && read[0].levels == [-0.5, .infinity, 3.25])
        #expect(read[0].rating == 4 && read[0].takes == [when, nil])
        #expect(read[1].tags.isEmpty && read[1].rating == nil && read[1].takes.isEmpty)
    }
}
