@testable import Cabinet
import Testing

/// The table a list save keeps its shared subtrees in (`KeptNodes`): what the
/// save's delete walk and its fresh IDs rely on.
@Suite struct KeptNodesTests {
    @Test func answersForWhatWasInsertedOnly() {
        let inserted = (0..<300).map { _ in ListNodeID.random() }
        var kept = KeptNodes()
        for id in inserted { kept.insert(id) }
        kept.seal()
        for id in inserted { #expect(kept.contains(id)) }
        for _ in 0..<300 { #expect(!kept.contains(ListNodeID.random())) }
    }

    @Test func repeatsCountOnceAndFoundIsTracked() {
        let a = ListNodeID.random(), b = ListNodeID.random(), c = ListNodeID.random()
        var kept = KeptNodes()
        for id in [a, b, a, c, b] { kept.insert(id) }
        kept.seal()
        #expect(kept.firstNotFound != nil)
        let marked1 = kept.markFound(b)
        #expect(marked1)
        let marked2 = kept.markFound(a)
        #expect(marked2)
        #expect(kept.firstNotFound == c)
        let marked3 = kept.markFound(ListNodeID.random())
        #expect(!marked3)
        let marked4 = kept.markFound(c)
        #expect(marked4)
        #expect(kept.firstNotFound == nil)
    }

    /// IDs from a crafted file that share every bit the table is addressed by
    /// still come back right (the probes get longer, nothing else).
    @Test func idsAlikeInTheirAddressingBitsStayApart() {
        let alike = (0..<200).map { ListNodeID(high: UInt64($0) << 40, low: UInt64($0) << 40) }
        var kept = KeptNodes()
        for id in alike.dropLast() { kept.insert(id) }
        kept.seal()
        for id in alike.dropLast() {
            let marked = kept.markFound(id)
            #expect(marked)
        }
        #expect(!kept.contains(alike.last!))
        #expect(kept.firstNotFound == nil)
    }

    @Test func anUnsealedOrEmptyTableHoldsNothing() {
        var unsealed = KeptNodes()
        let marked5 = unsealed.markFound(ListNodeID.random())
        #expect(!marked5)
        #expect(unsealed.firstNotFound == nil)
        var empty = KeptNodes()
        empty.seal()
        #expect(!empty.contains(ListNodeID.random()))
        #expect(empty.firstNotFound == nil)
    }
}
