// The child of the Redis big-save kill test: one save big enough to be staged
// (RedisStagedWrite), killed by the test somewhere in it.
//
//   cabinet-test-big-save URL STORE TABLE COUNT
//
// Puts COUNT records (field: the 4-byte row, value "TABLE-row") into TABLE in
// one transaction, staged from 100 changes on; prints "staging" after the first
// 1,000 (the staging has started) and "committed" once the commit returned.
import CabinetRedis
import CabinetStorage
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 5, let count = Int(arguments[4]) else {
    FileHandle.standardError.write(Data("usage: cabinet-test-big-save URL STORE TABLE COUNT\n".utf8))
    exit(2)
}
do {
    var options = RedisBackend.Options()
    options.stagingThreshold = 100
    let backend = try RedisBackend(url: arguments[1], store: arguments[2], options: options)
    // The table's own transaction (what a backend commit uses), so that the staging runs while the rows are put.
    guard let table = try backend.openTable(named: arguments[3]) as? any TransactionalTable else {
        FileHandle.standardError.write(Data("cabinet-test-big-save: a Redis table has transactions\n".utf8))
        exit(1)
    }
    try table.beginTransaction()
    for row in 0..<count {
        let value = Array("\(arguments[3])-\(row)".utf8)
        try withUnsafeBytes(of: UInt32(row).littleEndian) { key in
            try value.withUnsafeBytes { try table.setValue($0, forKey: key) }
        }
        if row == 1_000 { FileHandle.standardOutput.write(Data("staging\n".utf8)) }
    }
    try table.commitTransaction()
    FileHandle.standardOutput.write(Data("committed\n".utf8))
} catch {
    FileHandle.standardError.write(Data("cabinet-test-big-save: \(error)\n".utf8))
    exit(1)
}
