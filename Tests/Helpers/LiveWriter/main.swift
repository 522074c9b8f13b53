// The writer of the live-store tests: holds a store open for writing in its own
// process and saves when told, while the test reads the store from another.
//
//   cabinet-test-writer STORE [BUCKETS]
//
// The store holds one Left and one Right whose balances add up to 1,000, and a
// Receipt per save (Tests/Helpers/TortureModels); a new store starts with Left
// at 1,000. BUCKETS sets the bucket count of new files (small, so that a save
// soon rebuilds a file). It prints "ready PID", then obeys one command per line
// of standard input, answering each with one line:
//
//   save            one save: 1 moves from Left to Right, a receipt is appended   → saved SERIAL
//   saves N         N such saves                                                    → saved SERIAL
//   loop            saves until the next line arrives (which is then obeyed)       → looped COUNT
//   grow N          one save of N receipts (grows, so rebuilds, the Receipt file)  → saved SERIAL
//   compact         rewrites every file (new files in place of the old)            → compacted
//   pause           a save of Left alone (1 less) that stops inside its transaction:
//                   prints "paused", waits for a line, finishes, then gives Right 1 → saved SERIAL
//   quit            closes the store and exits                                     → closed
import Cabinet
import Foundation
import TortureModels

/// Left as the tests read it (`TortureLeft`'s layout and file), saved through
/// a ``PausingBackend`` that can stop its save inside the transaction of its file.
final class PausingLeft: StoredObject {
    override class var storedName: String { "Left" }
    @Stored var balance: Int64 = 0
    override func read(from buffer: inout DataBuffer) throws { balance = try buffer.readInt64() }
    override func write(to buffer: inout DataBuffer) { buffer.writeInt64(balance) }
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Whether a line is waiting on standard input.
func inputWaiting() -> Bool {
    var entry = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
    return poll(&entry, 1, 0) > 0
}

guard CommandLine.arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: cabinet-test-writer STORE [BUCKETS]\n".utf8))
    exit(2)
}
do {
    var tuning = TokyoCabinetBackend.Options()
    if CommandLine.arguments.count >= 3, let buckets = Int64(CommandLine.arguments[2]) { tuning.bucketCount = buckets }
    let store = try ObjectStore(backend: PausingBackend(TokyoCabinetBackend(directory: CommandLine.arguments[1], options: tuning)))
    store.undoManager.isEnabled = false
    try store.register(PausingLeft.self, TortureRight.self, TortureReceipt.self)
    let left = try store.fetchAll(PausingLeft.self).first ?? { let l = PausingLeft(); l.balance = 1_000; store.insert(l); return l }()
    let right = try store.fetchAll(TortureRight.self).first ?? { let r = TortureRight(); store.insert(r); return r }()
    var serial = UInt64(try store.count(of: TortureReceipt.self))
    try store.save()

    func save(receipts: Int = 1) throws {
        left.balance -= 1
        right.balance += 1
        for _ in 0..<receipts {
            serial += 1
            let receipt = TortureReceipt()
            receipt.serial = serial
            receipt.leftBalance = left.balance
            receipt.padding = [UInt8](repeating: UInt8(truncatingIfNeeded: serial), count: Int(serial % 97))
            store.insert(receipt)
        }
        try store.save()
    }

    say("ready \(getpid())")
    var pending = readLine()
    while let line = pending {
        pending = nil
        let words = line.split(separator: " ")
        let count = words.count > 1 ? Int(words[1]) ?? 1 : 1
        switch words.first {
        case "save": try save(); say("saved \(serial)")
        case "saves": for _ in 0..<count { try save() }; say("saved \(serial)")
        case "grow": try save(receipts: count); say("saved \(serial)")
        case "compact": try store.compact(); say("compacted")
        case "pause":
            // Left alone changes: one file, one transaction, in which its first write stops.
            PausingBackend.pauseNextWrite = {
                say("paused")
                _ = readLine()
            }
            left.balance -= 1
            try store.save()
            right.balance += 1       // the balances add up again
            try store.save()
            say("saved \(serial)")
        case "loop":
            var saves = 0
            while !inputWaiting() { try save(); saves += 1 }
            say("looped \(saves)")
        case "quit":
            store.close()
            say("closed")
            exit(0)
        default: say("unknown \(line)")
        }
        pending = pending ?? readLine()
    }
    store.close()
} catch {
    say("error \(error)")
    exit(1)
}
