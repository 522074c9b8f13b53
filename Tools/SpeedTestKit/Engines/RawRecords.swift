import Cabinet
import CabinetStorage

/// The records Cabinet writes for the workloads' songs and playlists, byte for
/// byte as its DataBuffer writes them (a version byte, the fields, a CRC-32),
/// made and read without Cabinet's object layer: what the raw engines
/// (`tc-raw`, `redis-raw`) store and read.
enum RawRecords {
    struct Song {
        var title: String
        var seconds: UInt32
    }

    static func appendUInt32(_ value: UInt32, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    static func songRecord(_ title: String, _ seconds: UInt32, into bytes: inout [UInt8]) {
        bytes.removeAll(keepingCapacity: true)
        bytes.append(1)
        appendUInt32(UInt32(title.utf8.count), to: &bytes)
        bytes.append(contentsOf: title.utf8)
        appendUInt32(seconds, to: &bytes)
        appendChecksum(to: &bytes)
    }

    /// Cabinet's new stores end each record with a CRC-32 of it; so does the floor.
    static func appendChecksum(to bytes: inout [UInt8]) {
        appendUInt32(bytes.withUnsafeBytes { CRC32.checksum($0) }, to: &bytes)
    }

    /// The record without its checksum, which is checked as Cabinet checks it.
    static func verified(_ record: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer {
        guard record.count >= 4 else { throw SpeedTestError("short record") }
        let body = UnsafeRawBufferPointer(rebasing: record[0..<(record.count - 4)])
        guard UInt32(littleEndian: record.loadUnaligned(fromByteOffset: record.count - 4, as: UInt32.self)) == CRC32.checksum(body) else {
            throw SpeedTestError("checksum mismatch")
        }
        return body
    }

    static func decodeSong(_ sealed: UnsafeRawBufferPointer) throws -> Song {
        let record = try verified(sealed)
        guard record.count >= 5 else { throw SpeedTestError("short song record") }
        let count = Int(UInt32(littleEndian: record.loadUnaligned(fromByteOffset: 1, as: UInt32.self)))
        guard record.count >= 9 + count else { throw SpeedTestError("short song record") }
        let title = String(decoding: record[5..<(5 + count)], as: UTF8.self)
        let seconds = UInt32(littleEndian: record.loadUnaligned(fromByteOffset: 5 + count, as: UInt32.self))
        return Song(title: title, seconds: seconds)
    }

    /// The song rows a playlist record (without its checksum) refers to, in order.
    static func playlistSongRows(_ record: UnsafeRawBufferPointer) throws -> [UInt32] {
        guard record.count >= 5 else { throw SpeedTestError("short playlist record") }
        let titleCount = Int(UInt32(littleEndian: record.loadUnaligned(fromByteOffset: 1, as: UInt32.self)))
        guard record.count >= 9 + titleCount else { throw SpeedTestError("short playlist record") }
        let count = Int(UInt32(littleEndian: record.loadUnaligned(fromByteOffset: 5 + titleCount, as: UInt32.self)))
        guard record.count >= 9 + titleCount + 4 * count else { throw SpeedTestError("short playlist record") }
        return (0..<count).map { UInt32(littleEndian: record.loadUnaligned(fromByteOffset: 9 + titleCount + 4 * $0, as: UInt32.self)) }
    }

    /// Playlist `p` of the complex store: its title, then its songs' rows.
    static func playlistRecord(_ p: Int, sizes: Sizes, into bytes: inout [UInt8]) {
        let title = SpeedData.playlistTitle(p)
        bytes.removeAll(keepingCapacity: true)
        bytes.append(1)
        appendUInt32(UInt32(title.utf8.count), to: &bytes)
        bytes.append(contentsOf: title.utf8)
        appendUInt32(UInt32(sizes.playlistSize), to: &bytes)
        for song in sizes.complexPlaylistSongs(p) { appendUInt32(UInt32(song + 2), to: &bytes) }
        appendChecksum(to: &bytes)
    }
}
