@testable import Cabinet
import Foundation
import Testing

@Suite struct DataBufferTests {
    @Test func integersRoundTripAtTheirBoundaries() throws {
        var buffer = DataBuffer()
        let bytes: [UInt8] = [0, 1, 127, 128, 255]
        let words: [UInt32] = [0, 1, 0x8000_0000, .max]
        let longs: [Int64] = [0, -1, .min, .max]
        let unsigned: [UInt64] = [0, 1, .max]
        let ints: [Int] = [0, -1, .min, .max]
        bytes.forEach { buffer.writeUInt8($0) }
        words.forEach { buffer.writeUInt32($0) }
        longs.forEach { buffer.writeInt64($0) }
        unsigned.forEach { buffer.writeUInt64($0) }
        ints.forEach { buffer.writeInt($0) }
        buffer.writeBool(true); buffer.writeBool(false)
        #expect(try bytes.map { _ in try buffer.readUInt8() } == bytes)
        #expect(try words.map { _ in try buffer.readUInt32() } == words)
        #expect(try longs.map { _ in try buffer.readInt64() } == longs)
        #expect(try unsigned.map { _ in try buffer.readUInt64() } == unsigned)
        #expect(try ints.map { _ in try buffer.readInt() } == ints)
        #expect(try buffer.readBool() == true)
        #expect(try buffer.readBool() == false)
        #expect(buffer.readableBytes == 0)
    }

    @Test func integersAreLittleEndianAndFloatsBigEndian() throws {
        var buffer = DataBuffer()
        buffer.writeUInt32(0x0102_0304)
        buffer.writeFloat32(1.0)        // 0x3F800000
        buffer.writeFloat64(-2.0)       // 0xC000000000000000
        #expect(buffer.allBytes == [4, 3, 2, 1, 0x3F, 0x80, 0, 0, 0xC0, 0, 0, 0, 0, 0, 0, 0])
    }

    @Test func floatsRoundTripIncludingSpecialValues() throws {
        var buffer = DataBuffer()
        let singles: [Float32] = [0, -0.0, 1.5, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
                                  .leastNonzeroMagnitude, .infinity, -.infinity]
        let doubles: [Float64] = [0, -0.0, .pi, .greatestFiniteMagnitude, .leastNonzeroMagnitude, .infinity, -.infinity]
        singles.forEach { buffer.writeFloat32($0) }
        doubles.forEach { buffer.writeFloat64($0) }
        buffer.writeFloat32(.nan); buffer.writeFloat64(.signalingNaN)
        for value in singles {
            let read = try buffer.readFloat32()
            #expect(read.bitPattern == value.bitPattern)
        }
        for value in doubles {
            let read = try buffer.readFloat64()
            #expect(read.bitPattern == value.bitPattern)
        }
        #expect(try buffer.readFloat32().isNaN)
        #expect(try buffer.readFloat64().isSignalingNaN)
    }

    @Test func stringsRoundTripAndUseACountPrefix() throws {
        var buffer = DataBuffer()
        let strings = ["", "a", "Walking on Sunshine", "Žluťoučký kůň 🐎", "日本語のタイトル", String(repeating: "x", count: 70_000), "nul\0inside"]
        strings.forEach { buffer.writeString($0) }
        #expect(try strings.map { _ in try buffer.readString() } == strings)

        var layout = DataBuffer()
        layout.writeString("hé")
        #expect(layout.allBytes == [3, 0, 0, 0, 0x68, 0xC3, 0xA9])
    }

    @Test func optionalStringsStoreNilAsAnEmptyCount() throws {
        var buffer = DataBuffer()
        buffer.writeOptionalString(nil)
        buffer.writeOptionalString("")
        buffer.writeOptionalString("x")
        #expect(buffer.allBytes.prefix(8) == [0, 0, 0, 0, 0, 0, 0, 0])
        #expect(try buffer.readOptionalString() == nil)
        #expect(try buffer.readOptionalString() == nil)
        #expect(try buffer.readOptionalString() == "x")
    }

