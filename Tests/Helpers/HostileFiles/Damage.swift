// The ways a round damages one file, from a seeded generator so that a round
// can be replayed: `cabinet-hostile-files replay SEED KIND ROUND`.
import Foundation

/// SplitMix64: small, fast, and the same on every machine.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

enum Damage: CaseIterable {
    case bitFlips, zeroRun, onesRun, randomRun, truncation, splice

    /// Damages `bytes` and says how, for the report.
    func apply(to bytes: inout [UInt8], _ random: inout SeededGenerator) -> String {
        guard !bytes.isEmpty else { return "empty file left as it is" }
        let offset = Int.random(in: 0..<bytes.count, using: &random)
        switch self {
        case .bitFlips:
            let flips = Int.random(in: 1...8, using: &random)
            var at: [Int] = []
            for _ in 0..<flips {
                let position = Int.random(in: 0..<bytes.count, using: &random)
                bytes[position] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &random)
                at.append(position)
            }
            return "bits flipped at \(at)"
        case .zeroRun, .onesRun, .randomRun:
            let length = min(Int.random(in: 1...512, using: &random), bytes.count - offset)
            for i in offset..<(offset + length) {
                bytes[i] = self == .zeroRun ? 0 : self == .onesRun ? 0xff : UInt8.random(in: 0...255, using: &random)
            }
            return "\(length) bytes of \(self == .zeroRun ? "0x00" : self == .onesRun ? "0xff" : "random") at \(offset)"
        case .truncation:
            bytes.removeSubrange(offset...)
            return "cut to \(offset) bytes"
        case .splice:
            let length = min(Int.random(in: 4...256, using: &random), bytes.count - offset)
            let target = Int.random(in: 0..<bytes.count, using: &random)
            let chunk = Array(bytes[offset..<(offset + length)])
            for (i, byte) in chunk.enumerated() where target + i < bytes.count { bytes[target + i] = byte }
            return "\(length) bytes from \(offset) copied to \(target)"
        }
    }
}
