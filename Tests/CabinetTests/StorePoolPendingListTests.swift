@testable import Cabinet
import Testing

/// A crate of songs whose weight is indexed: a NaN weight fails its save at the
/// index, after the save has handed the crate's list to the group (`PendingLists`).
final class Crate: StoredObject {
    @Stored var weight: Float64 = 0
    @Stored var songs = StoredList<Song>()

    override class var indexes: [StoredIndex] { [.value(\Crate.weight)] }

    override func read(from buffer: inout DataBuffer) throws {
        weight = try buffer.readFloat64()
        songs = try buffer.readList(of: Song.self)
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeFloat64(weight)
        buffer.writeList(songs)
    }
    override func dissolveAllRelationships() { songs = [] }
}

private struct Missing: Error {}

/// The write blocks of one commit group keep the big lists they save in memory
/// (`PendingLists`), and the group's commit writes each list once.
@Suite struct StorePoolPendingListTests {
    /// Each block sees the list as the block before it left it; the commit writes it once, and it is whole.
    @Test(arguments: BackendKind.allCases)
    func aGroupWritesABigListOnceWithEveryBlocksAppend(_ kind: BackendKind) async throws {
        let fixture = try StoreFixture(kind)
        let pool = try fixture.pool(Song.self, Shelf.self)
        let shelfRow = try await pool.write(StorePoolListTests.bigShelf)
        let commits = pool.core.group.commits, written = pool.core.group.pendingLists.written
        let blocks = (0..<6).map { index in
            { @Sendable (store: ObjectStore) throws -> Int in
                guard let shelf = try store.fetch(Shelf.self, rowID: shelfRow) else { throw Missing() }
                let seen = shelf.songs.count
                let song = Song(); song.title = "grouped \(index)"; store.insert(song)
                shelf.songs.append(song)
                return seen
            }
        }
        let seen = try await runGrouped(pool, blocks).map { try $0.get() }
        #expect(Set(seen) == Set(1_000..<1_006), "each block saw the appends of the blocks before it")
        #expect(pool.core.group.commits == commits + 1)
        #expect(pool.core.group.pendingLists.written == written + 1, "the list was written once, by the commit")
        let titles = try await pool.read(StorePoolListTests.titles(shelfRow))
        #expect(titles.count == 1_006)
        #expect(Array(titles.prefix(1_000)) == (0..<1_000).map { "seed \($0)" })
        #expect(Set(titles.suffix(6)) == Set((0..<6).map { "grouped \($0)" }))
        try await pool.close()
        try Self.expectVerified(fixture)
        let reopened = try fixture.pool(Song.self, Shelf.self)
        #expect(try await reopened.read(StorePoolListTests.titles(shelfRow)) == titles)
        try await reopened.close()
    }

    /// A save that fails after it handed its list to the group gives the list
    /// back: the blocks after it see the list without its append, and nothing of it is saved.
    @Test(arguments: BackendKind.allCases)
    func aSaveThatFailsAfterKeepingItsListGivesItBack(_ kind: BackendKind) async throws {
        let fixture = try StoreFixture(kind)
        let pool = try fixture.pool(Song.self, Crate.self)
        let crateRow = try await pool.write(Self.crateOf300)
        let append = { @Sendable (title: String, weight: Float64) in
            { @Sendable (store: ObjectStore) throws -> Int in
                guard let crate = try store.fetch(Crate.self, rowID: crateRow) else { throw Missing() }
                let seen = crate.songs.count
                let song = Song(); song.title = title; store.insert(song)
                crate.songs.append(song)
                crate.weight = weight
                return seen
            }
        }
        let results = await runGrouped(pool, [append("first", 1), append("refused", .nan), append("last", 2)])
        #expect(throws: (any Error).self) { try results[1].get() }
        #expect(try results[0].get() == 300)
        #expect(try results[2].get() == 301, "the block after the failed one saw the list without its append")
        let titles = try await pool.read { store in
            guard let crate = try store.fetch(Crate.self, rowID: crateRow) else { return [String]() }
            var songs = crate.songs
            try songs.loadAll()
            return songs.map(\.title)
        }
        #expect(titles.suffix(2) == ["first", "last"])
        #expect(titles.count == 302)
        try await pool.close()
        try Self.expectVerified(fixture)
    }

