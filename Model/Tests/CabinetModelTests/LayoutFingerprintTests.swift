import Cabinet
import CabinetModel
import Foundation
import Testing

// Lamp as a program first shipped it, and what later programs made of it.

@StoredModel
final class Lamp: StoredObject {
    var name = ""
    var watts: UInt16 = 0
}

/// Lamp's two properties swapped and the version left at 1: its version-1
/// records would be read with the watts first.
@StoredModel
final class LampReordered: StoredObject {
    override class var storedName: String { "Lamp" }
    var watts: UInt16 = 0
    var name = ""
}

/// Lamp's name dropped, version left at 1: the name's bytes would be read as the watts.
@StoredModel
final class LampWithoutName: StoredObject {
    override class var storedName: String { "Lamp" }
    var watts: UInt16 = 0
}

/// The same swap, declared: version 2 moves the watts first, and the old place
/// stays, removed in 2, so version-1 records read as they were written. Its
/// layouts are declared too, so that the compiler checks them.
@StoredModel(version: 2, fingerprints: [1: 0x4A84_163B, 2: 0x2182_4793])
final class LampVersion2: StoredObject {
    override class var storedName: String { "Lamp" }
    @Since(2) var watts: UInt16 = 0
    var name = ""
    @Removed(in: 2) var oldWatts: UInt16 = 0

    override func read(from buffer: inout DataBuffer) throws {
        try readStoredProperties(from: &buffer)
        if buffer.version < 2 { watts = oldWatts }
    }
}

/// Lamp written by hand: no fingerprints, as every class before the macro had.
final class HandLamp: StoredObject {
    override class var storedName: String { "Lamp" }
    @Stored var name = ""
    @Stored var watts: UInt16 = 0

    override func read(from buffer: inout DataBuffer) throws {
        name = try buffer.readString()
        watts = try buffer.readUInt16()
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(name)
        buffer.writeUInt16(watts)
    }
}

/// One layout spelled two ways that write the same bytes, and one that does not.
@StoredModel
final class SpelledOneWay: StoredObject {
    var ratio: Float = 0
    var count = 0
    var note: String? = nil
    var when: Date? = nil
    var samples: [Double] = []
}

@StoredModel
final class SpelledAnotherWay: StoredObject {
    var ratio: Float32 = 0
    var count: Int64 = 0
    var note = ""
    var when = Date(timeIntervalSinceReferenceDate: 0)
    var samples: [Float64] = []
}

@StoredModel
final class SpelledNarrower: StoredObject {
    var ratio: Float32 = 0
    var count: Int32 = 0
    var note = ""
    var when = Date(timeIntervalSinceReferenceDate: 0)
    var samples: [Float64] = []
}

/// Registering a @StoredModel class checks its layout against the one its
/// records were written in (the fingerprints in the class's metadata row).
@Suite struct LayoutFingerprintTests {
    @Test func theMacroFingerprintsEachVersionsLayout() {
        #expect(Set(Lamp.layoutFingerprints.keys) == [1])
        #expect(LampReordered.layoutFingerprints[1] != Lamp.layoutFingerprints[1])
        #expect(LampWithoutName.layoutFingerprints[1] != Lamp.layoutFingerprints[1])
        #expect(LampVersion2.layoutFingerprints[1] == Lamp.layoutFingerprints[1])
        #expect(LampVersion2.layoutFingerprints[2] == LampReordered.layoutFingerprints[1])
        #expect(HandLamp.layoutFingerprints.isEmpty)
    }

    @Test func declaredFingerprintsAreTheOnesTheStoreKeeps() {
        // The compiler accepted the declaration, so it is the layout the macro read; the store gets the same numbers.
        #expect(LampVersion2.layoutFingerprints == [1: 0x4A84_163B, 2: 0x2182_4793])
        #expect(LampVersion2.layoutFingerprints[1] == Lamp.layoutFingerprints[1])
    }

    @Test func spellingsThatWriteTheSameBytesAreOneLayout() {
        #expect(SpelledOneWay.layoutFingerprints == SpelledAnotherWay.layoutFingerprints)
        #expect(SpelledNarrower.layoutFingerprints[1] != SpelledAnotherWay.layoutFingerprints[1])
    }

    @Test(arguments: BackendKind.allCases)
    func aClassReorderedWithoutANewVersionIsRefusedAtRegistration(_ kind: BackendKind) throws {
        let directory = try TemporaryDirectory()
        let backend = try kind.newBackend(in: directory)
        try saveLamp(Lamp.self, into: backend)
        for twin in [LampReordered.self, LampWithoutName.self] as [StoredObject.Type] {
            let store = try ObjectStore(backend: kind.reopen(backend))
            let error = try #require(throws: CabinetError.self) { try store.register(twin) }
            #expect(error.code == .layoutChanged && error.className == String(describing: twin) && error.recordVersion == 1)
            let reason = error.reason ?? ""
            #expect(reason.contains("version 1") && reason.contains("@Removed/@Since") && reason.contains("@StoredModel(version: 2)"), "\(reason)")
            #expect(throws: CabinetError.self) { try store.fetchAll(twin) }   // not registered
            store.close()
        }
        // The store is as it was: the first class still opens and reads it.
        #expect(try lamps(Lamp.self, in: kind.reopen(backend)) == ["Desk 40"])
    }

