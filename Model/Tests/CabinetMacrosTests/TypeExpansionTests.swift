import MacroTesting
import Testing

/// The DataBuffer method of every type @StoredModel stores: scalars at their
/// own width, arrays and optionals of their elements' methods, lists, enums.
@Suite(.macros(cabinetMacros, record: .missing))
struct TypeExpansionTests {
    @Test func everyScalarTypeHasTheMethodOfItsWidth() {
        assertMacro {
            """
            @StoredModel
            final class Scalars: StoredObject {
                var a: Int8 = 0
                var b: UInt8 = 0
                var c: Int16 = 0
                var d: UInt16 = 0
                var e: Int32 = 0
                var f: UInt32 = 0
                var g: Int64 = 0
                var h: UInt64 = 0
                var i = 0
                var j: UInt = 0
                var k: Float = 0
                var l = 0.5
                var m = true
                var n = Data()
                var o = Date()
            }
            """
        } expansion: {
            """
            final class Scalars: StoredObject {
                @Cabinet.Stored
                var a: Int8 = 0
                @Cabinet.Stored
                var b: UInt8 = 0
                @Cabinet.Stored
                var c: Int16 = 0
                @Cabinet.Stored
                var d: UInt16 = 0
                @Cabinet.Stored
                var e: Int32 = 0
                @Cabinet.Stored
                var f: UInt32 = 0
                @Cabinet.Stored
                var g: Int64 = 0
                @Cabinet.Stored
                var h: UInt64 = 0
                @Cabinet.Stored
                var i = 0
                @Cabinet.Stored
                var j: UInt = 0
                @Cabinet.Stored
                var k: Float = 0
                @Cabinet.Stored
                var l = 0.5
                @Cabinet.Stored
                var m = true
                @Cabinet.Stored
                var n = Data()
                @Cabinet.Stored
                var o = Date()

                override func read(from buffer: inout Cabinet.DataBuffer) throws {
                    self.a = try buffer.readInt8()
                    self.b = try buffer.readUInt8()
                    self.c = try buffer.readInt16()
                    self.d = try buffer.readUInt16()
                    self.e = try buffer.readInt32()
                    self.f = try buffer.readUInt32()
                    self.g = try buffer.readInt64()
                    self.h = try buffer.readUInt64()
                    self.i = try buffer.readInt()
                    self.j = try buffer.readUInt()
                    self.k = try buffer.readFloat32()
                    self.l = try buffer.readFloat64()
                    self.m = try buffer.readBool()
                    self.n = try buffer.readData()
                    self.o = (try buffer.readDate() ?? Foundation.Date(timeIntervalSinceReferenceDate: 0))
                }

                override func write(to buffer: inout Cabinet.DataBuffer) {
                    buffer.writeInt8(self.a)
                    buffer.writeUInt8(self.b)
                    buffer.writeInt16(self.c)
                    buffer.writeUInt16(self.d)
                    buffer.writeInt32(self.e)
                    buffer.writeUInt32(self.f)
                    buffer.writeInt64(self.g)
                    buffer.writeUInt64(self.h)
                    buffer.writeInt(self.i)
                    buffer.writeUInt(self.j)
                    buffer.writeFloat32(self.k)
                    buffer.writeFloat64(self.l)
                    buffer.writeBool(self.m)
                    buffer.writeData(self.n)
                    buffer.writeDate(self.o)
                }

                override class var version: UInt8 {
                    1
                }

                override class var layoutFingerprints: [UInt8: UInt32] {
                    [
                        1: 0x23355DB3,  // Int8,UInt8,Int16,UInt16,Int32,UInt32,Int64,UInt64,Int64,UInt64,Float32,Float64,Bool,Data,Date
                    ]
                }
            }
            """
        }
    }

    /// `Swift.Int` is `Int`: the standard library's types spelled with their module
    /// have their own methods, not the overloads for names the macro does not know.
    @Test func typesSpelledWithTheirModuleHaveTheirOwnMethods() {
        assertMacro {
            """
            @StoredModel
            final class Qualified: StoredObject {
                var count: Swift.Int = 0
                var ratio: Swift.Double = 0
                var names: [Swift.String] = []
                var bytes: [Swift.UInt8] = []
                var flag: Swift.Bool? = nil
                var blob: Foundation.Data = Foundation.Data()
            }
            """
        } expansion: {
            """
            final class Qualified: StoredObject {
                @Cabinet.Stored
                var count: Swift.Int = 0
                @Cabinet.Stored
                var ratio: Swift.Double = 0
                @Cabinet.Stored
                var names: [Swift.String] = []
                @Cabinet.Stored
                var bytes: [Swift.UInt8] = []
                @Cabinet.Stored
                var flag: Swift.Bool? = nil
                @Cabinet.Stored
                var blob: Foundation.Data = Foundation.Data()

                override func read(from buffer: inout Cabinet.DataBuffer) throws {
                    self.count = try buffer.readInt()
                    self.ratio = try buffer.readFloat64()
                    self.names = try buffer.readStrings()
                    self.bytes = try buffer.readBytes()
                    self.flag = try buffer.readOptional {
                        try $0.readBool()
                    }
                    self.blob = try buffer.readData()
                }

                override func write(to buffer: inout Cabinet.DataBuffer) {
                    buffer.writeInt(self.count)
                    buffer.writeFloat64(self.ratio)
                    buffer.writeStrings(self.names)
                    buffer.writeBytes(self.bytes)
                    buffer.writeOptional(self.flag) {
                        $0.writeBool($1)
                    }
                    buffer.writeData(self.blob)
                }

                override class var version: UInt8 {
                    1
                }

                override class var layoutFingerprints: [UInt8: UInt32] {
                    [
                        1: 0x052A0720,  // Int64,Float64,[String],[UInt8],Bool?,Data
                    ]
                }
            }
            """
        }
    }

