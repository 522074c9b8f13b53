@testable import CabinetStorage
import Foundation
import Testing

/// Item 9's campaign in small: a store of every kind of file, damaged one file
/// at a time (bits flipped, bytes zeroed or set, runs of 0xFF, a cut, a splice
/// from elsewhere in the file) with a fixed seed, then read every way an app
/// and `cabinet info`/`verify` read it by `cabinet-test-hostile-reader`, in a
/// process of its own: each read must end in a value or a `CabinetError`.
/// A process that dies fails the test, naming the damage; the other stores are
/// read on in a new process. `CABINET_CORRUPTION_ROUNDS` sets the rounds.
@Suite struct CorruptionLoopTests {
    static let rounds = Int(ProcessInfo.processInfo.environment["CABINET_CORRUPTION_ROUNDS"] ?? "") ?? 240
    /// Stores copied, damaged and read per process: a few megabytes each.
    static let batch = 24

    @Test func everyDamagedStoreReadsToAValueOrAnErrorAndNoProcessDies() throws {
        let helper = buildProductsDirectory + "/cabinet-test-hostile-reader"
        let work = try TemporaryDirectory()
        let original = work.path + "/original"
        let made = try run(helper, ["make", original])
        try #require(made.status == 0, "\(made.output)")
        let files = try FileManager.default.contentsOfDirectory(atPath: original).filter { !$0.hasPrefix(".") }.sorted()
        var random = SeededRandom(0x9_2026)
        var crashes: [String] = []
        var outcomes: [String: Int] = [:]
        for first in stride(from: 0, to: Self.rounds, by: Self.batch) {
            var damages: [String: String] = [:]
            var copies: [String] = []
            for round in first..<min(first + Self.batch, Self.rounds) {
                let copy = work.path + "/round-\(round)"
                try FileManager.default.copyItem(atPath: original, toPath: copy)
                let name = files[Int(random.next() % UInt64(files.count))]
                let path = copy + "/" + name
                var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
                damages[copy] = "round \(round), \(name): " + damage(&bytes, &random)
                try Data(bytes).write(to: URL(fileURLWithPath: path))
                copies.append(copy)
            }
            var remaining = copies[...]
            while !remaining.isEmpty {
                let result = try run(helper, ["read"] + remaining)
                var started: String?
                var finished = 0
                for line in result.output.split(separator: "\n") {
                    let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
                    guard parts.count == 2, damages[parts[0]] != nil else { continue }
                    if parts[1] == "start" { started = parts[0] } else { finished += 1; outcomes[parts[1], default: 0] += 1 }
                    if parts[1].hasPrefix("other") { crashes.append("\(damages[parts[0]]!): not a CabinetError: \(parts[1])") }
                }
                if result.status == 0 && finished == remaining.count { break }
                guard let started else {
                    crashes.append("the reader ended with status \(result.status) before reading: \(result.output.suffix(500))")
                    break
                }
                crashes.append("\(damages[started]!): the reader died (status \(result.status)): \(result.output.suffix(400))")
                remaining = remaining.drop { $0 != started }.dropFirst()
            }
            for copy in copies { try? FileManager.default.removeItem(atPath: copy) }
        }
        #expect(crashes.isEmpty, "\(crashes.count) of \(Self.rounds) rounds:\n\(crashes.joined(separator: "\n"))")
        #expect(outcomes.values.reduce(0, +) >= Self.rounds - crashes.count)
        #expect(outcomes["ok", default: 0] > 0 && outcomes.count > 1, "both clean reads and errors: \(outcomes)")
    }

    /// Damages `bytes` one way, mostly in the records (past the header and the
    /// bucket array, which take most of a small file); says what it did.
    private func damage(_ bytes: inout [UInt8], _ random: inout SeededRandom) -> String {
        let firstRecord = bytes.withUnsafeBytes { file in
            (TokyoCabinetHashHeader(head: file, order: .bigEndian, fileSize: file.count)
                ?? TokyoCabinetHashHeader(head: file, order: .littleEndian, fileSize: file.count)).map { Int($0.firstRecord) }
        } ?? 256
        let count = bytes.count
        func place(_ length: Int) -> Int {
            let start = random.next() % 4 == 0 || firstRecord >= count ? 64 : firstRecord
            return start + Int(random.next() % UInt64(max(count - start - length, 1)))
        }
        switch random.next() % 6 {
        case 0:
            let at = place(1), bits = 1 + Int(random.next() % 8)
            for _ in 0..<bits { bytes[at + Int(random.next() % 4) % (count - at)] ^= 1 << UInt8(random.next() % 8) }
            return "\(bits) bits flipped at \(at)"
        case 1:
            let length = 1 + Int(random.next() % 64), at = place(length)
            for index in at..<min(at + length, count) { bytes[index] = 0 }
            return "\(length) zero bytes at \(at)"
        case 2:
            let length = 1 + Int(random.next() % 16), at = place(length)
            for index in at..<min(at + length, count) { bytes[index] = UInt8(truncatingIfNeeded: random.next()) }
            return "\(length) random bytes at \(at)"
        case 3:
            let at = place(8)
            for index in at..<min(at + 8, count) { bytes[index] = 0xFF }
            return "8 bytes of 0xff at \(at)"
        case 4:
            let at = place(1)
            bytes.removeLast(count - at)
            return "cut to \(at) bytes"
        default:
            let length = 16 + Int(random.next() % 200), from = place(length), to = place(length)
            let chunk = Array(bytes[from..<min(from + length, count)])
            bytes.replaceSubrange(to..<min(to + chunk.count, count), with: chunk.prefix(count - to))
            return "\(chunk.count) bytes from \(from) spliced at \(to)"
        }
    }
}
