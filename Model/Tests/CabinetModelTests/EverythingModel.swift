import Cabinet
import Foundation

/// The properties MacroEverything and HandEverything share, so one function
/// fills either and one describes either.
protocol EverythingModel: StoredObject {
    associatedtype Tag: TagModel
    var int8: Int8 { get set }
    var uint8: UInt8 { get set }
    var int16: Int16 { get set }
    var uint16: UInt16 { get set }
    var int32: Int32 { get set }
    var uint32: UInt32 { get set }
    var int64: Int64 { get set }
    var uint64: UInt64 { get set }
    var int: Int { get set }
    var uint: UInt { get set }
    var float: Float { get set }
    var double: Double { get set }
    var bool: Bool { get set }
    var string: String { get set }
    var optionalString: String? { get set }
    var data: Data { get set }
    var date: Date { get set }
    var optionalDate: Date? { get set }
    var mood: Mood { get set }
    var genre: Genre { get set }
    var lastMood: Mood? { get set }
    var moods: [Mood] { get set }
    var tag: Tag? { get set }
    var tags: [Tag] { get set }
    var list: StoredList<Tag> { get set }
    var anything: StoredObject? { get set }
    var everything: [StoredObject] { get set }
    var strings: [String] { get set }
    var uint32s: [UInt32] { get set }
    var int64s: [Int64] { get set }
    var doubles: [Double] { get set }
    var bytes: [UInt8] { get set }
    var int16s: [Int16] { get set }
    var dates: [Date] { get set }
    var maybeStrings: [String?] { get set }
    var rating: Int32? { get set }
    var grid: [[UInt16]] { get set }
    var float32: Float32 { get set }
    var float64: Float64 { get set }
    var qualified: Swift.Int { get set }
    var level: Level { get set }
    var scale: Scale { get set }
    var optionalData: Data? { get set }
    var optionalBool: Bool? { get set }
    var optionalUInt64: UInt64? { get set }
    var optionalStrings: [String]? { get set }
    var floats: [Float] { get set }
    var flags: [Bool] { get set }
    var datas: [Data] { get set }
    var ints: [Int] { get set }
    var maybeMoods: [Mood?] { get set }
    var maybeDates: [Date?] { get set }
}

protocol TagModel: StoredObject {
    var label: String { get set }
}

extension MacroEverything: EverythingModel {}
extension HandEverything: EverythingModel {}
extension MacroTag: TagModel {}
extension HandTag: TagModel {}

extension EverythingModel {
    /// Sets every property to a value other than its default; references to `tags` and `other`.
    func fill(tags: [Tag], other: StoredObject) {
        int8 = -8; uint8 = 250; int16 = -1_600; uint16 = 65_000; int32 = -32_000_000; uint32 = 4_000_000_000
        int64 = .min; uint64 = .max; int = -42; uint = 42; float = 1.5; double = -.infinity; bool = true
        string = "Ünïcode ✓"; optionalString = "present"; data = Data([0, 1, 2, 255])
        date = Date(timeIntervalSinceReferenceDate: 12_345.5); optionalDate = Date(timeIntervalSinceReferenceDate: -3)
        mood = .sad; genre = .rock; lastMood = .loud; moods = [.loud, .calm, .sad]
        tag = tags[0]; self.tags = [tags[1], tags[0]]; list = StoredList(tags); anything = tags[2]; everything = [tags[1], other]
        strings = ["a", "", "ç"]; uint32s = [1, .max]; int64s = [-1, 0, .max]; doubles = [0.25, .nan]; bytes = [9, 8, 7]
        int16s = [-2, 2]; dates = [Date(timeIntervalSinceReferenceDate: 1), Date(timeIntervalSinceReferenceDate: 0)]
        maybeStrings = ["x", nil, "y"]   // "" would read back as nil, as writeOptionalString writes it
        rating = -5; grid = [[1, 2], [], [3]]
        float32 = -0.75; float64 = 1e300; qualified = 99; level = .high; scale = .twice
        optionalData = Data([7]); optionalBool = false; optionalUInt64 = .max; optionalStrings = ["z", ""]
        floats = [1.25, -2]; flags = [true, false, true]; datas = [Data(), Data([1, 2])]; ints = [.min, 0, .max]
        maybeMoods = [nil, .sad]; maybeDates = [nil, Date(timeIntervalSinceReferenceDate: 60)]
    }

    /// Every value, references by class name and row, in one comparable string.
    var summary: String {
        func name(_ object: StoredObject?) -> String {
            object.map { "\(type(of: $0).storedName)#\($0.rowID)" } ?? "nil"
        }
        let numbers: [Any] = [int8, uint8, int16, uint16, int32, uint32, int64, uint64, int, uint, float, double.bitPattern, bool]
        // Data prints only its count and Date whole seconds: their bytes and intervals say all.
        let values: [Any] = [string, optionalString as Any, Array(data), date.timeIntervalSinceReferenceDate,
                             optionalDate?.timeIntervalSinceReferenceDate as Any, mood, genre, lastMood as Any, moods]
        let references = [name(tag), tags.map(name).joined(separator: ","), list.map(name).joined(separator: ","),
                          name(anything), everything.map(name).joined(separator: ",")]
        let arrays: [Any] = [strings, uint32s, int64s, doubles.map(\.bitPattern), bytes, int16s, dates.map(\.timeIntervalSinceReferenceDate),
                             maybeStrings, rating as Any, grid]
        let more: [Any] = [float32, float64, qualified, level, scale, optionalData.map { Array($0) } as Any, optionalBool as Any, optionalUInt64 as Any,
                           optionalStrings as Any, floats, flags, datas.map { Array($0) }, ints, maybeMoods,
                           maybeDates.map { $0?.timeIntervalSinceReferenceDate }]
        return (numbers + values + references + arrays + more).map { "\($0)" }.joined(separator: " | ")
    }
}
