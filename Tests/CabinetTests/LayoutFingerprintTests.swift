@testable import Cabinet
import CabinetStorage
import Foundation
import Testing

/// A hand-written class that declares layout fingerprints, as `@StoredModel` writes them.
class Bulb: StoredObject {
    @Stored var name = ""
    @Stored var watts: UInt16 = 0
    override class var layoutFingerprints: [UInt8: UInt32] { [1: 0x0000_0B01] }
    override func read(from buffer: inout DataBuffer) throws {
        name = try buffer.readString()
        watts = try buffer.readUInt16()
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(name)
        buffer.writeUInt16(watts)
    }
}

/// Bulb whose version-1 layout changed: another fingerprint for version 1.
final class BulbChanged: StoredObject {
    override class var storedName: String { "Bulb" }
    @Stored var watts: UInt16 = 0
    override class var layoutFingerprints: [UInt8: UInt32] { [1: 0x0000_0B02] }
    override func read(from buffer: inout DataBuffer) throws { watts = try buffer.readUInt16() }
    override func write(to buffer: inout DataBuffer) { buffer.writeUInt16(watts) }
}

/// Bulb's version 2, whose version-1 layout is Bulb's (and whose records are the same bytes).
final class BulbVersion2: Bulb {
    override class var storedName: String { "Bulb" }
    override class var version: UInt8 { 2 }
    override class var layoutFingerprints: [UInt8: UInt32] { [1: 0x0000_0B01, 2: 0x0000_0B22] }
}

/// The layout fingerprints in a class's metadata row (docs/FORMAT.md, "Row 1"):
/// where they go, what older readers see, damage, and the check at registration.
@Suite struct LayoutFingerprintTests {
    private let location = RecordLocation(file: "Bulb", className: "Bulb", rowID: 1)

    private func decode(_ bytes: [UInt8]) throws -> ClassMetadata {
        try bytes.withUnsafeBytes { try ClassMetadata(bytes: $0, location: location) }
    }

    @Test func fingerprintsFollowTheFourteenBytesOlderReadersReadAndTheChecksumCoversThem() throws {
        for checksummed in [false, true] {
            var metadata = ClassMetadata(lastRowID: 9, version: 2, classID: 4, salt: (7, 8))
            metadata.checksummed = checksummed
            let before = metadata.bytes
            metadata.layouts = [2: 0xDDCC_BBAA, 1: 0x4433_2211]
            let bytes = metadata.bytes
            #expect(bytes.count == 14 + 1 + 2 * 5 + (checksummed ? 4 : 0))
            #expect(Array(bytes.prefix(14)) == Array(before.prefix(14)))   // what BNRPersistence reads, and no more
            #expect(Array(bytes[14..<25]) == [2, 1, 0x11, 0x22, 0x33, 0x44, 2, 0xAA, 0xBB, 0xCC, 0xDD])
            if checksummed {
                let crc = Array(bytes.dropLast(4)).withUnsafeBytes { CRC32.checksum($0) }
                #expect(Array(bytes.suffix(4)) == withUnsafeBytes(of: crc.littleEndian, Array.init))
            }
            let decoded = try decode(bytes)
            #expect(decoded == metadata && decoded.checksummed == checksummed)
        }
        // Rows without fingerprints keep their lengths: 6 (no salt, and no room for fingerprints), 14, 18.
        var bare = ClassMetadata(lastRowID: 1, version: 1, classID: 0, salt: nil)
        bare.layouts = [1: 5]
        #expect(bare.bytes.count == 6)
        #expect(try decode(ClassMetadata(lastRowID: 1, version: 1, classID: 0, salt: (1, 2)).bytes).layouts.isEmpty)
    }

    @Test func damagedFingerprintsAreMalformedMetadataNeverATrap() throws {
        var metadata = ClassMetadata(lastRowID: 9, version: 1, classID: 4, salt: (7, 8))
        metadata.layouts = [1: 0x4433_2211, 3: 0x0102_0304]
        metadata.checksummed = true
        let good = metadata.bytes
        func refused(_ bytes: [UInt8], _ words: String) -> Bool {
            do {
                _ = try decode(bytes)
                return false
            } catch let error as CabinetError {
                return error.code == .malformedMetadata && (error.reason ?? "").contains(words)
            } catch {
                return false
            }
        }
        var flipped = good
        flipped[17] ^= 0x40                                   // a byte of the first fingerprint
        #expect(refused(flipped, "checksum"))
        var counted = good
        counted[14] = 3                                       // three fingerprints said, two there
        #expect(refused(counted, "3 layout fingerprints make"))
        #expect(refused(Array(good.dropLast()), "layout fingerprints make"))
        metadata.checksummed = false
        var descending = metadata.bytes
        descending[15] = 5                                    // version 5, then version 3
        #expect(refused(descending, "ascend"))
        var zero = metadata.bytes
        zero[15] = 0
        #expect(refused(zero, "ascend"))
        // Every cut and every count byte decodes or throws; none traps.
        for length in 0...good.count { _ = try? decode(Array(good.prefix(length))) }
        for count in UInt8.min...UInt8.max {
            var bytes = good
            bytes[14] = count
            _ = try? decode(bytes)
        }
    }

    @Test(arguments: BackendKind.allCases)
    func aClassWhoseFingerprintDiffersIsRefusedAndAnOlderVersionsIsComparedNoMore(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = try fixture.open(Bulb.self)
        let bulb = Bulb()
        bulb.name = "Desk"
        store.insert(bulb)
        try store.save()
        store.close()
        let refusing = try fixture.open(Song.self)
        let error = expectCabinetError({ try refusing.register(BulbChanged.self) }) {
            let reason = $0.reason ?? ""
            return $0.code == .layoutChanged && $0.className == "BulbChanged" && $0.recordVersion == 1 && reason.contains("version 1")
                && reason.contains("0x00000B01") && reason.contains("@StoredModel(version: 2)")
        }
        #expect(error != nil)
        refusing.close()
        // The store is unharmed; version 2, whose version-1 layout is Bulb's, opens it and adds its own fingerprint.
        let upgraded = try fixture.open(BulbVersion2.self)
        #expect(upgraded.hasUnsavedChanges)                  // the row with version 2's fingerprint, for the next save
        #expect(try upgraded.upgradeAll(BulbVersion2.self) == 1)
        try upgraded.save()
        #expect(try upgraded.fetchAll(BulbVersion2.self).map(\.name) == ["Desk"])
        upgraded.close()
        let reopened = try fixture.open(Song.self)
        let row = try #require(try ClassRegistrar.readMetadata(of: reopened.backend.openTable(named: "Bulb"), className: "Bulb"))
        #expect(row.version == 2 && row.layouts == [1: 0x0000_0B01, 2: 0x0000_0B22])
        reopened.close()
        // Version 1's layout is compared no more (every record is of version 2 now): the old class
        // registers, and its read of a newer record is refused as always.
        let older = try fixture.open(BulbChanged.self)
        #expect(errorCode { _ = try older.fetchAll(BulbChanged.self) } == .newerVersion)
        older.close()
    }
}
