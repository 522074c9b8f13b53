@testable import Cabinet
@testable import CabinetStorage
import CTokyoCabinet
import Foundation
import Testing

/// The scan that reads Tokyo Cabinet's file directly must deliver exactly what
/// Tokyo Cabinet's own `tchdbforeach` delivers, in the same order, and must
/// turn damage into errors, never into reads out of bounds.
@Suite struct TokyoCabinetFileScanTests {
    typealias Record = (key: [UInt8], value: [UInt8])

    /// Opens (creating) a hash database with the given tuning; the caller closes it.
    private func openDatabase(_ path: String, alignmentPower: Int8 = 2, options: UInt8 = 0, writer: Bool = true) -> UnsafeMutablePointer<TCHDB> {
        let hdb = tchdbnew()!
        _ = tchdbtune(hdb, 31, alignmentPower, 4, options)
        let mode = writer ? Int32(HDBOWRITER | HDBOCREAT) : Int32(HDBOREADER)
        precondition(tchdbopen(hdb, path, mode), "open \(path)")
        return hdb
    }

    private func close(_ hdb: UnsafeMutablePointer<TCHDB>) {
        _ = tchdbclose(hdb)
        tchdbdel(hdb)
    }

    /// Tokyo Cabinet's own scan of the open database.
    private func tokyoCabinetScan(_ hdb: UnsafeMutablePointer<TCHDB>) -> [Record] {
        final class Box { var records: [Record] = [] }
        let box = Box()
        _ = tchdbforeach(hdb, { key, keySize, value, valueSize, op in
            let box = Unmanaged<Box>.fromOpaque(op!).takeUnretainedValue()
            box.records.append((Array(UnsafeRawBufferPointer(start: key, count: Int(keySize))),
                                Array(UnsafeRawBufferPointer(start: value, count: Int(valueSize)))))
            return true
        }, Unmanaged.passUnretained(box).toOpaque())
        return box.records
    }

    private func fileScan(_ hdb: UnsafeMutablePointer<TCHDB>, path: String) throws -> (TokyoCabinetFileScan.Outcome, [Record]) {
        var records: [Record] = []
        let outcome = try TokyoCabinetFileScan.forEach(hdb, path: path) { key, value in
            records.append((Array(key), Array(value)))
            return true
        }
        return (outcome, records)
    }

    private func expectSame(_ a: [Record], _ b: [Record], _ comment: Comment) {
        #expect(a.count == b.count, comment)
        #expect(a.map(\.key) == b.map(\.key), comment)
        #expect(zip(a, b).allSatisfy { $0.value == $1.value }, comment)
    }

    /// Sizes on each side of the variable-length size's byte boundaries (1, 2, 3 bytes).
    static let sizes = [0, 1, 2, 126, 127, 128, 129, 255, 1000, 16_383, 16_384, 16_385, 70_000]

    /// Puts, overwrites that grow (the record moves, leaving a free block) and
    /// shrink (it stays, with more padding), and deletes.
    private func fill(_ hdb: UnsafeMutablePointer<TCHDB>) {
        var generator = SystemRandomNumberGenerator()
        for (index, size) in Self.sizes.enumerated() {
            let key = Array("key \(index)".utf8) + [UInt8](repeating: UInt8(index), count: Self.sizes[(index * 5) % Self.sizes.count] % 300)
            let value = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
            precondition(tchdbput(hdb, key, Int32(key.count), value, Int32(value.count)))
        }
        for row in UInt32(2)..<3_000 {
            var key = row.littleEndian
            let value = [UInt8](repeating: UInt8(truncatingIfNeeded: row), count: Int(row % 40))
            precondition(tchdbput(hdb, &key, 4, value, Int32(value.count)))
        }
        for row in stride(from: UInt32(2), to: 3_000, by: 7) {
            var key = row.littleEndian
            _ = tchdbout(hdb, &key, 4)
        }
        for row in stride(from: UInt32(3), to: 3_000, by: 11) {
            var key = row.littleEndian
            let value = [UInt8](repeating: 0xEE, count: row % 2 == 0 ? 300 : 1)
            precondition(tchdbput(hdb, &key, 4, value, Int32(value.count)))
        }
    }

    /// A filled database file named "Scan", closed, and where its record region starts.
    private func filledClosedFile() throws -> (TemporaryDirectory, firstRecord: Int) {
        let directory = try TemporaryDirectory()
        let hdb = openDatabase(directory.path + "/Scan")
        fill(hdb)
        let firstRecord = Int(hdb.pointee.frec)
        close(hdb)
        return (directory, firstRecord)
    }

