// upgradeAll after a class's version went from 1 to 2.
import Cabinet
import Foundation

/// Ten people written by version 1, upgraded by version 2 in batches of four.
/// Each batch must be all-or-nothing, every object must read back, and a rerun
/// must finish the job.
struct Upgrade: Scenario {
    let name = "upgrade"
    let classes: [StoredObject.Type] = [PersonV2.self]
    static let people = 10, batch = 4
    func prepare(_ work: Work) throws {
        let store = try ObjectStore(path: work.store, logger: childLogger)
        defer { store.close() }
        try store.register(PersonV1.self)
        for i in 0..<Upgrade.people {
            let person = PersonV1()
            person.phone = "555-01\(i)"
            store.insert(person)
        }
        try store.save()
    }
    func run(_ work: Work, _ steps: Steps) throws {
        let store = try open(work.store)
        defer { store.close() }
        steps.arm()
        try steps.step("upgrade", memory: { try describe(store, self) }) {
            try store.upgradeAll(PersonV2.self, batchSize: Upgrade.batch)
        }
    }
    /// Which records are at version 2, and whether that is a whole number of batches.
    func dumpExtra(_ store: ObjectStore) throws -> [String] {
        let versions = try store.fetchAll(PersonV2.self).sorted { $0.rowID < $1.rowID }.map(\.versionRead)
        let upgraded = versions.prefix { $0 == 2 }.count
        let whole = versions.dropFirst(upgraded).allSatisfy { $0 == 1 } && (upgraded % Upgrade.batch == 0 || upgraded == versions.count)
        return ["needs upgrade: \(try store.needsUpgrade(PersonV2.self))",
                "versions: \(versions.map(String.init).joined())",
                whole ? "upgrade: whole batches" : "upgrade: BAD a batch is torn"]
    }
}
