/// CRC-32 (IEEE 802.3, the same value as zlib's `crc32`): the checksum of
/// journals and of checksummed records.
///
/// ```swift
/// let crc = bytes.withUnsafeBytes { CRC32.checksum($0) }
/// ```
/// Computed eight bytes at a time ("slicing by 8"): it runs once per record in
/// every save and fetch loop of a checksummed store.
public enum CRC32 {
    /// tables[k * 256 + b]: the CRC of byte b followed by k zero bytes. A pointer
    /// allocated once for the process, not an Array: reading through an Array's
    /// buffer retained and released it on every call.
    // Written once, before any reader can see it, and never again.
    nonisolated(unsafe) private static let tables: UnsafePointer<UInt32> = {
        let tables = UnsafeMutablePointer<UInt32>.allocate(capacity: 8 * 256)
        for index in 0..<256 {
            var value = UInt32(index)
            for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
            tables[index] = value
        }
        for index in 0..<256 {
            for slice in 1..<8 {
                let previous = tables[(slice - 1) * 256 + index]
                tables[slice * 256 + index] = (previous >> 8) ^ tables[Int(previous & 0xFF)]
            }
        }
        return UnsafePointer(tables)
    }()

    public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        let table = tables
        var offset = 0
        let count = bytes.count
        while offset + 8 <= count {
            let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            let low = UInt32(truncatingIfNeeded: word) ^ crc
            let high = UInt32(truncatingIfNeeded: word >> 32)
            crc = table[7 * 256 + Int(low & 0xFF)] ^ table[6 * 256 + Int((low >> 8) & 0xFF)]
                ^ table[5 * 256 + Int((low >> 16) & 0xFF)] ^ table[4 * 256 + Int(low >> 24)]
                ^ table[3 * 256 + Int(high & 0xFF)] ^ table[2 * 256 + Int((high >> 8) & 0xFF)]
                ^ table[1 * 256 + Int((high >> 16) & 0xFF)] ^ table[Int(high >> 24)]
            offset += 8
        }
        if offset + 4 <= count {
            let word = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)) ^ crc
            crc = table[3 * 256 + Int(word & 0xFF)] ^ table[2 * 256 + Int((word >> 8) & 0xFF)]
                ^ table[1 * 256 + Int((word >> 16) & 0xFF)] ^ table[Int(word >> 24)]
            offset += 4
        }
        while offset < count {
            crc = table[Int((crc ^ UInt32(bytes[offset])) & 0xFF)] ^ (crc >> 8)
            offset += 1
        }
        return crc ^ 0xFFFF_FFFF
    }
}