    /// A block's list keeps the objects the block added through its saves, as a
    /// store's list does: the same instances, alive while the list is, though the
    /// block holds none of them (the group keeps a copy without them). Checked
    /// outside the block, from what it returns.
    @Test(arguments: BackendKind.allCases)
    func aBlocksListsKeepTheObjectsItAddedThroughItsSaves(_ kind: BackendKind) async throws {
        let fixture = try StoreFixture(kind)
        let pool = try fixture.pool(Song.self, Shelf.self)
        let shelfRow = try await pool.write(StorePoolListTests.bigShelf)
        let seen: [String] = try await pool.write { store in
            guard let shelf = try store.fetch(Shelf.self, rowID: shelfRow) else { throw Missing() }
            weak var first: Song?
            do {
                let song = Song(); song.title = "first"; store.insert(song)
                shelf.songs.append(song)
                first = song
            }
            try store.save()
            var seen = ["alive \(first != nil)", "same \(first.map { shelf.songs[1_000] === $0 } ?? false)"]
            let second = Song(); second.title = "second"; store.insert(second)
            shelf.songs.append(second)
            let copy = shelf.songs
            try store.save()
            seen.append("copy \(copy[1_001] === second && copy.firstIndex(of: second) == 1_001)")

            let made = (0..<300).map { index in let song = Song(); song.title = "made \(index)"; store.insert(song); return song }
            let newShelf = Shelf(); newShelf.name = "made"
            newShelf.songs = StoredList(made)
            store.insert(newShelf)
            try store.save()
            seen.append("made \(zip(newShelf.songs, made).allSatisfy { $0 === $1 })")
            return seen
        }
        #expect(seen == ["alive true", "same true", "copy true", "made true"])
        let titles = try await pool.read(StorePoolListTests.titles(shelfRow))
        #expect(titles.count == 1_002 && titles.suffix(2) == ["first", "second"])
        try await pool.close()
        try Self.expectVerified(fixture)
    }

    /// A save that fails after it handed its list to the group leaves the block's
    /// list as it was: an object appended, then deleted before the retry, is still
    /// an object the list names that was never saved, and the retry refuses it
    /// (not a list element naming a row nothing was written to).
    @Test(arguments: BackendKind.allCases)
    func aRetryAfterAFailedSaveRefusesAListNamingAnObjectDeletedMeanwhile(_ kind: BackendKind) async throws {
        let fixture = try StoreFixture(kind)
        let pool = try fixture.pool(Song.self, Crate.self)
        let crateRow = try await pool.write(Self.crateOf300)
        let outcome: String = try await pool.write { store in
            guard let crate = try store.fetch(Crate.self, rowID: crateRow) else { throw Missing() }
            let ghost = Song(); ghost.title = "ghost"; store.insert(ghost)
            crate.songs.append(ghost)
            crate.weight = .nan                  // fails the save at the index, after its list was handed over
            guard (try? store.save()) == nil else { return "the first save did not fail" }
            store.delete(ghost)
            crate.weight = 1
            do {
                try store.save()
                return "saved"
            } catch let error as CabinetError where error.code == .referenceToUninsertedObject {
                crate.songs.removeLast()
                return "refused"
            }
        }
        #expect(outcome == "refused")
        let count = try await pool.read { store in try store.fetch(Crate.self, rowID: crateRow)?.songs.count }
        #expect(count == 300)
        try await pool.close()
        try Self.expectVerified(fixture)
    }

    /// An owner deleted by a later block of the group takes the list an earlier
    /// block kept with it: the commit writes no root or node for it.
    @Test(arguments: BackendKind.allCases)
    func anOwnerDeletedLaterInTheGroupLeavesNoListBehind(_ kind: BackendKind) async throws {
        let fixture = try StoreFixture(kind)
        let (pool, shelfRow, _) = try await Self.appendThen(fixture, "appended") { store, shelf in
            store.delete(shelf)
            return 0
        }
        #expect(try await pool.read { store in try store.fetch(Shelf.self, rowID: shelfRow) == nil })
        try await pool.close()
        try Self.expectVerified(fixture)
    }

    /// A list an earlier block kept that a later block shortens back into its
    /// owner's record: the commit deletes the committed tree, and nothing is orphaned.
    @Test(arguments: BackendKind.allCases)
    func aKeptListThatGoesBackIntoItsRecordLeavesNoTreeBehind(_ kind: BackendKind) async throws {
        let fixture = try StoreFixture(kind)
        let (pool, shelfRow, _) = try await Self.appendThen(fixture, "appended") { _, shelf in
            var songs = shelf.songs
            try songs.loadAll()
            shelf.songs = StoredList(Array(songs.prefix(10)))
            return 0
        }
        #expect(try await pool.read(StorePoolListTests.titles(shelfRow)) == (0..<10).map { "seed \($0)" })
        try await pool.close()
        try Self.expectVerified(fixture)
    }

    /// A list copied to another owner from the list an earlier block kept (its
    /// changed nodes in memory, the rest on disk) is written whole under the new owner.
    @Test(arguments: BackendKind.allCases)
    func aKeptListCopiedToAnotherOwnerIsWrittenWholeForIt(_ kind: BackendKind) async throws {
        let fixture = try StoreFixture(kind)
        let (pool, shelfRow, copyRow) = try await Self.appendThen(fixture, "on the first") { store, shelf in
            let copy = Shelf(); copy.name = "copy"
            copy.songs = shelf.songs
            let song = Song(); song.title = "on the copy"; store.insert(song)
            copy.songs.append(song)
            store.insert(copy)
            return copy.rowID
        }
        let seeds = (0..<1_000).map { "seed \($0)" }
        #expect(try await pool.read(StorePoolListTests.titles(shelfRow)) == seeds + ["on the first"])
        #expect(try await pool.read(StorePoolListTests.titles(copyRow)) == seeds + ["on the first", "on the copy"])
        try await pool.close()
        try Self.expectVerified(fixture)
    }

