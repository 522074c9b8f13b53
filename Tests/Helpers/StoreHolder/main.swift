// Opens the store named on the command line (read-only with `read`), says so,
// and holds it until standard input closes: the other process of the locking tests.
import Cabinet
import Foundation

guard CommandLine.arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: cabinet-test-holder STORE [read]\n".utf8))
    exit(2)
}
do {
    let store = try ObjectStore(path: CommandLine.arguments[1], readOnly: CommandLine.arguments.dropFirst(2).first == "read")
    FileHandle.standardOutput.write(Data("locked \(getpid())\n".utf8))
    while readLine() != nil {}
    store.close()
} catch {
    FileHandle.standardOutput.write(Data("error \(error)\n".utf8))
    exit(1)
}