    @Test(arguments: BackendKind.allCases)
    func theSameChangeDeclaredWithRemovedAndSinceOpensAndReadsBothVersions(_ kind: BackendKind) throws {
        let directory = try TemporaryDirectory()
        let backend = try kind.newBackend(in: directory)
        try saveLamp(Lamp.self, into: backend)
        let store = try ObjectStore(backend: kind.reopen(backend))
        try store.register(LampVersion2.self)
        let old = try #require(try store.fetchAll(LampVersion2.self).first)
        #expect(old.name == "Desk" && old.watts == 40)
        let new = LampVersion2()
        new.name = "Floor"
        new.watts = 60
        store.insert(new)
        try store.save()
        store.close()
        #expect(try lamps(LampVersion2.self, in: kind.reopen(backend)) == ["Desk 40", "Floor 60"])
        #expect(try metadataRow(in: kind.reopen(backend)).count == 18 + 1 + 2 * 5)   // both versions' fingerprints
        // Version 1 in the new order is still refused: records of version 1 are there.
        let again = try ObjectStore(backend: kind.reopen(backend))
        defer { again.close() }
        #expect(throws: CabinetError.self) { try again.register(LampReordered.self) }
    }

    @Test(arguments: BackendKind.allCases)
    func aHandWrittenClassIsNotCheckedAndStoresNoFingerprint(_ kind: BackendKind) throws {
        let directory = try TemporaryDirectory()
        let backend = try kind.newBackend(in: directory)
        try saveLamp(HandLamp.self, into: backend)
        let handRow = try metadataRow(in: kind.reopen(backend))
        #expect(handRow.count == 18)   // a checksummed store's row as it was before fingerprints
        // The store it wrote, as every store before fingerprints, opens with the macro class,
        // which gives it its fingerprint at the next save; from then on a reordered twin is refused.
        let store = try ObjectStore(backend: kind.reopen(backend))
        try store.register(Lamp.self)
        #expect(try store.fetchAll(Lamp.self).map(\.name) == ["Desk"])
        try store.save()
        store.close()
        let macroRow = try metadataRow(in: kind.reopen(backend))
        #expect(macroRow.count == 18 + 1 + 5 && Array(macroRow.prefix(6)) == Array(handRow.prefix(6)))
        let refusing = try ObjectStore(backend: kind.reopen(backend))
        #expect(throws: CabinetError.self) { try refusing.register(LampReordered.self) }
        refusing.close()
        // The hand-written class still writes to the store the macro class wrote, and keeps its fingerprint.
        try saveLamp(HandLamp.self, into: kind.reopen(backend))
        #expect(try lamps(HandLamp.self, in: kind.reopen(backend)) == ["Desk 40", "Desk 40"])
        #expect(try metadataRow(in: kind.reopen(backend)).suffix(9).prefix(5) == macroRow.suffix(9).prefix(5))
    }

    /// Saves one lamp, Desk of 40 W, with `type` (Lamp or HandLamp, whose records are the same bytes).
    private func saveLamp(_ type: StoredObject.Type, into backend: any StorageBackend) throws {
        let store = try ObjectStore(backend: backend)
        defer { store.close() }
        try store.register(type)
        let lamp = type.init()
        if let lamp = lamp as? Lamp { lamp.name = "Desk"; lamp.watts = 40 }
        if let lamp = lamp as? HandLamp { lamp.name = "Desk"; lamp.watts = 40 }
        store.insert(lamp)
        try store.save()
    }

    /// Each lamp as "name watts", by row, read with `type`.
    private func lamps(_ type: StoredObject.Type, in backend: any StorageBackend) throws -> [String] {
        let store = try ObjectStore(backend: backend)
        defer { store.close() }
        try store.register(type)
        return try store.fetchAll(type).sorted { $0.rowID < $1.rowID }.map { object -> String in
            switch object {
            case let lamp as Lamp: "\(lamp.name) \(lamp.watts)"
            case let lamp as LampVersion2: "\(lamp.name) \(lamp.watts)"
            case let lamp as HandLamp: "\(lamp.name) \(lamp.watts)"
            default: "?"
            }
        }
    }

    /// The bytes of Lamp's metadata row (row 1).
    private func metadataRow(in backend: any StorageBackend) throws -> [UInt8] {
        defer { backend.close() }
        let row = withUnsafeBytes(of: UInt32(1).littleEndian, Array.init)
        var bytes: [UInt8]?
        try backend.openTable(named: "Lamp").forEach { key, value in
            if Array(key) == row { bytes = Array(value) }
            return bytes == nil
        }
        return try #require(bytes)
    }
}