    /// A block in which the group was committed (here by a compaction) writes its
    /// lists itself from then on: a list it read before that commit and saves
    /// after it fails that save (stale), inside the block, and the group's other block is saved.
    @Test func aStaleListAfterACommitInsideItsBlockFailsThatSaveNotTheGroup() async throws {
        let fixture = try StoreFixture(.tokyoCabinet)
        let pool = try fixture.pool(Song.self, Shelf.self)
        let shelfRow = try await pool.write(StorePoolListTests.bigShelf)
        let results = await runGrouped(pool, [
            { @Sendable store in
                guard let shelf = try store.fetch(Shelf.self, rowID: shelfRow) else { throw Missing() }
                let before = shelf.songs
                let song = Song(); song.title = "saved"; store.insert(song)
                shelf.songs.append(song)
                try store.save()
                try store.compact()   // commits the group so far: the list's new right-hand path replaces the old
                let after = shelf.songs
                shelf.songs = before
                do {
                    try store.save()
                    return "saved a stale list"
                } catch let error as CabinetError where error.code == .staleList {
                    shelf.songs = after   // as saved: the block's own save at its end writes nothing wrong
                    return "refused"
                }
            },
            { @Sendable store in
                _ = try StorePoolListTests.append("other block", to: shelfRow)(store)
                return "appended"
            },
        ])
        #expect(try results[0].get() == "refused")
        #expect(try results[1].get() == "appended")
        let titles = try await pool.read(StorePoolListTests.titles(shelfRow))
        #expect(titles.suffix(2) == ["saved", "other block"])
        try await pool.close()
        try Self.expectVerified(fixture)
    }

    /// What the commit will write for the lists the blocks keep counts towards the
    /// group's size: blocks that each copy a list of 300,000 make more than one commit.
    @Test func keptListsCountTowardsTheGroupsSize() async throws {
        let fixture = try StoreFixture(.memory)
        let pool = try fixture.pool(Song.self, Shelf.self)
        let shelfRow: UInt32 = try await pool.write { store in
            let songs = (0..<20).map { i in let song = Song(); song.title = "song \(i)"; store.insert(song); return song }
            let shelf = Shelf(); shelf.name = "huge"
            shelf.songs = StoredList((0..<300_000).map { songs[$0 % songs.count] })
            store.insert(shelf)
            return shelf.rowID
        }
        let commits = pool.core.group.commits
        let copies = 8
        let blocks = (0..<copies).map { index in
            { @Sendable (store: ObjectStore) throws -> UInt32 in
                guard let shelf = try store.fetch(Shelf.self, rowID: shelfRow) else { throw Missing() }
                let copy = Shelf(); copy.name = "copy \(index)"
                copy.songs = shelf.songs   // loaded whole and kept as new nodes: about 1.2 MB each
                store.insert(copy)
                return copy.rowID
            }
        }
        let rows = try await runGrouped(pool, blocks).map { try $0.get() }
        #expect(pool.core.group.commits >= commits + 2, "8 copies of 1.2 MB exceed one group's \(WriteGroup.maxBytes) bytes")
        for row in rows {
            #expect(try await pool.read { store in try store.fetch(Shelf.self, rowID: row)?.songs.count } == 300_000)
        }
        try await pool.close()
        try Self.expectVerified(fixture)
    }

    /// A pool over a shelf of 1,000 songs, and one group of two blocks: the first
    /// appends `title` to the shelf, the second runs `then` on the shelf as the
    /// first left it. The pool, the shelf's row, and what `then` returned.
    static func appendThen(_ fixture: StoreFixture, _ title: String,
                           _ then: @escaping @Sendable (ObjectStore, Shelf) throws -> UInt32) async throws -> (StorePool, UInt32, UInt32) {
        let pool = try fixture.pool(Song.self, Shelf.self)
        let shelfRow = try await pool.write(StorePoolListTests.bigShelf)
        let results = await runGrouped(pool, [
            { @Sendable store in try StorePoolListTests.append(title, to: shelfRow)(store) },
            { @Sendable store in
                guard let shelf = try store.fetch(Shelf.self, rowID: shelfRow) else { throw Missing() }
                return try then(store, shelf)
            },
        ])
        _ = try results[0].get()
        return (pool, shelfRow, try results[1].get())
    }

    /// A crate of 300 new songs ("seed 0" …), its list out of line: its row.
    @Sendable static func crateOf300(_ store: ObjectStore) -> UInt32 {
        let crate = Crate()
        crate.songs = StoredList((0..<300).map { i in let song = Song(); song.title = "seed \(i)"; store.insert(song); return song })
        store.insert(crate)
        return crate.rowID
    }

    /// `cabinet verify`'s checks of the closed store: every list whole, no root or node orphaned.
    static func expectVerified(_ fixture: StoreFixture) throws {
        let backend = try fixture.backend()
        #expect(try StoreVerifier.verify(backend).isEmpty)
        if fixture.kind != .memory { backend.close() }
    }
}
