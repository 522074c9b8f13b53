import CabinetStorage

/// A reply is read only as the type its command answers: a server, or
/// something that speaks for it, whose reply is of another type (an integer
/// where a value belongs, a status where a count does) makes the call throw,
/// naming the command and the store, instead of being read as "none" or 0.
extension RedisReply {
    /// What kind of reply this is, in words, for errors.
    var kind: String {
        switch self {
        case .string: "a string"
        case .status(let text): "the status '\(text.prefix(40))'"
        case .integer(let value): "the integer \(value)"
        case .null: "nil"
        case .error(let message): "the error '\(message.prefix(80))'"
        case .array(let elements): "an array of \(elements.count)"
        case .strings(let strings): "an array of \(strings.count)"
        }
    }

    /// The error for a reply of the wrong type (or size) to `command`.
    static func unexpected(_ reply: RedisReply, to command: String, wanted: String, at location: String) -> CabinetError {
        CabinetError.malformedRecord(RecordLocation(file: location),
                                     reason: "the server answered \(command) with \(reply.kind), not \(wanted): it is not a Redis server or it was interfered with on the way; check what listens at that address")
    }

    /// `reply` as a count (an integer of 0 or more), or an error naming `command`.
    static func count(_ reply: RedisReply, of command: String, at location: String) throws -> Int {
        guard case .integer(let value) = reply, value >= 0, value <= Int64(Int.max) else {
            throw unexpected(reply, to: command, wanted: "a count", at: location)
        }
        return Int(value)
    }

    /// `reply` as a value that may be absent (a string, or nil), or an error naming `command`.
    static func optionalString(_ reply: RedisReply, of command: String, at location: String) throws -> [UInt8]? {
        switch reply {
        case .string(let bytes): return bytes
        case .null: return nil
        default: throw unexpected(reply, to: command, wanted: "a value or nil", at: location)
        }
    }
}

extension RedisReply {
    /// `reply` as an array of strings (`HKEYS`, `ZRANGEBYLEX`), or an error naming `command`.
    static func stringList(_ reply: RedisReply, of command: String, at location: String) throws -> [[UInt8]] {
        guard let elements = reply.elements else { throw unexpected(reply, to: command, wanted: "a list of strings", at: location) }
        return try elements.map {
            guard case .string(let bytes) = $0 else { throw unexpected($0, to: command, wanted: "a list of strings", at: location) }
            return bytes
        }
    }

    /// `reply` as an array of exactly `count` values or nils (`HMGET`), or an error naming `command`.
    static func optionalStrings(_ reply: RedisReply, count: Int, of command: String, at location: String) throws -> [[UInt8]?] {
        guard let elements = reply.elements, elements.count == count else {
            throw unexpected(reply, to: command, wanted: "a list of \(count) values", at: location)
        }
        return try elements.map { try optionalString($0, of: command, at: location) }
    }
}
