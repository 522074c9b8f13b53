import Cabinet
import CabinetRedis
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Other processes' saves on a Redis store: announced (pub/sub) to every open
/// of it, taken in before a read (live objects they changed read their content
/// again), settled by `refresh(discardingConflicts:)`, and reported on a
/// pool's `changes`. Each "process" is a backend of its own (its own
/// connections, subscriber and view of the store), as in another process.
@Suite struct RedisOtherProcessesTests {
    static func open(_ name: String) throws -> (ObjectStore, RedisBackend) {
        let backend = try TestRedis.backend(store: name)
        let store = try ObjectStore(backend: backend)
        try store.register(Song.self)
        return (store, backend)
    }

    /// Waits (up to 5 s) until `backend` heard another process's save.
    static func waitForAnnouncement(_ backend: RedisBackend) -> Bool {
        for _ in 0..<500 {
            if backend.othersHaveSaved { return true }
            usleep(10_000)
        }
        return false
    }

    @Test func aLiveObjectShowsWhatAnotherProcessSaved() throws {
        let name = TestRedis.newStoreName()
        let (a, _) = try Self.open(name)
        let x = Song(); x.title = "x"; x.seconds = 1
        a.insert(x)
        try a.save()

        let (b, bBackend) = try Self.open(name)
        let bx = try #require(try b.fetch(Song.self, rowID: x.rowID))
        #expect(bx.title == "x")
        x.title = "x by a"; x.seconds = 2
        try a.save()
        #expect(Self.waitForAnnouncement(bBackend), "b heard a's save")
        // The next read takes it in: the same instance, its new content.
        let again = try #require(try b.fetch(Song.self, rowID: x.rowID))
        #expect(again === bx)
        #expect(bx.title == "x by a" && bx.seconds == 2)
        #expect(!bBackend.othersHaveSaved, "taken in")
        // A save of b's own is not another process's.
        bx.title = "x by b"
        try b.save()
        usleep(200_000)
        #expect(!bBackend.othersHaveSaved)
        a.close(); b.close()
    }

    @Test func refreshDiscardingConflictsLetsAConflictingSaveBeTriedAgain() throws {
        let name = TestRedis.newStoreName()
        let (a, _) = try Self.open(name)
        let x = Song(); x.title = "x"
        let y = Song(); y.title = "y"
        a.insert(x); a.insert(y)
        try a.save()
        let (b, _) = try Self.open(name)
        let bx = try #require(try b.fetch(Song.self, rowID: x.rowID))
        let by = try #require(try b.fetch(Song.self, rowID: y.rowID))
        bx.title = "x by b"                     // b's change, before a's save
        by.title = "y by b"
        x.title = "x by a"
        try a.save()

        let conflict = expectCabinetError({ try b.save() }) { $0.code == .saveConflict }
        #expect(conflict?.reason?.contains("row \(x.rowID)") == true, "\(String(describing: conflict))")
        #expect(b.hasUnsavedChanges)
        // Still a conflict, however often it is tried, until it is settled.
        #expect(throws: CabinetError.self) { try b.save() }

        try b.refresh(discardingConflicts: true)
        #expect(bx.title == "x by a", "their save won")
        #expect(by.title == "y by b", "a change to a row they did not touch is kept")
        bx.title = bx.title + ", then b"
        try b.save()

        let (reader, _) = try Self.open(name)
        #expect(try reader.fetchAll(Song.self).map(\.title).sorted() == ["x by a, then b", "y by b"])
        reader.close(); a.close(); b.close()
    }

    @Test func withoutDiscardingARefreshKeepsTheConflict() throws {
        let name = TestRedis.newStoreName()
        let (a, _) = try Self.open(name)
        let x = Song(); x.title = "x"
        a.insert(x)
        try a.save()
        let (b, _) = try Self.open(name)
        let bx = try #require(try b.fetch(Song.self, rowID: x.rowID))
        bx.title = "x by b"
        x.title = "x by a"
        try a.save()
        try b.refresh()
        #expect(bx.title == "x by b", "unsaved changes are never dropped unasked")
        let conflict = expectCabinetError({ try b.save() }) { $0.code == .saveConflict }
        #expect(conflict != nil)
        a.close(); b.close()
    }

