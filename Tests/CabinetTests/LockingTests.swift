import Cabinet
import Foundation
import Testing

/// One writer per store, checked with real processes.
@Suite struct LockingTests {
    @Test func aSecondStoreInTheSameProcessIsRefused() throws {
        let directory = try TemporaryDirectory()
        let first = try ObjectStore(path: directory.path)
        #expect(throws: CabinetError.storeLocked(path: directory.path, pid: getpid())) {
            _ = try ObjectStore(path: directory.path)
        }
        first.close()
        let second = try ObjectStore(path: directory.path)   // the lock went with the close
        second.close()
    }

    @Test func anotherProcessHoldingTheStoreIsNamedByItsPID() throws {
        let directory = try TemporaryDirectory()
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: buildProductsDirectory + "/cabinet-test-holder")
        holder.arguments = [directory.path]
        let input = Pipe(), output = Pipe()
        holder.standardInput = input
        holder.standardOutput = output
        try holder.run()
        let line = String(decoding: output.fileHandleForReading.availableLine(), as: UTF8.self)
        #expect(line == "locked \(holder.processIdentifier)")

        #expect(throws: CabinetError.storeLocked(path: directory.path, pid: holder.processIdentifier)) {
            _ = try ObjectStore(path: directory.path)
        }
        let message = "\(CabinetError.storeLocked(path: directory.path, pid: holder.processIdentifier))"
        #expect(message.contains("process \(holder.processIdentifier)"))

        kill(holder.processIdentifier, SIGKILL)     // a crashed holder leaves no stale lock
        holder.waitUntilExit()
        let store = try ObjectStore(path: directory.path)
        store.close()
    }
}

extension FileHandle {
    /// Reads up to the first newline (without it).
    func availableLine() -> Data {
        var line = Data()
        while true {
            let byte = readData(ofLength: 1)
            if byte.isEmpty || byte == Data("\n".utf8) { return line }
            line.append(byte)
        }
    }
}
