@testable import Cabinet
import Testing

/// The table of live objects by row: two levels, leaves allocated with their
/// first live object and freed with their last, rows beyond the class's size in
/// a dictionary.
@Suite struct UniquingTableTests {
    @Test func randomInsertsAndRemovesAgreeWithADictionary() {
        let table = UniquingTable()
        var model: [UInt32: Song] = [:]
        var generator = SeededRandom(7)
        var denseLimit: UInt32 = 500
        for step in 0..<20_000 {
            // Rows near the limit and far beyond it (a damaged reference's row).
            let row = step % 97 == 0 ? UInt32.random(in: 100_000...200_000, using: &generator)
                                     : UInt32.random(in: 0...2_000, using: &generator)
            if step % 1_000 == 999 { denseLimit += 400 }   // the class grows: later rows join the table
            if let object = model[row], Bool.random(using: &generator) {
                table.remove(object, at: row)
                model[row] = nil
            } else if model[row] == nil {
                let object = Song()
                table.insert(object, at: row, denseLimit: denseLimit)
                model[row] = object
            } else {
                table.remove(Song(), at: row)   // another object's remove leaves the entry
            }
        }
        #expect(table.count == model.count)
        for row in UInt32(0)...2_100 { #expect(table.object(at: row) === model[row], "row \(row)") }
        for (row, object) in model { #expect(table.object(at: row) === object) }
        var seen: [ObjectIdentifier] = []
        table.forEachObject { seen.append(ObjectIdentifier($0)) }
        #expect(Set(seen) == Set(model.values.map(ObjectIdentifier.init)) && seen.count == model.count)
    }

    @Test func aLeafIsFreedWithItsLastObjectAndOnlyTouchedGroupsHaveOne() {
        let table = UniquingTable()
        table.reserve(upTo: 1_000_000)
        #expect(table.leavesInUse == 0, "reserving rows allocates no leaf")
        let far = Song(), near = Song(), sameLeaf = Song()
        table.insert(far, at: 999_999, denseLimit: 1_000_000)
        table.insert(near, at: 3, denseLimit: 1_000_000)
        table.insert(sameLeaf, at: 63, denseLimit: 1_000_000)
        #expect(table.leavesInUse == 2 && table.count == 3)
        table.remove(near, at: 3)
        #expect(table.leavesInUse == 2 && table.object(at: 63) === sameLeaf && table.object(at: 3) == nil)
        table.remove(sameLeaf, at: 63)
        #expect(table.leavesInUse == 1 && table.object(at: 63) == nil)
        table.insert(near, at: 64, denseLimit: 1_000_000)   // the next group's leaf
        #expect(table.leavesInUse == 2 && table.object(at: 64) === near)
        table.removeAll()
        #expect(table.leavesInUse == 0 && table.count == 0 && table.object(at: 999_999) == nil)
    }

    @Test func rowsInTheDictionaryMoveIntoTheTableWhenItGrowsOverThem() {
        let table = UniquingTable()
        let early = Song(), beyond = Song()
        table.insert(early, at: 2, denseLimit: 10)
        table.insert(beyond, at: 5_000, denseLimit: 10)      // beyond the class's size: the dictionary
        #expect(table.leavesInUse == 1 && table.object(at: 5_000) === beyond)
        table.reserve(upTo: 6_000)
        #expect(table.leavesInUse == 2 && table.count == 2, "the row moved into a leaf of its own")
        #expect(table.object(at: 5_000) === beyond)
        table.remove(beyond, at: 5_000)
        #expect(table.leavesInUse == 1 && table.count == 1 && table.object(at: 5_000) == nil)
    }

    @Test func aBodyThatFreesOtherObjectsAndTheirLeavesEndsTheWalkSafely() {
        let table = UniquingTable()
        var kept: [Song] = []
        for row in UInt32(0)..<640 {
            let object = Song(); table.insert(object, at: row, denseLimit: 1_000); kept.append(object)
        }
        var visited = 0
        table.forEachObject { object in
            visited += 1
            guard object === kept[0] else { return }
            // The first object's visit removes everything else: every leaf but its own is freed.
            for row in 1..<640 { table.remove(kept[row], at: UInt32(row)) }
        }
        #expect(visited == 1 && table.count == 1 && table.leavesInUse == 1)
    }

    @Test func aBodyThatRemovesADictionaryRowIsNotHandedItAfterwards() {
        // A pool's context keeps every row in the dictionary (limit 0).
        let table = UniquingTable()
        var kept: [UInt32: Song] = [:]
        for row in UInt32(2)...41 {
            let object = Song(); table.insert(object, at: row, denseLimit: 0); kept[row] = object
        }
        var visited: [UInt32] = []
        table.forEachObject { object in
            let row = kept.first { $0.value === object }!.key
            visited.append(row)
            guard visited.count == 1 else { return }
            // The first visit removes (and frees) every other object, as a freed object's deinit does.
            for (other, song) in kept where other != row { table.remove(song, at: other) }
            kept = kept.filter { $0.key == row }
        }
        #expect(visited.count == 1 && table.count == 1, "visited \(visited)")
    }

    @Test func aBodyThatGrowsTheTableOverDictionaryRowsStillHandsThemOver() {
        let table = UniquingTable()
        let first = Song(), moved = Song()
        table.insert(first, at: 3, denseLimit: 100)
        table.insert(moved, at: 5_000, denseLimit: 100)   // beyond the limit: the dictionary
        var seen: [ObjectIdentifier] = []
        table.forEachObject { object in
            seen.append(ObjectIdentifier(object))
            if object === first { table.reserve(upTo: 6_000) }   // grows over row 5,000 mid-walk
        }
        #expect(seen == [ObjectIdentifier(first), ObjectIdentifier(moved)])
    }
}
