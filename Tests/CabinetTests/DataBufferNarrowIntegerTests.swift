import Cabinet
import Foundation
import Testing

/// The integer widths the @StoredModel macro writes each at its own size, and
/// enums by their raw values.
@Suite struct DataBufferNarrowIntegerTests {
    @Test func narrowIntegersRoundTripAtTheirBoundariesInTheirOwnWidth() throws {
        var buffer = DataBuffer()
        let int8s: [Int8] = [0, -1, .min, .max]
        let uint16s: [UInt16] = [0, 1, .max]
        let int16s: [Int16] = [0, -1, .min, .max]
        let int32s: [Int32] = [0, -1, .min, .max]
        let uints: [UInt] = [0, 1, .max]
        int8s.forEach { buffer.writeInt8($0) }
        uint16s.forEach { buffer.writeUInt16($0) }
        int16s.forEach { buffer.writeInt16($0) }
        int32s.forEach { buffer.writeInt32($0) }
        uints.forEach { buffer.writeUInt($0) }
        #expect(buffer.count == 4 * 1 + 3 * 2 + 4 * 2 + 4 * 4 + 3 * 8)
        #expect(try int8s.map { _ in try buffer.readInt8() } == int8s)
        #expect(try uint16s.map { _ in try buffer.readUInt16() } == uint16s)
        #expect(try int16s.map { _ in try buffer.readInt16() } == int16s)
        #expect(try int32s.map { _ in try buffer.readInt32() } == int32s)
        #expect(try uints.map { _ in try buffer.readUInt() } == uints)
        #expect(buffer.readableBytes == 0)
    }

    @Test func narrowIntegersAreLittleEndianTwosComplement() {
        var buffer = DataBuffer()
        buffer.writeInt8(-2)
        buffer.writeUInt16(0x0102)
        buffer.writeInt16(-2)
        buffer.writeInt32(-2)
        #expect(buffer.allBytes == [0xFE, 2, 1, 0xFE, 0xFF, 0xFE, 0xFF, 0xFF, 0xFF])
    }

    enum Mood: UInt8 { case calm, loud }

    @Test func anEnumIsItsRawValueAndAnUnknownRawValueIsAMalformedRecord() throws {
        var buffer = DataBuffer()
        buffer.writeRawValue(Mood.loud) { $0.writeUInt8($1) }
        buffer.writeUInt8(7)
        #expect(buffer.allBytes == [1, 7])
        #expect(try buffer.readRawValue(Mood.self) { try $0.readUInt8() } == .loud)
        let error = expectCabinetError({ _ = try buffer.readRawValue(Mood.self) { try $0.readUInt8() } }) {
            guard $0.code == .malformedRecord, let reason = $0.reason else { return false }
            return reason.contains("raw value 7") && reason.contains("Mood")
        }
        #expect(error != nil)
        #expect(buffer.readOffset == 1)    // left where the bad value starts
    }
}
