import CabinetStorage

/// How far a cursor loop (`HSCAN`, `SCAN`) may go before it stops with an
/// error: a server that never hands back cursor 0 (one that repeats a cursor,
/// or counts on without end) would otherwise keep `cabinet copy` or `verify`
/// running forever.
///
/// Redis's cursors run in reversed-bit order, each after the last even while
/// the hash grows or shrinks, so one scan never meets a cursor twice: a
/// repeat is an error at once. And each round either returns `COUNT`
/// elements or passes over ten times as many empty buckets, so a scan takes
/// far fewer rounds than one per 25 elements of the table as it was at the
/// start (or of what the scan has returned so far, for a table that grows
/// meanwhile): more than that is an error too.
struct RedisScanBound {
    /// The command, and where, for the error.
    let command: String
    let location: String
    /// Elements in the table when the scan began.
    let size: Int
    private(set) var rounds = 0
    private(set) var elements = 0
    private var cursors: Set<[UInt8]> = []

    init(command: String, location: String, size: Int) {
        self.command = command
        self.location = location
        self.size = size
    }

    /// The most rounds the scan may take, having returned `elements` so far.
    var limit: Int { 64 + max(size, elements) / 25 }

    /// Counts a reply that handed out `cursor` (not 0) and `returned` elements;
    /// throws if the cursor came before or the rounds are over the limit.
    mutating func advance(to cursor: [UInt8], returned: Int) throws {
        rounds += 1
        elements += returned
        guard cursors.insert(cursor).inserted else {
            throw failure("handed out the cursor \(String(decoding: cursor.prefix(24), as: UTF8.self)) a second time")
        }
        guard rounds <= limit else {
            throw failure("had not handed back cursor 0 after \(rounds) rounds (\(elements) elements, of \(size) at the start)")
        }
    }

    private func failure(_ what: String) -> CabinetError {
        CabinetError.backendFailure(RecordLocation(file: location), operation: command,
                                    underlying: .init(domain: .redis, code: 0,
                                                      message: "the server's \(command) \(what), so it would never end; it is not a sound Redis server, or something on the way changes its replies"))
    }
}
