import CTokyoCabinet
import Foundation

/// Tokyo Cabinet's C API, straight: to write files as BNRPersistence did and to
/// read back exactly what Cabinet wrote.
enum RawTokyoCabinet {
    static func rowKey(_ rowID: UInt32) -> [UInt8] {
        withUnsafeBytes(of: rowID.littleEndian) { Array($0) }
    }

    /// Writes `records` into a new or existing hash database at `path`.
    static func write(_ path: String, _ records: [([UInt8], [UInt8])]) {
        guard let hdb = tchdbnew() else { fatalError("tchdbnew") }
        defer { tchdbdel(hdb) }
        precondition(tchdbopen(hdb, path, Int32(HDBOWRITER | HDBOCREAT)), "open \(path)")
        for (key, value) in records {
            precondition(tchdbput(hdb, key, Int32(key.count), value, Int32(value.count)), "put")
        }
        precondition(tchdbclose(hdb))
    }

    /// The bucket count in the header of the database at `path`.
    static func bucketCount(_ path: String) -> Int {
        guard let hdb = tchdbnew() else { fatalError("tchdbnew") }
        defer { tchdbdel(hdb) }
        precondition(tchdbopen(hdb, path, Int32(HDBOREADER | HDBONOLCK)), "open \(path)")
        defer { tchdbclose(hdb) }
        return Int(tchdbbnum(hdb))
    }

    /// Every record of the database at `path`.
    static func read(_ path: String) -> [[UInt8]: [UInt8]] {
        guard let hdb = tchdbnew() else { fatalError("tchdbnew") }
        defer { tchdbdel(hdb) }
        precondition(tchdbopen(hdb, path, Int32(HDBOREADER)), "open \(path)")
        var result: [[UInt8]: [UInt8]] = [:]
        _ = tchdbiterinit(hdb)
        var keySize: Int32 = 0
        while let key = tchdbiternext(hdb, &keySize) {
            let keyBytes = Array(UnsafeRawBufferPointer(start: key, count: Int(keySize)))
            var valueSize: Int32 = 0
            if let value = tchdbget(hdb, key, keySize, &valueSize) {
                result[keyBytes] = Array(UnsafeRawBufferPointer(start: value, count: Int(valueSize)))
                free(value)
            }
            free(key)
        }
        _ = tchdbclose(hdb)
        return result
    }
}

/// Runs a command and returns its exit status and standard output.
func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardInput = FileHandle.nullDevice     // a helper that waits for its input to end lets go at once
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// The `cabinet` command, which the tools' own package builds (Tools/; `make test`
/// builds it before the tests): `CABINET_TOOL`, or Tools/.build/debug/cabinet.
var cabinetToolPath: String {
    if let path = ProcessInfo.processInfo.environment["CABINET_TOOL"], !path.isEmpty { return path }
    let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    return repository.path + "/Tools/.build/debug/cabinet"
}

/// The directory of the build products (where the test helper executables are).
var buildProductsDirectory: String {
    let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    var url = URL(fileURLWithPath: executable).deletingLastPathComponent()
    // The test binary lives inside CabinetPackageTests.xctest on some toolchains.
    while url.lastPathComponent.hasSuffix(".xctest") || url.lastPathComponent == "Contents" || url.lastPathComponent == "MacOS" {
        url.deleteLastPathComponent()
    }
    return url.path
}
