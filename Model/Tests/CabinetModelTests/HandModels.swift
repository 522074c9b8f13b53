import Cabinet
import Foundation

// The hand-written twins of MacroModels.swift: what a careful person writes
// for the same properties, stored under the same names.

final class HandTag: StoredObject {
    override class var storedName: String { "Tag" }
    @Stored var label = ""

    override func read(from buffer: inout DataBuffer) throws {
        label = try buffer.readString()
    }

    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(label)
    }
}

final class HandEverything: StoredObject {
    override class var storedName: String { "Everything" }
    @Stored var int8: Int8 = 0
    @Stored var uint8: UInt8 = 0
    @Stored var int16: Int16 = 0
    @Stored var uint16: UInt16 = 0
    @Stored var int32: Int32 = 0
    @Stored var uint32: UInt32 = 0
    @Stored var int64: Int64 = 0
    @Stored var uint64: UInt64 = 0
    @Stored var int = 0
    @Stored var uint: UInt = 0
    @Stored var float: Float = 0
    @Stored var double = 0.0
    @Stored var bool = false
    @Stored var string = ""
    @Stored var optionalString: String? = nil
    @Stored var data = Data()
    @Stored var date = Date(timeIntervalSinceReferenceDate: 0)
    @Stored var optionalDate: Date? = nil
    @Stored var mood: Mood = .calm
    @Stored var genre: Genre = .jazz
    @Stored var lastMood: Mood? = nil
    @Stored var moods: [Mood] = []
    @Stored var tag: HandTag? = nil
    @Stored var tags: [HandTag] = []
    @Stored var list = StoredList<HandTag>()
    @Stored var anything: StoredObject? = nil
    @Stored var everything: [StoredObject] = []
    @Stored var strings: [String] = []
    @Stored var uint32s: [UInt32] = []
    @Stored var int64s: [Int64] = []
    @Stored var doubles: [Double] = []
    @Stored var bytes: [UInt8] = []
    @Stored var int16s: [Int16] = []
    @Stored var dates: [Date] = []
    @Stored var maybeStrings: [String?] = []
    @Stored var rating: Int32? = nil
    @Stored var grid: [[UInt16]] = []
    @Stored var float32: Float32 = 0
    @Stored var float64: Float64 = 0
    @Stored var qualified: Swift.Int = 0
    @Stored var level: Level = .low
    @Stored var scale: Scale = .half
    @Stored var optionalData: Data? = nil
    @Stored var optionalBool: Bool? = nil
    @Stored var optionalUInt64: UInt64? = nil
    @Stored var optionalStrings: [String]? = nil
    @Stored var floats: [Float] = []
    @Stored var flags: [Bool] = []
    @Stored var datas: [Data] = []
    @Stored var ints: [Int] = []
    @Stored var maybeMoods: [Mood?] = []
    @Stored var maybeDates: [Date?] = []

    override func read(from buffer: inout DataBuffer) throws {
        int8 = try buffer.readInt8()
        uint8 = try buffer.readUInt8()
        int16 = try buffer.readInt16()
        uint16 = try buffer.readUInt16()
        int32 = try buffer.readInt32()
        uint32 = try buffer.readUInt32()
        int64 = try buffer.readInt64()
        uint64 = try buffer.readUInt64()
        int = try buffer.readInt()
        uint = try buffer.readUInt()
        float = try buffer.readFloat32()
        double = try buffer.readFloat64()
        bool = try buffer.readBool()
        string = try buffer.readString()
        optionalString = try buffer.readOptionalString()
        data = try buffer.readData()
        date = try buffer.readDate() ?? Date(timeIntervalSinceReferenceDate: 0)
        optionalDate = try buffer.readDate()
        mood = try buffer.readRawValue(Mood.self) { try $0.readUInt8() }
        genre = try buffer.readRawValue(Genre.self) { try $0.readString() }
        lastMood = try buffer.readOptional { try $0.readRawValue(Mood.self) { try $0.readUInt8() } }
        moods = try buffer.readArray(minimumElementSize: 1) { try $0.readRawValue(Mood.self) { try $0.readUInt8() } }
        tag = try buffer.readReference(to: HandTag.self)
        tags = try buffer.readReferences(to: HandTag.self)
        list = try buffer.readList(of: HandTag.self)
        anything = try buffer.readAnyReference()
        everything = try buffer.readAnyReferences()
        strings = try buffer.readStrings()
        uint32s = try buffer.readUInt32s()
        int64s = try buffer.readInt64s()
        doubles = try buffer.readFloat64s()
        bytes = try buffer.readBytes()
        int16s = try buffer.readArray(minimumElementSize: 2) { try $0.readInt16() }
        dates = try buffer.readArray(minimumElementSize: 8) { try $0.readDate() ?? Date(timeIntervalSinceReferenceDate: 0) }
        maybeStrings = try buffer.readArray(minimumElementSize: 4) { try $0.readOptionalString() }
        rating = try buffer.readOptional { try $0.readInt32() }
        grid = try buffer.readArray(minimumElementSize: 4) { try $0.readArray(minimumElementSize: 2) { try $0.readUInt16() } }
        float32 = try buffer.readFloat32()
        float64 = try buffer.readFloat64()
        qualified = try buffer.readInt()
        level = try buffer.readRawValue(Level.self) { try $0.readInt() }
        scale = try buffer.readRawValue(Scale.self) { try $0.readFloat64() }
        optionalData = try buffer.readOptional { try $0.readData() }
        optionalBool = try buffer.readOptional { try $0.readBool() }
        optionalUInt64 = try buffer.readOptional { try $0.readUInt64() }
        optionalStrings = try buffer.readOptional { try $0.readStrings() }
        floats = try buffer.readArray(minimumElementSize: 4) { try $0.readFloat32() }
        flags = try buffer.readArray(minimumElementSize: 1) { try $0.readBool() }
        datas = try buffer.readArray(minimumElementSize: 4) { try $0.readData() }
        ints = try buffer.readArray(minimumElementSize: 8) { try $0.readInt() }
        maybeMoods = try buffer.readArray(minimumElementSize: 1) { try $0.readOptional { try $0.readRawValue(Mood.self) { try $0.readUInt8() } } }
        maybeDates = try buffer.readArray(minimumElementSize: 8) { try $0.readDate() }
    }

