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

    var elements: [RedisReply]? {
        if case .array(let elements) = self { return elements }
        return nil
    }
}

/// One command to send: its words, as bytes (keys and values are binary).
struct RedisCommand {
    var arguments: [[UInt8]]

    init(_ words: String...) { arguments = words.map { Array($0.utf8) } }
    /// Words, then a binary argument (a record, a log entry, a catalog).
    init(_ words: String..., bytes: [UInt8]) { arguments = words.map { Array($0.utf8) } + [bytes] }
    init(arguments: [[UInt8]]) { self.arguments = arguments }

    mutating func append(_ word: String) { arguments.append(Array(word.utf8)) }
    mutating func append(_ bytes: [UInt8]) { arguments.append(bytes) }
    mutating func append(_ bytes: UnsafeRawBufferPointer) { arguments.append(Array(bytes)) }

    /// The command's name, for messages (never its arguments: they may be a password or a record).
    var name: String { arguments.first.map { String(decoding: $0, as: UTF8.self) } ?? "" }
}
