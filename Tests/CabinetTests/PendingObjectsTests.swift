@testable import Cabinet
import Testing

/// `PendingObjects`, a leaf's objects kept by position, against the dense array
/// of optionals it replaced: every change leaves the same object at every position.
@Suite struct PendingObjectsTests {
    /// Each position of `pending` over `count` elements, as a dense array.
    private func dense(_ pending: PendingObjects, count: Int) -> [ObjectIdentifier?] {
        (0..<count).map { pending[$0].map(ObjectIdentifier.init) }
    }

    private func identities(_ model: [StoredObject?]) -> [ObjectIdentifier?] {
        model.map { $0.map(ObjectIdentifier.init) }
    }

    @Test func randomChangesMatchADenseArray() {
        var generator = SeededRandom(14)
        var pending = PendingObjects()
        var model: [StoredObject?] = []
        for step in 0..<4_000 {
            let object: StoredObject? = generator.next() % 3 == 0 ? nil : Song()
            switch generator.next() % 5 {
            case 0, 1:
                let offset = Int(generator.next() % UInt64(model.count + 1))
                pending.insert(object, at: offset)
                model.insert(object, at: offset)
            case 2 where !model.isEmpty:
                let offset = Int(generator.next() % UInt64(model.count))
                #expect(pending.remove(at: offset).map(ObjectIdentifier.init) == model.remove(at: offset).map(ObjectIdentifier.init))
            case 3 where !model.isEmpty:
                let offset = Int(generator.next() % UInt64(model.count))
                pending.set(object, at: offset)
                model[offset] = object
            case 4 where model.count > 1:
                let cut = Int(generator.next() % UInt64(model.count))
                let right = pending.split(at: cut)
                #expect(dense(right, count: model.count - cut) == identities(Array(model[cut...])), "step \(step)")
                model.removeSubrange(cut...)
            default:
                break
            }
            #expect(dense(pending, count: model.count) == identities(model), "step \(step)")
            #expect(pending.isEmpty == model.allSatisfy { $0 == nil })
        }
    }

    @Test func aListMadeFromObjectsHoldsOneAtEveryPosition() {
        let songs = (0..<5).map { _ in Song() }
        var pending = PendingObjects(songs)
        #expect((0..<5).allSatisfy { pending[$0] === songs[$0] })
        #expect(pending[5] == nil)
        // An append, then a removal at the front: each position moves as the elements do.
        let added = Song()
        pending.insert(added, at: 5)
        #expect(pending.remove(at: 0) === songs[0])
        #expect(pending[0] === songs[1] && pending[4] === added && pending[5] == nil)
        var visited: [Int] = []
        pending.forEach { offset, _ in visited.append(offset) }
        #expect(visited == [0, 1, 2, 3, 4])
    }

    @Test func aStoredPositionAddsNothing() {
        var pending = PendingObjects()
        pending.insert(nil, at: 0)
        pending.set(nil, at: 0)
        #expect(pending.isEmpty && pending.remove(at: 0) == nil)
    }
}
