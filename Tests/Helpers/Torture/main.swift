// The child of the crash-torture test: saves in a loop until it is killed.
//
//   cabinet-torture STORE SEED
//
// Each save moves a random amount between the one object of class Left and the
// one object of class Right (their sum is always 1,000) and appends a Receipt
// with the next serial number and Left's new balance: three files per save.
// After each save returns it prints "ack SERIAL". The parent kills it at a random
// moment and checks that the store holds every acknowledged save, whole.
import Cabinet
import Foundation

final class Left: StoredObject {
    @Stored var balance: Int64 = 0
    override func read(from buffer: inout DataBuffer) throws { balance = try buffer.readInt64() }
    override func write(to buffer: inout DataBuffer) { buffer.writeInt64(balance) }
}

final class Right: StoredObject {
    @Stored var balance: Int64 = 0
    override func read(from buffer: inout DataBuffer) throws { balance = try buffer.readInt64() }
    override func write(to buffer: inout DataBuffer) { buffer.writeInt64(balance) }
}

final class Receipt: StoredObject {
    @Stored var serial: UInt64 = 0
    @Stored var leftBalance: Int64 = 0
    @Stored var padding: [UInt8] = []
    override func read(from buffer: inout DataBuffer) throws {
        serial = try buffer.readUInt64()
        leftBalance = try buffer.readInt64()
        padding = try buffer.readBytes()
    }
    override func write(to buffer: inout DataBuffer) {
        buffer.writeUInt64(serial)
        buffer.writeInt64(leftBalance)
        buffer.writeBytes(padding)
    }
}

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
    let store = try ObjectStore(path: CommandLine.arguments[1])
    store.undoManager.isEnabled = false
    try store.register(Left.self, Right.self, Receipt.self)
    let left = try store.fetchAll(Left.self).first ?? { let l = Left(); l.balance = 1_000; store.insert(l); return l }()
    let right = try store.fetchAll(Right.self).first ?? { let r = Right(); store.insert(r); return r }()
    var serial = UInt64(try store.count(of: Receipt.self))
    while true {
        let amount = Int64(random.next(201)) - 100
        left.balance -= amount
        right.balance += amount
        serial += 1
        let receipt = Receipt()
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