    @Test func dataRoundTripsIncludingEmptyAndLarge() throws {
        var buffer = DataBuffer()
        let large = Data((0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        buffer.writeData(Data())
        buffer.writeData(large)
        buffer.writeBytes([1, 2, 3])
        #expect(try buffer.readData() == Data())
        #expect(try buffer.readData() == large)
        #expect(try buffer.readBytes() == [1, 2, 3])
    }

    @Test func datesAreBigEndianSecondsSince2001AndZeroIsNil() throws {
        var buffer = DataBuffer()
        let moment = Date(timeIntervalSinceReferenceDate: 123_456.75)
        let ancient = Date(timeIntervalSinceReferenceDate: -1e12)
        buffer.writeDate(moment)
        buffer.writeDate(nil)
        buffer.writeDate(ancient)
        #expect(Array(buffer.allBytes.prefix(8)) == Array(withUnsafeBytes(of: (123_456.75 as Double).bitPattern.bigEndian) { Array($0) }))
        #expect(try buffer.readDate() == moment)
        #expect(try buffer.readDate() == nil)
        #expect(try buffer.readDate() == ancient)
    }

    @Test func everyReaderThrowsOnAnEmptyBufferInsteadOfTrapping() {
        let readers: [(inout DataBuffer) throws -> Any] = [
            { try $0.readUInt8() }, { try $0.readUInt32() }, { try $0.readUInt64() }, { try $0.readInt64() },
            { try $0.readInt() }, { try $0.readBool() }, { try $0.readFloat32() }, { try $0.readFloat64() },
            { try $0.readString() }, { try $0.readOptionalString() as Any }, { try $0.readData() },
            { try $0.readBytes() }, { try $0.readDate() as Any },
        ]
        for read in readers {
            var buffer = DataBuffer(bytes: [7])   // one byte: too short for all but readUInt8/readBool
            _ = try? buffer.readUInt8()
            #expect(throws: CabinetError.self) { _ = try read(&buffer) }
            #expect(buffer.readOffset == 1, "a failed read must not move the cursor")
        }
    }

    @Test func aLengthPastTheEndThrowsWithoutAllocating() throws {
        var buffer = DataBuffer(bytes: [0xFF, 0xFF, 0xFF, 0x7F, 1, 2])
        let error = expectCabinetError({ _ = try buffer.readString() }) {
            guard $0.code == .malformedRecord, let reason = $0.reason else { return false }
            return reason.contains("2147483647")
        }
        #expect(error != nil)
        #expect(buffer.readOffset == 0)
        #expect(throws: CabinetError.self) { _ = try buffer.readData() }
    }

    @Test func invalidUTF8IsAMalformedRecordNotReplacementCharacters() {
        // Cut sequences, a surrogate, an overlong form, stray continuation and
        // 0xFF bytes, including ones whose repair would be as long as the input.
        let invalid: [[UInt8]] = [[0xC3, 0x28], [0xED, 0xA0, 0x80], [0xE2, 0x82], [0xC0, 0xAF], [0x80],
                                  Array("Song ".utf8) + [0xFF], [0xF4, 0x90, 0x80, 0x80], Array("ok".utf8) + [0xEF, 0xBF]]
        for bytes in invalid {
            var buffer = DataBuffer(bytes: withUnsafeBytes(of: UInt32(bytes.count).littleEndian) { Array($0) } + bytes)
            #expect(expectCabinetError({ _ = try buffer.readString() }) {
                guard $0.code == .malformedRecord, let reason = $0.reason else { return false }
                return reason.contains("UTF-8")
            } != nil, "\(bytes)")
            #expect(buffer.readOffset == 0)
        }
    }

    @Test func aNaNDateIsMalformed() {
        var buffer = DataBuffer()
        buffer.writeFloat64(.nan)
        #expect(throws: CabinetError.self) { _ = try buffer.readDate() }
    }

    @Test func anIntKeepsItsFull64BitRange() throws {
        // Int is 64-bit here, so every Int64 fits (the "does not fit" error exists for 32-bit platforms).
        var buffer = DataBuffer()
        buffer.writeInt64(.max)
        #expect(try buffer.readInt() == Int(Int64.max))
    }

    @Test func referenceListsWithADamagedCountThrow() {
        var buffer = DataBuffer(bytes: [0xFF, 0xFF, 0xFF, 0xFF, 2, 0, 0, 0])
        #expect(throws: CabinetError.noStoreForReferences) { _ = try buffer.readReferences(to: Song.self) }
        var count = DataBuffer(bytes: [0xFF, 0xFF, 0xFF, 0xFF, 2, 0, 0, 0])
        #expect(throws: CabinetError.self) { _ = try count.readListCount(bytesPerElement: 4) }
    }

    @Test func referencesNeedAStore() {
        var buffer = DataBuffer()
        buffer.writeUInt32(2)
        #expect(throws: CabinetError.noStoreForReferences) { _ = try buffer.readReference(to: Song.self) }
        #expect(throws: CabinetError.noStoreForReferences) { _ = try buffer.readAnyReference() }
    }

    @Test func removeAllKeepsTheBufferUsable() throws {
        var buffer = DataBuffer(capacity: 16)
        buffer.writeString("first")
        buffer.removeAll()
        #expect(buffer.count == 0)
        buffer.writeUInt32(9)
        #expect(try buffer.readUInt32() == 9)
        buffer.rewind()
        #expect(try buffer.readUInt32() == 9)
    }

    @Test func buffersAreEqualWhenTheirBytesAreWhateverTheirCursorOrVersion() throws {
        var read = DataBuffer(bytes: [1, 2, 3, 4, 5])
        _ = try read.readUInt32()
        read.version = 3
        #expect(read == DataBuffer(bytes: [1, 2, 3, 4, 5]), "the cursor and the version do not count")
        var written = DataBuffer()
        written.writeUInt32(0x0403_0201)
        written.writeUInt8(5)
        #expect(written == read)
        #expect(DataBuffer(bytes: [1, 2, 3, 4, 6]) != read, "one byte differs")
        #expect(DataBuffer(bytes: [1, 2, 3, 4]) != read, "a prefix is not equal")
        #expect(DataBuffer(capacity: 16) == DataBuffer())
        var reused = DataBuffer(capacity: 64)
        reused.writeUInt64(.max)
        reused.removeAll()
        #expect(reused == DataBuffer(), "bytes left past the end after removeAll do not count")
        reused.writeUInt8(1)
        #expect(reused == DataBuffer(bytes: [1]))
    }

    @Test func writesGrowTheBufferInPlaceAndCopiesAreIndependent() throws {
        var buffer = DataBuffer(capacity: 1024)
        weak let storage = buffer.storage          // weak: it must not make the storage look shared
        #expect(storage != nil)
        for i in 0..<1000 { buffer.writeUInt8(UInt8(truncatingIfNeeded: i)) }
        #expect(storage != nil && buffer.storage === storage, "appends within capacity must not copy the bytes")
        var copy = buffer
        copy.writeUInt8(7)
        #expect(copy.storage !== buffer.storage, "a shared buffer is copied before it is written")
        #expect(buffer.count == 1000 && copy.count == 1001)
        #expect(buffer.allBytes == copy.allBytes.dropLast())
    }
}
