@testable import Cabinet
import Foundation
import Testing

/// Version 1 of a class: it stored only the phone.
final class PersonV1: StoredObject {
    override class var storedName: String { "Person" }
    override class var version: UInt8 { 1 }
    @Stored var phone = ""
    override func read(from buffer: inout DataBuffer) throws {
        phone = try buffer.readString()
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(phone)
    }
}

/// Version 2 of the same class, in the same file: it adds the fax.
final class PersonV2: StoredObject {
    override class var storedName: String { "Person" }
    override class var version: UInt8 { 2 }
    @Stored var phone = ""
    @Stored var fax = ""
    override func read(from buffer: inout DataBuffer) throws {
        phone = try buffer.readString()
        if buffer.version >= 2 { fax = try buffer.readString() }
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(phone)
        buffer.writeString(fax)
    }
}

@Suite struct VersioningTests {
    /// A store of `count` people written by version 1.
    private func versionOneStore(_ fixture: StoreFixture, count: Int) throws {
        let store = try fixture.open(PersonV1.self)
        for i in 0..<count { let p = PersonV1(); p.phone = "555-\(i)"; store.insert(p) }
        try store.save()
        store.close()
    }

    @Test(arguments: BackendKind.allCases)
    func olderRecordsReadThroughTheirVersionAndMixWithNewOnes(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        try versionOneStore(fixture, count: 3)
        let store = try fixture.open(PersonV2.self)
        #expect(try store.needsUpgrade(PersonV2.self))
        let people = try store.fetchAll(PersonV2.self).sorted { $0.rowID < $1.rowID }
        #expect(people.map(\.phone) == ["555-0", "555-1", "555-2"])
        #expect(people.allSatisfy { $0.fax.isEmpty })
        people[0].fax = "555-FAX"                  // upgraded one by one as saved
        let added = PersonV2(); added.phone = "new"; added.fax = "new-fax"; store.insert(added)
        try store.save()
        store.close()

        let reopened = try fixture.open(PersonV2.self)
        let again = try reopened.fetchAll(PersonV2.self).sorted { $0.rowID < $1.rowID }
        #expect(again.map(\.fax) == ["555-FAX", "", "", "new-fax"])
        reopened.close()
        if kind == .tokyoCabinet {
            let raw = RawTokyoCabinet.read(fixture.storePath + "/Person")
            #expect(raw[RawTokyoCabinet.rowKey(2)]?.first == 2, "the saved object was rewritten at version 2")
            #expect(raw[RawTokyoCabinet.rowKey(3)]?.first == 1, "the untouched one is still version 1")
        }
    }

    @Test(arguments: BackendKind.allCases)
    func upgradeAllRewritesAStoreLargerThanABatch(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        try versionOneStore(fixture, count: 2_500)
        let store = try fixture.open(PersonV2.self)
        let rewritten = try store.upgradeAll(PersonV2.self, batchSize: 1_000)
        #expect(rewritten == 2_500)
        #expect(try !store.needsUpgrade(PersonV2.self))
        #expect(try store.upgradeAll(PersonV2.self) == 0, "a second run finds nothing to do")
        store.close()

        // Version 1 cannot read the upgraded records: they are from a newer version.
        let old = try fixture.open(PersonV1.self)
        #expect(throws: CabinetError.self) { _ = try old.fetchAll(PersonV1.self) }
        old.close()
        let reopened = try fixture.open(PersonV2.self)
        #expect(try reopened.fetchAll(PersonV2.self).count == 2_500)
        reopened.close()
    }

    @Test(arguments: BackendKind.allCases)
    func anInterruptedUpgradeFinishesWhenRunAgain(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        try versionOneStore(fixture, count: 1_200)
        do {
            // Upgrade part of the store by hand, as a run killed after its first batch would leave it.
            let store = try fixture.open(PersonV2.self)
            for person in try store.fetchAll(PersonV2.self) where person.rowID < 500 {
                store.willUpdate(person)
            }
            try store.save()
            #expect(try store.needsUpgrade(PersonV2.self), "the metadata still says version 1")
            store.close()
        }
        let store = try fixture.open(PersonV2.self)
        #expect(try store.upgradeAll(PersonV2.self, batchSize: 100) == 1_200 - 498)
        #expect(try !store.needsUpgrade(PersonV2.self))
        store.close()
    }

    @Test(arguments: BackendKind.allCases)
    func upgradeRefusesUnsavedChangesAndUpgradesEveryClassThatNeedsIt(_ kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        try versionOneStore(fixture, count: 10)
        let store = try fixture.open(PersonV2.self, Song.self)
        let person = try #require(try store.fetchAll(PersonV2.self).first)
        person.fax = "pending"
        #expect(throws: CabinetError.unsavedChanges(className: "Person")) { try store.upgradeAll(PersonV2.self) }
        try store.save()
        try store.upgradeAllClassesNeedingUpgrade()
        #expect(try !store.needsUpgrade(PersonV2.self))
        #expect(try store.fetch(PersonV2.self, rowID: person.rowID)?.fax == "pending")
        store.close()
    }

    @Test func aStoreWithoutPerInstanceVersionsUpgradesInOneStep() throws {
        let fixture = try StoreFixture(.tokyoCabinet)
        let plain = ObjectStore.Options(perInstanceVersioning: false)
        do {
            let store = try fixture.open(PersonV1.self, options: plain)
            for i in 0..<5 { let p = PersonV1(); p.phone = "\(i)"; store.insert(p) }
            try store.save()
            store.close()
        }
        let store = try fixture.open(PersonV2.self, options: plain)
        // Records carry no version: they read as the metadata's version 1.
        #expect(try store.fetchAll(PersonV2.self).allSatisfy { $0.fax.isEmpty })
        #expect(try store.upgradeAll(PersonV2.self) == 5)
        store.close()
        let reopened = try fixture.open(PersonV2.self, options: plain)
        #expect(try !reopened.needsUpgrade(PersonV2.self))
        #expect(try reopened.fetchAll(PersonV2.self).map(\.phone).sorted() == ["0", "1", "2", "3", "4"])
        reopened.close()
    }

    /// The README's versioning sample, verbatim (ReadmeExampleTests checks it is here).
    @Test func theReadmeVersioningSampleRuns() throws {
        let fixture = try StoreFixture(.memory)
        do {
            let old = try fixture.open(PersonV1.self)
            let person = PersonV1(); person.phone = "555"; old.insert(person)
            try old.save()
            old.close()
        }
        let store = try fixture.open(Song.self)
        final class Person: StoredObject {
            override class var version: UInt8 { 2 }      // version 1 stored only the phone
            @Stored var phone = ""
            @Stored var fax = ""
            override func read(from buffer: inout DataBuffer) throws {
                phone = try buffer.readString()
                if buffer.version >= 2 { fax = try buffer.readString() }
            }
            override func write(to buffer: inout DataBuffer) {
                buffer.writeString(phone)
                buffer.writeString(fax)
            }
        }
        try store.register(Person.self)
        try store.upgradeAll(Person.self)          // rewrites every instance at version 2
        try store.upgradeAllClassesNeedingUpgrade()
        #expect(try store.fetchAll(Person.self).first?.phone == "555")
        #expect(try !store.needsUpgrade(Person.self))
        store.close()
    }
}
