@testable import Cabinet
import CabinetStorage
import Testing

/// The records of out-of-line list nodes, encoded and decoded directly: leaves
/// are written and read in one pass over their row IDs, so these check every
/// position round-trips and that a bad row ID anywhere is refused, by name.
@Suite struct ListRecordsTests {
    private let storage = ListNodeStorage(scope: ListScope(classID: 3, row: 2, slot: 0), id: ListNodeID(high: 7, low: 9))
    private let location = RecordLocation(file: "StoredLists", className: "Shelf", rowID: 2)

    private func decode(_ bytes: [UInt8], _ format: RecordFormat) throws -> ListNode {
        try bytes.withUnsafeBytes { try ListRecords.decodeNode($0, storage: storage, format: format, location: location) }
    }

    @Test(arguments: [RecordFormat.plain, .checksummed], [1, 2, 255, ListNode.leafCapacity])
    func aLeafRoundTripsEveryRowID(_ format: RecordFormat, _ count: Int) throws {
        // Values with every byte different, so a swapped or shifted byte shows.
        let rowIDs = (0..<count).map { UInt32(0x0102_0304) &+ UInt32($0) &* 0x0101_0101 }
        let bytes = ListRecords.encode(ListNode(leaf: rowIDs), rowIDs: rowIDs, childIDs: [], format: format)
        #expect(bytes.count == 5 + 4 * count + format.trailerSize)
        #expect(Array(bytes[5..<9]) == [0x04, 0x03, 0x02, 0x01], "little-endian, as FORMAT.md says")
        let node = try decode(bytes, format)
        #expect(node.isLeaf)
        #expect(node.rowIDs == rowIDs)
        #expect(node.storage == storage)
    }

    @Test(arguments: [0, 1, 300, ListNode.leafCapacity - 1])
    func aLeafNamingARowThatHoldsNoObjectIsRefused(_ position: Int) throws {
        var rowIDs = (0..<ListNode.leafCapacity).map { UInt32($0 + 10) }
        rowIDs[position] = ClassMetadata.firstObjectRowID - 1
        let bytes = ListRecords.encode(ListNode(leaf: rowIDs), rowIDs: rowIDs, childIDs: [], format: .checksummed)
        let error = try #require(expectCabinetError({ _ = try decode(bytes, .checksummed) }) { $0.code == .malformedRecord })
        let reason = error.reason ?? ""
        #expect(reason.contains("row \(ClassMetadata.firstObjectRowID - 1), which holds no object"), "\(reason)")
        #expect(reason.contains("at offset \(5 + 4 * position)"), "names where the bad row ID is: \(reason)")
    }

    @Test func aLeafCountingMoreRowIDsThanItHoldsIsRefused() throws {
        let rowIDs: [UInt32] = [10, 11, 12]
        var bytes = ListRecords.encode(ListNode(leaf: rowIDs), rowIDs: rowIDs, childIDs: [], format: .plain)
        bytes[1] = 4   // the count says 4, the record holds 3
        let error = try #require(expectCabinetError({ _ = try decode(bytes, .plain) }) { $0.code == .malformedRecord })
        #expect((error.reason ?? "").contains("a leaf of 4 row IDs in 12 bytes"))
    }
}
