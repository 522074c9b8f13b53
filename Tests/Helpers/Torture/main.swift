// The child of the crash-torture test: saves in a loop until it is killed.
//
//   cabinet-torture STORE SEED        (STORE: a directory, or a redis://host:port/db/store URL)
//
// Each save moves a random amount between the one Left and the one Right and
// appends a Receipt (the classes: Tests/Helpers/TortureModels): three files per save.
// After each save returns it prints "ack SERIAL". The parent kills it at a random
// moment and checks that the store holds every acknowledged save, whole.
import Cabinet
import Foundation
import TortureModels

guard CommandLine.arguments.count == 3, let seed = UInt64(CommandLine.arguments[2]) else {
    FileHandle.standardError.write(Data("usage: cabinet-torture STORE SEED\n".utf8))
    exit(2)
}
/// xorshift64: the same seed gives the same run.
struct Random {
    var state: UInt64
    mutating func next(_ bound: Int) -> Int {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        return Int(state % UInt64(bound))
    }
}
var random = Random(state: seed | 1)

do {
    let store = try openTortureStore(CommandLine.arguments[1])
    store.undoManager.isEnabled = false
    try store.register(TortureLeft.self, TortureRight.self, TortureReceipt.self)
    let left = try store.fetchAll(TortureLeft.self).first ?? { let l = TortureLeft(); l.balance = 1_000; store.insert(l); return l }()
    let right = try store.fetchAll(TortureRight.self).first ?? { let r = TortureRight(); store.insert(r); return r }()
    var serial = UInt64(try store.count(of: TortureReceipt.self))
    while true {
        let amount = Int64(random.next(201)) - 100
        left.balance -= amount
        right.balance += amount
        serial += 1
        let receipt = TortureReceipt()
        receipt.serial = serial
        receipt.leftBalance = left.balance
        receipt.padding = [UInt8](repeating: UInt8(truncatingIfNeeded: serial), count: random.next(160))
        store.insert(receipt)
        try store.save()
        FileHandle.standardOutput.write(Data("ack \(serial)\n".utf8))
    }
} catch {
    FileHandle.standardError.write(Data("cabinet-torture: \(error)\n".utf8))
    exit(1)
}
