@testable import CabinetRedis
import Testing

/// The store's log entries (docs/FORMAT.md, "Redis"): an index lists its keys
/// for observations, yet conflicts as a whole table.
@Suite struct RedisCommitLogTests {
    private static func entry(_ table: String, _ keys: [[UInt8]], index: Bool) -> RedisCommitLog.Entry {
        var entry = RedisCommitLog.Entry(token: Array(repeating: 7, count: 16))
        entry.touch(table, keys: keys, count: keys.count)
        if index { entry.conflictAsWhole(table) }
        return entry
    }

    @Test func anIndexsKeysAreListedAndDecodedWithTheirScope() throws {
        let written = Self.entry("Track.indexes", [[1, 2, 3], [4, 5]], index: true)
        let read = try #require(RedisCommitLog.Entry(decoding: written.encoded))
        #expect(read.tables["Track.indexes"] == .some(Set([[1, 2, 3], [4, 5]])))
        #expect(read.conflictsAsWhole == ["Track.indexes"])
        #expect(written.encoded[16 + 4 + "Track.indexes".utf8.count] == RedisCommitLog.Scope.keysOfWholeTable.rawValue)
    }

    @Test func savesOfOneIndexConflictWhateverKeysTheyChanged() throws {
        let mine = Self.entry("Track.indexes", [[1]], index: true)
        let theirs = try #require(RedisCommitLog.Entry(decoding: Self.entry("Track.indexes", [[2]], index: true).encoded))
        #expect(mine.overlap(with: theirs) != nil)
        #expect(theirs.overlap(with: Self.entry("Track.indexes", [[2]], index: false)) != nil, "either side's scope makes it whole")
        // Rows of a class conflict key by key, as before.
        #expect(Self.entry("Track", [[1, 0, 0, 0]], index: false).overlap(with: Self.entry("Track", [[2, 0, 0, 0]], index: false)) == nil)
    }

    @Test func anUnknownScopeDoesNotDecode() {
        var bytes = Self.entry("T", [[1]], index: false).encoded
        bytes[16 + 4 + 1] = 9
        #expect(RedisCommitLog.Entry(decoding: bytes) == nil, "taken as a change of everything: a conflict")
    }
}
