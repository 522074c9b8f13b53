// Misuses a store the way the misuse tests name on the command line, so they can
// check it stops with a message naming the misuse (not with heap corruption, and
// not silently): the process is expected to die; if it ends normally it prints
// "no misuse detected" and exits 0.
import Cabinet
import Foundation

final class Item: StoredObject {
    @Stored var name = ""
    /// Set on one item: its write(to:) then does `mode`'s misuse.
    nonisolated(unsafe) static var misuseInWrite: ((ObjectStore) -> Void)?
    nonisolated(unsafe) static var store: ObjectStore?

    override func read(from buffer: inout DataBuffer) throws {
        name = try buffer.readString()
    }
    override func write(to buffer: inout DataBuffer) {
        if let misuse = Item.misuseInWrite, let store = Item.store {
            Item.misuseInWrite = nil
            misuse(store)
        }
        buffer.writeString(name)
    }
}

/// Lets two threads share a store, which is the misuse under test.
final class Shared: @unchecked Sendable {
    let store: ObjectStore
    init(_ store: ObjectStore) { self.store = store }
}

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: cabinet-misuse insert-during-save|change-during-save|save-during-save|close-during-enumerate|write-inside-read|two-threads|buffer-on-two-threads STORE\n".utf8))
    exit(2)
}
let store = try ObjectStore(path: arguments[2])
try store.register(Item.self)
store.undoManager.isEnabled = false   // its snapshots call write(to:) too: only save's calls should misuse
Item.store = store
let first = Item(); first.name = "first"
store.insert(first)
try store.save()

switch arguments[1] {
case "insert-during-save":
    Item.misuseInWrite = { store in let extra = Item(); extra.name = "extra"; store.insert(extra) }
    first.name = "changed"
    try store.save()
case "change-during-save":
    let other = Item(); other.name = "other"
    store.insert(other)
    try store.save()
    Item.misuseInWrite = { _ in other.name = "changed while saving" }
    first.name = "changed"
    try store.save()
case "save-during-save":
    Item.misuseInWrite = { store in try? store.save() }
    first.name = "changed"
    try store.save()
case "close-during-enumerate":
    for round in 0..<500 { let item = Item(); item.name = "item \(round)"; store.insert(item) }
    try store.save()
    var seen = 0
    try store.enumerate(Item.self) { item, _ in
        seen += 1
        if seen == 10 { store.close() }
    }
    print("enumerated \(seen)")
case "write-inside-read":
    // A table's read lends out bytes of Tokyo Cabinet's map; writing the table
    // before they are used up is the misuse (the store's own reads copy them out).
    let backend = try TokyoCabinetBackend(directory: arguments[2] + "-tables")
    let table = try backend.openTable(named: "Keys")
    let key: [UInt8] = [1, 2, 3, 4]
    try key.withUnsafeBytes { k in try [UInt8](repeating: 7, count: 40).withUnsafeBytes { try table.setValue($0, forKey: k) } }
    _ = try key.withUnsafeBytes { k in
        try table.withValue(forKey: k) { bytes in
            try [UInt8](repeating: 9, count: 4_000).withUnsafeBytes { try table.setValue($0, forKey: k) }
            return bytes.count
        }
    }
case "two-threads":
    Item.store = nil
    let shared = Shared(store)
    let deadline = Date().addingTimeInterval(20)
    let writer = Thread {
        var round = 0
        while Date() < deadline {
            round += 1
            let item = Item(); item.name = "item \(round)"
            shared.store.insert(item)
            if round % 100 == 0 { try? shared.store.save() }
        }
    }
    let reader = Thread {
        while Date() < deadline { _ = try? shared.store.fetchAll(Item.self).count }
    }
    writer.start()
    reader.start()
    Thread.sleep(until: deadline.addingTimeInterval(1))
case "buffer-on-two-threads":
    // A buffer is Sendable, so a named buffer may go to another thread; reading
    // its references there while this thread is inside the store is the misuse.
    var favorites = DataBuffer()
    favorites.writeReferences([first])
    try store.setNamedBuffer(favorites, forName: "Favorites")
    try store.save()
    guard let sent = try store.namedBuffer(forName: "Favorites") else { exit(3) }
    let deadline = Date().addingTimeInterval(20)
    let reader = Thread {
        while Date() < deadline {
            var mine = sent
            _ = try? mine.readReferences(to: Item.self)
        }
    }
    reader.start()
    while Date() < deadline { _ = try? store.fetchAll(Item.self).count }
default:
    FileHandle.standardError.write(Data("unknown mode \(arguments[1])\n".utf8))
    exit(2)
}
print("no misuse detected")
exit(0)
