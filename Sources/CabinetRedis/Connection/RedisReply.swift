import CabinetStorage
import CHiredis

/// One reply of the server, copied out of hiredis's reply object (which is freed at once).
enum RedisReply: Equatable {
    case string([UInt8])
    case status(String)
    case integer(Int64)
    case null
    case error(String)
    case array([RedisReply])
    /// An array reply whose elements are all strings or nils (`HMGET`, `HSCAN`'s
    /// fields, `ZRANGEBYLEX`): copied into one buffer, not one array per element.
    /// An `EXEC`'s reply is never one: every save's has `INCR`'s integer.
    case strings(RedisStrings)

    /// Copies `reply` (a `redisReply *`), which stays the caller's to free.
    init(_ reply: UnsafeMutablePointer<redisReply>) {
        let value = reply.pointee
        func text() -> String {
            guard let str = value.str else { return "" }
            return String(decoding: UnsafeRawBufferPointer(start: str, count: value.len), as: UTF8.self)
        }
        switch value.type {
        case REDIS_REPLY_STRING:
            self = .string(value.str.map { Array(UnsafeRawBufferPointer(start: $0, count: value.len)) } ?? [])
        case REDIS_REPLY_STATUS: self = .status(text())
        case REDIS_REPLY_INTEGER: self = .integer(value.integer)
        case REDIS_REPLY_ERROR: self = .error(text())
        case REDIS_REPLY_ARRAY where value.elements > 0 && (0..<value.elements).allSatisfy({
            value.element[$0].map { $0.pointee.type == REDIS_REPLY_STRING || $0.pointee.type == REDIS_REPLY_NIL } ?? false
        }):
            self = .strings(RedisStrings(value))
        case REDIS_REPLY_ARRAY:
            var elements: [RedisReply] = []
            elements.reserveCapacity(value.elements)
            for index in 0..<value.elements {
                if let element = value.element[index] { elements.append(RedisReply(element)) } else { elements.append(.null) }
            }
            self = .array(elements)
        default: self = .null
        }
    }

    /// The error text, if this is an error reply.
    var errorMessage: String? {
        if case .error(let message) = self { return message }
        return nil
    }

    var bytes: [UInt8]? {
        if case .string(let bytes) = self { return bytes }
        return nil
    }

    /// An integer reply, or a string holding a decimal integer (as `GET` of a counter gives).
    var integer: Int64? {
        switch self {
        case .integer(let value): value
        case .string(let bytes): Int64(String(decoding: bytes, as: UTF8.self))
        default: nil
        }
    }

    /// An array reply's elements (a ``strings(_:)`` reply's copied out, one array each).
    var elements: [RedisReply]? {
        switch self {
        case .array(let elements): return elements
        case .strings(let strings): return (0..<strings.count).map { strings[$0].map(RedisReply.string) ?? .null }
        default: return nil
        }
    }

    /// An array reply of strings and nils, in one buffer (an empty array reply gives an empty one).
    var strings: RedisStrings? {
        switch self {
        case .strings(let strings): return strings
        case .array(let elements) where elements.isEmpty: return RedisStrings()
        default: return nil
        }
    }
}

/// The elements of an array reply of strings and nils, one after another in one buffer.
struct RedisStrings: Equatable {
    private var bytes: [UInt8] = []
    /// Each element's place in ``bytes``; a nil has none.
    private var ranges: [Range<Int>?] = []

    init() {}

    /// Copies `reply`'s elements, which are all strings or nils.
    init(_ reply: redisReply) {
        let total = (0..<reply.elements).reduce(0) { $0 + (reply.element[$1]?.pointee.len ?? 0) }
        bytes.reserveCapacity(total)
        ranges.reserveCapacity(reply.elements)
        for index in 0..<reply.elements {
            guard let element = reply.element[index]?.pointee, element.type == REDIS_REPLY_STRING else { ranges.append(nil); continue }
            let start = bytes.count
            if let str = element.str { bytes.append(contentsOf: UnsafeRawBufferPointer(start: str, count: element.len)) }
            ranges.append(start..<bytes.count)
        }
    }

    var count: Int { ranges.count }

    /// Element `index`'s bytes, or `nil` for a nil.
    subscript(index: Int) -> [UInt8]? { ranges[index].map { Array(bytes[$0]) } }

    /// Calls `body` with each element in order (`nil` for a nil), without copying; `body` returns false to stop.
    func forEach(_ body: (Int, UnsafeRawBufferPointer?) throws -> Bool) rethrows {
        try bytes.withUnsafeBytes { buffer in
            for (index, range) in ranges.enumerated() {
                guard try body(index, range.map { UnsafeRawBufferPointer(rebasing: buffer[$0]) }) else { return }
            }
        }
    }
}
