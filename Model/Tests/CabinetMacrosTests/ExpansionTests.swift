import MacroTesting
import Testing

/// What @StoredModel writes for each kind of property: the DataBuffer call of
/// the type, in declaration order.
@Suite(.macros(cabinetMacros, record: .missing))
struct ExpansionTests {
    @Test func theIssuesSongIsWrittenPropertyByPropertyWithItsIndexes() {
        assertMacro {
            """
            @StoredModel
            final class Song: StoredObject {
                var title = ""
                @Indexed var artist = ""
                @Indexed var seconds: UInt32 = 0
                @FullText var lyrics: String? = nil
                var added: Date? = nil
                var album: Album? = nil
                var tags: [String] = []
                @Transient var playCount = 0
            }
            """
        } expansion: {
            #"""
            final class Song: StoredObject {
                @Cabinet.Stored
                var title = ""
                @Cabinet.Stored var artist = ""
                @Cabinet.Stored var seconds: UInt32 = 0
                @Cabinet.Stored var lyrics: String? = nil
                @Cabinet.Stored
                var added: Date? = nil
                @Cabinet.Stored @CabinetModel._StorableCheck
                var album: Album? = nil
                @Cabinet.Stored
                var tags: [String] = []
                var playCount = 0

                override func read(from buffer: inout Cabinet.DataBuffer) throws {
                    self.title = try buffer.readString()
                    self.artist = try buffer.readString()
                    self.seconds = try buffer.readUInt32()
                    self.lyrics = try buffer.readOptionalString()
                    self.added = try buffer.readDate()
                    self.album = try buffer.readModelValue(Album?.self)
                    self.tags = try buffer.readStrings()
                }

                override func write(to buffer: inout Cabinet.DataBuffer) {
                    buffer.writeString(self.title)
                    buffer.writeString(self.artist)
                    buffer.writeUInt32(self.seconds)
                    buffer.writeOptionalString(self.lyrics)
                    buffer.writeDate(self.added)
                    buffer.writeModelValue(self.album)
                    buffer.writeStrings(self.tags)
                }

                override class var version: UInt8 {
                    1
                }

                override class var layoutFingerprints: [UInt8: UInt32] {
                    [
                        1: 0x206DA7FE,  // String,String,UInt32,String,Date,Album?,[String]
                    ]
                }

                override class var indexes: [Cabinet.StoredIndex] {
                    [.value(\Song.artist), .value(\Song.seconds), .fullText(\Song.lyrics)]
                }
            }
            """#
        }
    }

    @Test func aPropertySinceVersionTwoIsReadOnlyFromVersionTwoRecords() {
        assertMacro {
            """
            @StoredModel(version: 2)
            final class Album: StoredObject {
                var name = ""
                @Indexed var songs: [Song] = []
                @Since(2) var year: UInt16 = 0
            }
            """
        } expansion: {
            #"""
            final class Album: StoredObject {
                @Cabinet.Stored
                var name = ""
                @Cabinet.Stored @CabinetModel._StorableCheck var songs: [Song] = []
                @Cabinet.Stored var year: UInt16 = 0

                override func read(from buffer: inout Cabinet.DataBuffer) throws {
                    self.name = try buffer.readString()
                    self.songs = try buffer.readModelValue([Song].self)
                    if buffer.version >= 2 {
                        self.year = try buffer.readUInt16()
                    } else {
                        self.year = 0
                    }
                }

                override func write(to buffer: inout Cabinet.DataBuffer) {
                    buffer.writeString(self.name)
                    buffer.writeModelValue(self.songs)
                    buffer.writeUInt16(self.year)
                }

                override class var version: UInt8 {
                    2
                }

                override class var layoutFingerprints: [UInt8: UInt32] {
                    [
                        1: 0x620750CB,  // String,[Song]
                        2: 0xCC61FC52,  // String,[Song],UInt16
                    ]
                }

                override class var indexes: [Cabinet.StoredIndex] {
                    [.references(\Album.songs)]
                }
            }
            """#
        }
    }

    @Test func aRemovedPropertyIsReadFromOlderRecordsAndNeverWritten() {
        assertMacro {
            """
            @StoredModel(version: 3)
            final class Artist: StoredObject {
                var name = ""
                @Removed(in: 3) var oldName = ""
                @Since(2) @Removed(in: 3) var nickname: String? = nil
                @Since(3) var country = ""
            }
            """
        } expansion: {
            """
            final class Artist: StoredObject {
                @Cabinet.Stored
                var name = ""
                var oldName = ""
                var nickname: String? = nil
                @Cabinet.Stored var country = ""

                override func read(from buffer: inout Cabinet.DataBuffer) throws {
                    self.name = try buffer.readString()
                    if buffer.version < 3 {
                        self.oldName = try buffer.readString()
                    } else {
                        self.oldName = ""
                    }
                    if buffer.version >= 2 && buffer.version < 3 {
                        self.nickname = try buffer.readOptionalString()
                    } else {
                        self.nickname = nil
                    }
                    if buffer.version >= 3 {
                        self.country = try buffer.readString()
                    } else {
                        self.country = ""
                    }
                }

                override func write(to buffer: inout Cabinet.DataBuffer) {
                    buffer.writeString(self.name)
                    buffer.writeString(self.country)
                }

                override class var version: UInt8 {
                    3
                }

                override class var layoutFingerprints: [UInt8: UInt32] {
                    [
                        1: 0xCE89015D,  // String,String
                        2: 0x1D779786,  // String,String,String
                        3: 0xCE89015D,  // String,String
                    ]
                }
            }
            """
        }
    }

    @Test func aTypeKnownOnlyByNameIsReadOnceOnItsPropertySoThatAnErrorIsShownThere() {
        assertMacro {
            """
            final class Song: StoredObject {
                @_StorableCheck var album: Album? = nil
                @_StorableCheck var moods: [Mood?] = []
                @_StorableCheck var `default`: Mood = .calm
            }
            """
        } expansion: {
            """
            final class Song: StoredObject {
                var album: Album? = nil

                private static func _cabinetStorable_album(_ buffer: inout Cabinet.DataBuffer) throws {
                    _ = try buffer.readModelValue(Album?.self)
                }
                var moods: [Mood?] = []

                private static func _cabinetStorable_moods(_ buffer: inout Cabinet.DataBuffer) throws {
                    _ = try buffer.readArray(minimumElementSize: 1) {
                        try $0.readModelValue(Mood?.self)
                    }
                }
                var `default`: Mood = .calm

                private static func _cabinetStorable_default(_ buffer: inout Cabinet.DataBuffer) throws {
                    _ = try buffer.readModelValue(Mood.self)
                }
            }
            """
        }
    }

    @Test func aPublicClassGetsPublicOverridesAndKeepsWhatItDeclares() {
        assertMacro {
            """
            @StoredModel
            public final class Custom: StoredObject {
                public var name = ""
                @Stored var kept = 0
                public static var count = 0
                var computed: Int { kept + 1 }
                public override func read(from buffer: inout DataBuffer) throws {
                    name = try buffer.readString()
                    kept = try buffer.readInt()
                }
            }
            """
        } expansion: {
            """
            public final class Custom: StoredObject {
                @Cabinet.Stored
                public var name = ""
                @Stored var kept = 0
                public static var count = 0
                var computed: Int { kept + 1 }
                public override func read(from buffer: inout DataBuffer) throws {
                    name = try buffer.readString()
                    kept = try buffer.readInt()
                }

                public final func readStoredProperties(from buffer: inout Cabinet.DataBuffer) throws {
                    self.name = try buffer.readString()
                    self.kept = try buffer.readInt()
                }

                public override func write(to buffer: inout Cabinet.DataBuffer) {
                    buffer.writeString(self.name)
                    buffer.writeInt(self.kept)
                }

                public override class var version: UInt8 {
                    1
                }

                public override class var layoutFingerprints: [UInt8: UInt32] {
                    [
                        1: 0x3CF3B747,  // String,Int64
                    ]
                }
            }
            """
        }
    }

    @Test func aClassThatWritesItsOwnRecordsGetsNoLayoutFingerprints() {
        assertMacro {
            """
            @StoredModel(version: 2)
            final class Note: StoredObject {
                var text = ""
                @Since(2) var pinned = false
                override func write(to buffer: inout DataBuffer) {
                    buffer.writeString(text)
                    buffer.writeBool(pinned)
                }
            }
            """
        } expansion: {
            """
            final class Note: StoredObject {
                @Cabinet.Stored
                var text = ""
                @Cabinet.Stored var pinned = false
                override func write(to buffer: inout DataBuffer) {
                    buffer.writeString(text)
                    buffer.writeBool(pinned)
                }

                override func read(from buffer: inout Cabinet.DataBuffer) throws {
                    self.text = try buffer.readString()
                    if buffer.version >= 2 {
                        self.pinned = try buffer.readBool()
                    } else {
                        self.pinned = false
                    }
                }

                override class var version: UInt8 {
                    2
                }
            }
            """
        }
    }
}
