// A worked migration: version 1 of Person stored only a phone number,
// version 2 adds a fax. Both Swift classes map to the same file ("Person").
//
//   versioning STORE     (a directory; created if missing, removed if it exists)
import Cabinet
import Foundation

/// The app as it shipped first.
final class PersonV1: StoredObject {
    override class var storedName: String { "Person" }
    @Stored var phone = ""

    override func read(from buffer: inout DataBuffer) throws {
        phone = try buffer.readString()
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeString(phone)
    }
}

/// The next release: version 2 reads both layouts.
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

let path = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : NSTemporaryDirectory() + "/cabinet-versioning"
try? FileManager.default.removeItem(atPath: path)

do {
    // 1. The old app writes three people.
    let store = try ObjectStore(path: path)
    try store.register(PersonV1.self)
    for phone in ["555-0100", "555-0101", "555-0102"] {
        let person = PersonV1(); person.phone = phone
        store.insert(person)
    }
    try store.save()
    store.close()
    print("Version 1 wrote 3 people.")

    // 2. The new app reads them, and upgrades the file.
    let upgraded = try ObjectStore(path: path)
    try upgraded.register(Person.self)
    print("Needs upgrade: \(try upgraded.needsUpgrade(Person.self))")
    for person in try upgraded.fetchAll(Person.self).sorted(by: { $0.rowID < $1.rowID }) {
        print("  row \(person.rowID): phone \(person.phone), fax '\(person.fax)'")
    }
    let rewritten = try upgraded.upgradeAll(Person.self)       // rewrites every instance at version 2
    print("Upgraded \(rewritten) records; needs upgrade: \(try upgraded.needsUpgrade(Person.self))")
    let first = try upgraded.fetchAll(Person.self).min { $0.rowID < $1.rowID }
    first?.fax = "555-0199"
    try upgraded.save()
    upgraded.close()

    // 3. The old app can no longer misread the new records: it gets a clear error.
    let old = try ObjectStore(path: path)
    try old.register(PersonV1.self)
    do {
        _ = try old.fetchAll(PersonV1.self)
    } catch {
        print("Version 1 refuses the new records:\n  \(error)")
    }
    old.close()
} catch {
    FileHandle.standardError.write(Data("versioning: \(error)\n".utf8))
    exit(1)
}
