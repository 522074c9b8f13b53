/// One command to send: its words, as bytes (keys and values are binary),
/// kept in one buffer (a save's `HSET` of 512 records is one allocation, not 1,026).
struct RedisCommand {
    /// Every argument's bytes, one after another.
    private(set) var bytes: [UInt8] = []
    /// Where each argument ends in ``bytes``.
    private(set) var ends: [Int] = []

    init(_ words: String...) { for word in words { append(word) } }
    /// Words, then a binary argument (a record, a log entry, a catalog).
    init(_ words: String..., bytes: [UInt8]) {
        for word in words { append(word) }
        append(bytes)
    }
    init(arguments: [[UInt8]]) { for argument in arguments { append(argument) } }

    var argumentCount: Int { ends.count }

    mutating func append(_ word: String) {
        bytes.append(contentsOf: word.utf8)
        ends.append(bytes.count)
    }
    mutating func append(_ argument: [UInt8]) {
        bytes.append(contentsOf: argument)
        ends.append(bytes.count)
    }
    mutating func append(_ argument: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: argument)
        ends.append(bytes.count)
    }

    /// The argument at `index`.
    func argument(_ index: Int) -> ArraySlice<UInt8> { bytes[(index == 0 ? 0 : ends[index - 1])..<ends[index]] }

    /// The command's name, for messages (never its arguments: they may be a password or a record).
    var name: String { ends.isEmpty ? "" : String(decoding: argument(0), as: UTF8.self) }

    /// Calls `body` with hiredis's argv: pointers into ``bytes`` and the arguments' lengths.
    func withArgv<R>(_ body: (Int32, UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> R) -> R {
        bytes.withUnsafeBufferPointer { buffer in
            // An empty buffer may have no address; every empty argument then points at this byte.
            let empty: UInt8 = 0
            return withUnsafePointer(to: empty) { emptyPointer in
                let base = buffer.baseAddress.map { UnsafeRawPointer($0) } ?? UnsafeRawPointer(emptyPointer)
                var pointers: [UnsafePointer<CChar>?] = []
                var lengths: [Int] = []
                pointers.reserveCapacity(ends.count)
                lengths.reserveCapacity(ends.count)
                var start = 0
                for end in ends {
                    pointers.append((base + start).assumingMemoryBound(to: CChar.self))
                    lengths.append(end - start)
                    start = end
                }
                return pointers.withUnsafeMutableBufferPointer { argv in
                    lengths.withUnsafeBufferPointer { lengths in body(Int32(argv.count), argv.baseAddress!, lengths.baseAddress!) }
                }
            }
        }
    }
}