    @Test func arraysOptionalsListsAndEnumsUseTheirElementsMethods() {
        assertMacro {
            """
            @StoredModel
            final class Collections: StoredObject {
                var bytes: [UInt8] = []
                var counts: [UInt32] = []
                var totals: [Int64] = []
                var scores: [Double] = []
                var small: [Int32] = []
                var dates: [Date] = []
                var maybeNames: [String?] = []
                var grid: [[UInt16]] = []
                var rating: Int32? = nil
                var nested: Optional<Int16> = nil
                var flags: Array<Bool> = []
                var list = StoredList<Song>()
                var anything: StoredObject? = nil
                var everything: [StoredObject] = []
                var mood: Mood = .calm
                var lastMood: Mood? = nil
                var moods: [Mood] = []
            }
            """
        } expansion: {
            """
            final class Collections: StoredObject {
                @Cabinet.Stored
                var bytes: [UInt8] = []
                @Cabinet.Stored
                var counts: [UInt32] = []
                @Cabinet.Stored
                var totals: [Int64] = []
                @Cabinet.Stored
                var scores: [Double] = []
                @Cabinet.Stored
                var small: [Int32] = []
                @Cabinet.Stored
                var dates: [Date] = []
                @Cabinet.Stored
                var maybeNames: [String?] = []
                @Cabinet.Stored
                var grid: [[UInt16]] = []
                @Cabinet.Stored
                var rating: Int32? = nil
                @Cabinet.Stored
                var nested: Optional<Int16> = nil
                @Cabinet.Stored
                var flags: Array<Bool> = []
                @Cabinet.Stored
                var list = StoredList<Song>()
                @Cabinet.Stored
                var anything: StoredObject? = nil
                @Cabinet.Stored
                var everything: [StoredObject] = []
                @Cabinet.Stored @CabinetModel._StorableCheck
                var mood: Mood = .calm
                @Cabinet.Stored @CabinetModel._StorableCheck
                var lastMood: Mood? = nil
                @Cabinet.Stored @CabinetModel._StorableCheck
                var moods: [Mood] = []

                override func read(from buffer: inout Cabinet.DataBuffer) throws {
                    self.bytes = try buffer.readBytes()
                    self.counts = try buffer.readUInt32s()
                    self.totals = try buffer.readInt64s()
                    self.scores = try buffer.readFloat64s()
                    self.small = try buffer.readArray(minimumElementSize: 4) {
                        try $0.readInt32()
                    }
                    self.dates = try buffer.readArray(minimumElementSize: 8) {
                        (try $0.readDate() ?? Foundation.Date(timeIntervalSinceReferenceDate: 0))
                    }
                    self.maybeNames = try buffer.readArray(minimumElementSize: 4) {
                        try $0.readOptionalString()
                    }
                    self.grid = try buffer.readArray(minimumElementSize: 4) {
                        try $0.readArray(minimumElementSize: 2) {
                            try $0.readUInt16()
                        }
                    }
                    self.rating = try buffer.readOptional {
                        try $0.readInt32()
                    }
                    self.nested = try buffer.readOptional {
                        try $0.readInt16()
                    }
                    self.flags = try buffer.readArray(minimumElementSize: 1) {
                        try $0.readBool()
                    }
                    self.list = try buffer.readList(of: Song.self)
                    self.anything = try buffer.readAnyReference()
                    self.everything = try buffer.readAnyReferences()
                    self.mood = try buffer.readModelValue(Mood.self)
                    self.lastMood = try buffer.readModelValue(Mood?.self)
                    self.moods = try buffer.readModelValue([Mood].self)
                }

                override func write(to buffer: inout Cabinet.DataBuffer) {
                    buffer.writeBytes(self.bytes)
                    buffer.writeUInt32s(self.counts)
                    buffer.writeInt64s(self.totals)
                    buffer.writeFloat64s(self.scores)
                    buffer.writeArray(self.small) {
                        $0.writeInt32($1)
                    }
                    buffer.writeArray(self.dates) {
                        $0.writeDate($1)
                    }
                    buffer.writeArray(self.maybeNames) {
                        $0.writeOptionalString($1)
                    }
                    buffer.writeArray(self.grid) {
                        $0.writeArray($1) {
                            $0.writeUInt16($1)
                        }
                    }
                    buffer.writeOptional(self.rating) {
                        $0.writeInt32($1)
                    }
                    buffer.writeOptional(self.nested) {
                        $0.writeInt16($1)
                    }
                    buffer.writeArray(self.flags) {
                        $0.writeBool($1)
                    }
                    buffer.writeList(self.list)
                    buffer.writeAnyReference(self.anything)
                    buffer.writeAnyReferences(self.everything)
                    buffer.writeModelValue(self.mood)
                    buffer.writeModelValue(self.lastMood)
                    buffer.writeModelValue(self.moods)
                }

                override class var version: UInt8 {
                    1
                }

                override class var layoutFingerprints: [UInt8: UInt32] {
                    [
                        1: 0xE91E3F50,  // [UInt8],[UInt32],[Int64],[Float64],[Int32],[Date],[String],[[UInt16]],Int32?,Int16?,[Bool],StoredList<Song>,StoredObject?,[StoredObject],Mood,Mood?,[Mood]
                    ]
                }
            }
            """
        }
    }
}