    @Test func aPoolReportsAnotherProcessesSavesAndWritesAfterThem() async throws {
        let name = TestRedis.newStoreName()
        let (a, _) = try Self.open(name)
        let x = Song(); x.title = "x"
        a.insert(x)
        try a.save()

        let pool = try StorePool(backend: TestRedis.backend(store: name), classes: [Song.self])
        let changes = pool.changes
        let row = x.rowID
        x.title = "x by a"
        try a.save()
        var iterator = changes.makeAsyncIterator()
        let change = try #require(await iterator.next())
        #expect(change.isFromAnotherProcess)
        #expect(change.changes(of: Song.self)?.updated == [row], "\(change)")
        #expect(change.description.contains("another process"))

        // The pool's writer writes the row the other process changed: no conflict, its content is a's.
        let seen: String = try await pool.write { store in
            let song = try #require(try store.fetch(Song.self, rowID: row))
            let before = song.title
            song.title = "x by the pool"
            return before
        }
        #expect(seen == "x by a")
        let own = try #require(await iterator.next())
        #expect(!own.isFromAnotherProcess && own.changes(of: Song.self)?.updated == [row])
        try await pool.close()
        try a.refresh()
        #expect(x.title == "x by the pool")
        a.close()
    }
}

extension RedisOtherProcessesTests {
    /// Another process saves while a scan is under way here, and a read inside
    /// the scan's body would take it in: rows the scan fetched before that save
    /// must stay what they are, stale, so that a later save of one conflicts
    /// instead of overwriting theirs (a take-in runs before a scan, never in it).
    @Test func aSaveHeardDuringAScanIsNotTakenInInsideIt() throws {
        let name = TestRedis.newStoreName()
        let (a, aBackend) = try Self.open(name)
        let (b, _) = try Self.open(name)
        for index in 0..<20 {
            let song = Song(); song.title = "song \(index)"
            b.insert(song)
        }
        try b.save()
        let last = try #require(try b.fetchAll(Song.self).max { $0.rowID < $1.rowID })
        var seen: [UInt32: Song] = [:]
        try a.enumerate(Song.self) { song, _ in
            seen[song.rowID] = song
            if seen.count == 1 {
                last.title = "changed by b during a's scan"
                try? b.save()
                _ = Self.waitForAnnouncement(aBackend)
                _ = try? a.fetch(Song.self, rowID: song.rowID)   // a read inside the scan
            }
        }
        let mine = try #require(seen[last.rowID])
        mine.title = "changed by a"
        let conflict = expectCabinetError({ try a.save() }) { $0.code == .saveConflict }
        #expect(conflict != nil, "a's copy of the row was read before b's save")
        let (reader, _) = try Self.open(name)
        #expect(try reader.fetch(Song.self, rowID: last.rowID)?.title == "changed by b during a's scan")
        reader.close(); a.close(); b.close()
    }

    /// Undo cannot put back what another process's save replaced: taking a
    /// save in that changed a live object clears the undo history.
    @Test func takingInAnotherProcessesSaveClearsTheUndoHistory() throws {
        let name = TestRedis.newStoreName()
        let (a, _) = try Self.open(name)
        let x = Song(); x.title = "x"
        a.insert(x)
        try a.save()
        x.title = "x by a"
        try a.save()
        #expect(a.undoManager.canUndo)
        let (b, _) = try Self.open(name)
        let bx = try #require(try b.fetch(Song.self, rowID: x.rowID))
        bx.title = "x by b"
        try b.save()
        try a.refresh()
        #expect(x.title == "x by b")
        #expect(!a.undoManager.canUndo, "an undo would overwrite b's save unseen")
        a.close(); b.close()
    }
}

extension RedisOtherProcessesTests {
    /// A process that saved more times than the store's log keeps, while no
    /// other process saved, then hears another's save: it takes in that one
    /// save alone (its own saves count as taken in), so an insert it has
    /// pending meanwhile is no conflict. (Before, its own saves, unread, made
    /// the take-in count as "every table changed", and the insert a conflict.)
    @Test func ownSavesBeyondTheLogMakeNoConflictWhenAnotherProcessSaves() throws {
        let name = TestRedis.newStoreName()
        let (a, aBackend) = try Self.open(name)
        let song = Song(); song.title = "0"
        a.insert(song)
        for count in 1...1_001 {
            song.title = "\(count)"
            try a.save()
        }
        let (b, _) = try Self.open(name)   // opened after them: it missed none
        let pending = Song(); pending.title = "pending"
        a.insert(pending)
        let theirs = Song(); theirs.title = "theirs"
        b.insert(theirs)
        try b.save()
        #expect(Self.waitForAnnouncement(aBackend))
        try a.save()
        let reader = try Self.open(name).0
        #expect(try reader.fetchAll(Song.self).map(\.title).sorted() == ["1001", "pending", "theirs"])
        reader.close(); a.close(); b.close()
    }
}