    override func write(to buffer: inout DataBuffer) {
        buffer.writeInt8(int8)
        buffer.writeUInt8(uint8)
        buffer.writeInt16(int16)
        buffer.writeUInt16(uint16)
        buffer.writeInt32(int32)
        buffer.writeUInt32(uint32)
        buffer.writeInt64(int64)
        buffer.writeUInt64(uint64)
        buffer.writeInt(int)
        buffer.writeUInt(uint)
        buffer.writeFloat32(float)
        buffer.writeFloat64(double)
        buffer.writeBool(bool)
        buffer.writeString(string)
        buffer.writeOptionalString(optionalString)
        buffer.writeData(data)
        buffer.writeDate(date)
        buffer.writeDate(optionalDate)
        buffer.writeRawValue(mood) { $0.writeUInt8($1) }
        buffer.writeRawValue(genre) { $0.writeString($1) }
        buffer.writeOptional(lastMood) { $0.writeRawValue($1) { $0.writeUInt8($1) } }
        buffer.writeArray(moods) { $0.writeRawValue($1) { $0.writeUInt8($1) } }
        buffer.writeReference(tag)
        buffer.writeReferences(tags)
        buffer.writeList(list)
        buffer.writeAnyReference(anything)
        buffer.writeAnyReferences(everything)
        buffer.writeStrings(strings)
        buffer.writeUInt32s(uint32s)
        buffer.writeInt64s(int64s)
        buffer.writeFloat64s(doubles)
        buffer.writeBytes(bytes)
        buffer.writeArray(int16s) { $0.writeInt16($1) }
        buffer.writeArray(dates) { $0.writeDate($1) }
        buffer.writeArray(maybeStrings) { $0.writeOptionalString($1) }
        buffer.writeOptional(rating) { $0.writeInt32($1) }
        buffer.writeArray(grid) { $0.writeArray($1) { $0.writeUInt16($1) } }
        buffer.writeFloat32(float32)
        buffer.writeFloat64(float64)
        buffer.writeInt(qualified)
        buffer.writeRawValue(level) { $0.writeInt($1) }
        buffer.writeRawValue(scale) { $0.writeFloat64($1) }
        buffer.writeOptional(optionalData) { $0.writeData($1) }
        buffer.writeOptional(optionalBool) { $0.writeBool($1) }
        buffer.writeOptional(optionalUInt64) { $0.writeUInt64($1) }
        buffer.writeOptional(optionalStrings) { $0.writeStrings($1) }
        buffer.writeArray(floats) { $0.writeFloat32($1) }
        buffer.writeArray(flags) { $0.writeBool($1) }
        buffer.writeArray(datas) { $0.writeData($1) }
        buffer.writeArray(ints) { $0.writeInt($1) }
        buffer.writeArray(maybeMoods) { $0.writeOptional($1) { $0.writeRawValue($1) { $0.writeUInt8($1) } } }
        buffer.writeArray(maybeDates) { $0.writeDate($1) }
    }
}