    @Test(arguments: [(Int8(2), UInt8(0)), (Int8(4), UInt8(0)), (Int8(0), UInt8(0)), (Int8(4), UInt8(HDBTLARGE))])
    func readsWhatTokyoCabinetsOwnScanReadsInTheSameOrder(_ tuning: (Int8, UInt8)) throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/Scan"
        let hdb = openDatabase(path, alignmentPower: tuning.0, options: tuning.1)
        fill(hdb)
        // Still open: the header on disk is stale, the handle knows the real size.
        let (outcome, records) = try fileScan(hdb, path: path)
        #expect(outcome == .finished)
        let expected = tokyoCabinetScan(hdb)
        #expect(expected.count == Int(tchdbrnum(hdb)))
        expectSame(records, expected, "open for writing, tuning \(tuning)")
        close(hdb)

        let reader = openDatabase(path, writer: false)
        defer { close(reader) }
        let (reopenedOutcome, reopened) = try fileScan(reader, path: path)
        #expect(reopenedOutcome == .finished)
        expectSame(reopened, expected, "reopened to read, tuning \(tuning)")
    }

    @Test func stopsWhenTheBodySaysSo() throws {
        let directory = try TemporaryDirectory()
        let hdb = openDatabase(directory.path + "/Scan")
        defer { close(hdb) }
        fill(hdb)
        var seen = 0
        let outcome = try TokyoCabinetFileScan.forEach(hdb, path: "Scan") { _, _ in
            seen += 1
            return seen < 10
        }
        #expect(outcome == .stopped)
        #expect(seen == 10)
    }

    @Test func aTransactionInProgressIsLeftToTokyoCabinet() throws {
        let directory = try TemporaryDirectory()
        let hdb = openDatabase(directory.path + "/Scan")
        defer { close(hdb) }
        fill(hdb)
        #expect(tchdbtranbegin(hdb))
        #expect(try fileScan(hdb, path: "Scan").0 == .unsupported)
        #expect(tchdbtranabort(hdb))
        #expect(try fileScan(hdb, path: "Scan").0 == .finished)
    }

    @Test func theByteOrderIsToldByTheBucketCountAndAnAmbiguousHeaderIsNotGuessed() {
        var header = [UInt8](repeating: 0, count: 64)
        header[47] = 7                                        // 7, big-endian, at offset 40
        header.withUnsafeBytes { #expect(TokyoCabinetFileScan.byteOrderIsBigEndian($0, bucketCount: 7) == true) }
        header[47] = 0; header[40] = 7                        // 7, little-endian
        header.withUnsafeBytes { #expect(TokyoCabinetFileScan.byteOrderIsBigEndian($0, bucketCount: 7) == false) }
        header.withUnsafeBytes { #expect(TokyoCabinetFileScan.byteOrderIsBigEndian($0, bucketCount: 8) == nil) }
        header[40] = 1; header[47] = 1                        // reads the same both ways
        header.withUnsafeBytes { #expect(TokyoCabinetFileScan.byteOrderIsBigEndian($0, bucketCount: 0x0100_0000_0000_0001) == nil) }
    }

    @Test func aDamagedBlockHeaderIsAnErrorNamingTheFileAndOffset() throws {
        let (directory, firstRecord) = try filledClosedFile()
        let path = directory.path + "/Scan"
        let file = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try file.seek(toOffset: UInt64(firstRecord))
        try file.write(contentsOf: [0x41])
        try file.close()

        let reader = openDatabase(path, writer: false)
        defer { close(reader) }
        let error = expectCabinetError({ _ = try fileScan(reader, path: path) }) {
            guard $0.code == .backendFailure, $0.operation == "iterate", $0.underlying?.domain == .tokyoCabinet,
                  let location = $0.location, let message = $0.underlying?.message else { return false }
            return location.file == path && message.contains("offset \(firstRecord)")
        }
        #expect(error != nil)
    }

    /// Random damage anywhere in the record region: every scan ends, with the
    /// records it could read or with an error, and nothing reads out of bounds.
    @Test func randomDamageEndsInRecordsOrAnErrorNeverACrash() throws {
        let (directory, firstRecord) = try filledClosedFile()
        let path = directory.path + "/Scan"
        let pristine = try Data(contentsOf: URL(fileURLWithPath: path))
        var generator = SystemRandomNumberGenerator()
        var errors = 0
        for round in 0..<300 {
            var damaged = pristine
            for _ in 0..<(1 + round % 8) {
                let at = Int.random(in: firstRecord..<damaged.count, using: &generator)
                damaged[at] = UInt8.random(in: 0...255, using: &generator)
            }
            try damaged.write(to: URL(fileURLWithPath: path))
            let reader = openDatabase(path, writer: false)
            do {
                let (outcome, records) = try fileScan(reader, path: path)
                #expect(outcome == .finished)
                #expect(records.allSatisfy { $0.key.count + $0.value.count < damaged.count })
            } catch let error as CabinetError {
                if error.code == .backendFailure, error.operation == "iterate" { errors += 1 } else { Issue.record("unexpected \(error)") }
            }
            close(reader)
        }
        #expect(errors > 0, "some of the damage hit block headers")
    }
}
