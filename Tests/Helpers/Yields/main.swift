// Opens a table of a Tokyo Cabinet store in DIRECTORY, writes and reads a
// thousand records, and prints what became of Tokyo Cabinet's yields (the
// state skip() gives, whether the library's slot for sched_yield is skipped),
// so a test can run it with and without CABINET_TOKYO_CABINET_YIELDS=keep.
//
//   cabinet-test-yields DIRECTORY
import CabinetStorage
import Foundation

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: cabinet-test-yields DIRECTORY\n".utf8))
    exit(2)
}
do {
    let backend = try TokyoCabinetBackend(directory: CommandLine.arguments[1])
    defer { withExtendedLifetime(backend) {} }   // its tables close with it
    let table = try backend.openTable(named: "Song")
    var batch = WriteBatch()   // committed in one Tokyo Cabinet transaction
    for row in UInt32(2)..<1_002 {
        batch.set([UInt8](repeating: 7, count: 40), forKey: withUnsafeBytes(of: row.littleEndian, Array.init), inTable: "Song")
    }
    try backend.commit(batch)
    let skipped = TokyoCabinetYields.importIsSkipped("sched_yield").map { $0 ? "skipped" : "bound" } ?? "none"
    print("\(TokyoCabinetYields.skip()) | slot \(skipped) | \(try table.recordCount) records")
} catch {
    FileHandle.standardError.write(Data("cabinet-test-yields: \(error)\n".utf8))
    exit(1)
}
