import CabinetModel
import Foundation

// Classes written by @StoredModel. Each has a hand-written twin in
// HandModels.swift, stored under the same name, whose records must be the same bytes.

enum Mood: UInt8 { case calm, loud, sad }
enum Genre: String { case jazz, rock }
enum Level: Int { case low = -1, high = 1_000 }
enum Scale: Double { case half = 0.5, twice = 2 }

@StoredModel
final class MacroTag: StoredObject {
    override class var storedName: String { "Tag" }
    var label = ""
}

/// One property of every type DataBuffer writes.
@StoredModel
final class MacroEverything: StoredObject {
    override class var storedName: String { "Everything" }
    var int8: Int8 = 0
    var uint8: UInt8 = 0
    var int16: Int16 = 0
    var uint16: UInt16 = 0
    var int32: Int32 = 0
    var uint32: UInt32 = 0
    var int64: Int64 = 0
    var uint64: UInt64 = 0
    var int = 0
    var uint: UInt = 0
    var float: Float = 0
    var double = 0.0
    var bool = false
    var string = ""
    var optionalString: String? = nil
    var data = Data()
    var date = Date(timeIntervalSinceReferenceDate: 0)
    var optionalDate: Date? = nil
    var mood: Mood = .calm
    var genre: Genre = .jazz
    var lastMood: Mood? = nil
    var moods: [Mood] = []
    var tag: MacroTag? = nil
    var tags: [MacroTag] = []
    var list = StoredList<MacroTag>()
    var anything: StoredObject? = nil
    var everything: [StoredObject] = []
    var strings: [String] = []
    var uint32s: [UInt32] = []
    var int64s: [Int64] = []
    var doubles: [Double] = []
    var bytes: [UInt8] = []
    var int16s: [Int16] = []
    var dates: [Date] = []
    var maybeStrings: [String?] = []
    var rating: Int32? = nil
    var grid: [[UInt16]] = []
    var float32: Float32 = 0
    var float64: Float64 = 0
    var qualified: Swift.Int = 0
    var level: Level = .low
    var scale: Scale = .half
    var optionalData: Data? = nil
    var optionalBool: Bool? = nil
    var optionalUInt64: UInt64? = nil
    var optionalStrings: [String]? = nil
    var floats: [Float] = []
    var flags: [Bool] = []
    var datas: [Data] = []
    var ints: [Int] = []
    var maybeMoods: [Mood?] = []
    var maybeDates: [Date?] = []
    @Transient var scratch = 0
}

/// The Song and Album: indexes declared by attributes, a version-2 property.
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

@StoredModel(version: 2)
final class Album: StoredObject {
    var name = ""
    @Indexed var songs: [Song] = []       // a references index
    @Since(2) var year: UInt16 = 0        // version-1 records read it as 0
}

/// A track of a disc: the target of the version tests' references.
@StoredModel
final class Track: StoredObject {
    var title = ""
    var `default`: Mood = .calm             // a name that needs backticks
}

/// The first version of Disc, as a program that shipped it wrote it.
@StoredModel
final class DiscVersion1: StoredObject {
    override class var storedName: String { "Disc" }
    var name = ""
    var tracks: [Track] = []
}

/// Version 2 of Disc: a property added.
@StoredModel(version: 2)
final class Disc: StoredObject {
    var name = ""
    var tracks: [Track] = []
    @Since(2) var year: UInt16 = 0
}

/// Version 3 of Disc: the year moved to a wider property, the old one removed
/// and carried over by a read(from:) of the class's own.
@StoredModel(version: 3)
final class DiscVersion3: StoredObject {
    override class var storedName: String { "Disc" }
    var name = ""
    var tracks: [Track] = []
    @Since(2) @Removed(in: 3) var year: UInt16 = 0
    @Since(3) var fullYear: Int32 = 0

    override func read(from buffer: inout DataBuffer) throws {
        try readStoredProperties(from: &buffer)
        if buffer.version < 3 { fullYear = Int32(year) }
    }
}
