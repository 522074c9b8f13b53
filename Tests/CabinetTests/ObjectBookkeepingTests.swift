@testable import Cabinet
import Foundation

/// glibc's malloc_usable_size (malloc.h is not in the Glibc module).
@_silgen_name("malloc_usable_size")
private func mallocUsableSize(_ pointer: UnsafeMutableRawPointer) -> Int
import Testing

/// The per-object bookkeeping is kept small (two-byte undo stamps, one byte of
/// content state); these tests hold what that must not cost.
@Suite struct ObjectBookkeepingTests {
    @Test func aStoredObjectWithAStringAndANumberFitsASixtyFourByteHeapBlock() {
        // Swift's 16-byte header, 16 bytes of bookkeeping, a String and a UInt32:
        // 52 bytes, which malloc serves from a 64-byte block (56 usable).
        let song = Song()
        #expect(mallocUsableSize(Unmanaged.passUnretained(song).toOpaque()) <= 56)
    }

    @Test(arguments: BackendKind.allCases)
    func anEditIsRecordedAfterTheUndoStampsWrapAround(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open()
        let song = Song(); song.title = "v1"
        store.insert(song)
        try store.save()

        store.undoManager.beginGroup(named: "first")
        song.title = "v2"                               // recorded with this group's stamp, left unsaved
        let stamp = store.undoManager.stamp
        store.undoManager.endGroup()

        // Empty groups until a new group gets the same stamp again: the song,
        // still changed and unsaved, must not look already recorded in it.
        var groups = 0
        repeat {
            store.undoManager.beginGroup(named: "later")
            if store.undoManager.stamp == stamp { break }
            store.undoManager.endGroup()
            groups += 1
        } while groups < 70_000
        #expect(store.undoManager.stamp == stamp, "the stamps wrapped around within \(groups) groups")
        song.title = "v3"
        store.undoManager.endGroup()

        try store.undoManager.undo()
        #expect(song.title == "v2", "the edit in the wrapped-around group was recorded")
        try store.undoManager.undo()
        #expect(song.title == "v1")
        store.close()
    }

    @Test func contentStateKeepsFaultsAndFailedLoadsApart() throws {
        let song = Song()
        #expect(song.hasContent && !song.contentLoadFailed)
        song.hasContent = false
        #expect(!song.hasContent && !song.contentLoadFailed)
        song.contentLoadFailed = true
        #expect(!song.hasContent && song.contentLoadFailed)
        song.contentLoadFailed = false
        #expect(!song.hasContent && !song.contentLoadFailed, "a failed load that is cleared is a fault again")
        song.hasContent = true
        song.contentLoadFailed = false
        #expect(song.hasContent && !song.contentLoadFailed)
    }
}
