import Cabinet
import CabinetStorage
import CTokyoCabinet
import Foundation

/// The floor for writes (for scans, Cabinet reads the file itself and can be
/// faster than this API): the same records Cabinet writes (4-byte row keys, a
/// version byte, the same field bytes), written and read through Tokyo
/// Cabinet's C API directly, in one transaction per file as Cabinet saves.
public enum RawTokyoCabinetEngine: Engine {
    public static let name = "tc-raw"
    public static let summary = "Tokyo Cabinet's C API with Cabinet's record bytes, no object layer"

    typealias Song = RawRecords.Song

    /// One open hash database.
    final class File {
        let hdb: UnsafeMutablePointer<TCHDB>
        let path: String

        /// Opens `path`; a new file gets the tuning Cabinet's files end up with
        /// (a bucket per two expected records, 4-byte alignment), so only the object layer differs.
        init(_ path: String, expectedRecords: Int = 0) throws {
            // The same library as Cabinet's, with its debugging yields skipped as Cabinet skips them.
            TokyoCabinetYields.skip()
            guard let hdb = tchdbnew() else { throw SpeedTestError("tchdbnew failed") }
            self.hdb = hdb
            self.path = path
            tchdbtune(hdb, Int64(max(131_071, expectedRecords / 2)), 2, 10, 0)
            tchdbsetxmsiz(hdb, 1 << 30)
            let sync = Durability.sync ? Int32(HDBOTSYNC) : 0
            guard tchdbopen(hdb, path, Int32(HDBOREADER | HDBOWRITER | HDBOCREAT) | sync) else {
                throw failure("open")
            }
        }

        deinit {
            tchdbclose(hdb)
            tchdbdel(hdb)
        }

        func failure(_ operation: String) -> SpeedTestError {
            SpeedTestError("\(operation) \(path): \(String(cString: tchdberrmsg(tchdbecode(hdb))))")
        }

        func put(_ rowID: UInt32, _ bytes: [UInt8]) throws {
            var key = rowID.littleEndian
            guard tchdbput(hdb, &key, 4, bytes, Int32(bytes.count)) else { throw failure("put") }
        }

        func transaction(_ body: () throws -> Void) throws {
            guard tchdbtranbegin(hdb) else { throw failure("begin") }
            do { try body() } catch { tchdbtranabort(hdb); throw error }
            guard tchdbtrancommit(hdb) else { throw failure("commit") }
        }

        /// Calls `body` with every record but the metadata row, through tchdbforeach (TC's fastest scan).
        func forEach(_ body: (UInt32, UnsafeRawBufferPointer) throws -> Void) throws {
            typealias Body = (UInt32, UnsafeRawBufferPointer) throws -> Void
            var failure: (any Error)?
            try withoutActuallyEscaping(body) { body in
                var context: (Body, UnsafeMutablePointer<(any Error)?>)? = nil
                try withUnsafeMutablePointer(to: &failure) { failurePointer in
                    context = (body, failurePointer)
                    _ = withUnsafeMutablePointer(to: &context) { pointer in
                        tchdbforeach(hdb, { key, keySize, value, valueSize, op in
                            guard let op, keySize == 4, let key,
                                  let (body, failure) = op.assumingMemoryBound(to: (Body, UnsafeMutablePointer<(any Error)?>)?.self).pointee
                            else { return false }
                            let rowID = UInt32(littleEndian: key.loadUnaligned(as: UInt32.self))
                            if rowID == 1 { return true }
                            do {
                                try body(rowID, UnsafeRawBufferPointer(start: value, count: Int(valueSize)))
                                return true
                            } catch {
                                failure.pointee = error
                                return false
                            }
                        }, pointer)
                    }
                    if let error = failurePointer.pointee { throw error }
                }
            }
        }

        func get(_ rowID: UInt32, into buffer: inout [UInt8]) throws -> UnsafeRawBufferPointer {
            var key = rowID.littleEndian
            let size = buffer.withUnsafeMutableBytes { tchdbget3(hdb, &key, 4, $0.baseAddress, Int32($0.count)) }
            guard size >= 0, Int(size) < buffer.count else { throw failure("get \(rowID)") }
            return buffer.withUnsafeBytes { UnsafeRawBufferPointer(rebasing: $0[0..<Int(size)]) }
        }
    }

    static func insertSongs(_ count: Int, title: (Int) -> String, into file: File, outcome: inout Outcome) throws {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64)
        for i in 0..<count {
            RawRecords.songRecord(title(i), UInt32(i), into: &bytes)
            try file.put(UInt32(i + 2), bytes)
            outcome.add(UInt64(i))
        }
    }

    public static func run(_ workload: Workload, sizes: Sizes, directory: String) throws -> Outcome {
        try FileManager.default.createDirectory(atPath: directory + "/tc-raw", withIntermediateDirectories: true)
        let expectedSongs = workload == .simpleInsert ? sizes.songs : workload == .complexInsert ? sizes.complexSongs : 0
        let songs = try File(directory + "/tc-raw/Song", expectedRecords: expectedSongs)
        var outcome = Outcome()
        switch workload {
        case .simpleInsert:
            try songs.transaction {
                try insertSongs(sizes.songs, title: { _ in SpeedData.simpleTitle }, into: songs, outcome: &outcome)
            }
        case .simpleFetch:
            var all: [Song] = []
            all.reserveCapacity(Int(tchdbrnum(songs.hdb)))
            try songs.forEach { _, record in all.append(try RawRecords.decodeSong(record)) }
            for song in all { outcome.add(UInt64(song.seconds) &+ UInt64(song.title.utf8.count)) }
        case .simpleEnumerate:
            try songs.forEach { _, record in
                let song = try RawRecords.decodeSong(record)
                outcome.add(UInt64(song.seconds) &+ UInt64(song.title.utf8.count))
            }
        case .simpleUpdate:
            var changed: [(UInt32, Song)] = []
            try songs.forEach { rowID, record in
                var song = try RawRecords.decodeSong(record)
                if song.seconds % 3 == 0 {
                    song.title = SpeedData.updatedTitle(Int(song.seconds))
                    changed.append((rowID, song))
                }
            }
            var bytes: [UInt8] = []
            try songs.transaction {
                for (rowID, song) in changed {
                    RawRecords.songRecord(song.title, song.seconds, into: &bytes)
                    try songs.put(rowID, bytes)
                    outcome.add(stableHash(song.title))
                }
            }
        case .complexInsert:
            let lists = try File(directory + "/tc-raw/Playlist", expectedRecords: sizes.playlists)
            try songs.transaction {
                try insertSongs(sizes.complexSongs, title: SpeedData.complexTitle, into: songs, outcome: &outcome)
            }
            var bytes: [UInt8] = []
            try lists.transaction {
                for p in 0..<sizes.playlists {
                    RawRecords.playlistRecord(p, sizes: sizes, into: &bytes)
                    try lists.put(UInt32(p + 2), bytes)
                    outcome.add(UInt64(p))
                }
            }
        case .complexFetch:
            let lists = try File(directory + "/tc-raw/Playlist")
            var scratch = [UInt8](repeating: 0, count: 4096)
            try lists.forEach { _, sealed in
                let record = try RawRecords.verified(sealed)
                guard record.count >= 5 else { throw SpeedTestError("short playlist record") }
                let titleCount = Int(UInt32(littleEndian: record.loadUnaligned(fromByteOffset: 1, as: UInt32.self)))
                let first = 5 + titleCount + 4
                guard record.count >= first + 4 else { throw SpeedTestError("empty playlist") }
                let songRow = UInt32(littleEndian: record.loadUnaligned(fromByteOffset: first, as: UInt32.self))
                let song = try RawRecords.decodeSong(try songs.get(songRow, into: &scratch))
                outcome.add(stableHash(song.title))
            }
        case .complexFaults:
            let lists = try File(directory + "/tc-raw/Playlist")
            var scratch = [UInt8](repeating: 0, count: 4096)
            try lists.forEach { _, sealed in
                for songRow in try RawRecords.playlistSongRows(try RawRecords.verified(sealed)) {
                    outcome.add(stableHash(try RawRecords.decodeSong(try songs.get(songRow, into: &scratch)).title))
                }
            }
        case .namedBuffer:
            let buffers = try File(directory + "/tc-raw/NamedBuffers")
            var bytes: [UInt8] = []
            bytes.reserveCapacity(4 + 4 * sizes.bufferReferences)
            RawRecords.appendUInt32(UInt32(sizes.bufferReferences), to: &bytes)
            for i in 0..<sizes.bufferReferences { RawRecords.appendUInt32(UInt32(i + 2), to: &bytes) }
            RawRecords.appendChecksum(to: &bytes)
            let name = Array(SpeedData.bufferName.utf8)
            try buffers.transaction {
                guard tchdbput(buffers.hdb, name, Int32(name.count), bytes, Int32(bytes.count)) else { throw buffers.failure("put") }
            }
            var size: Int32 = 0
            guard let value = tchdbget(buffers.hdb, name, Int32(name.count), &size) else { throw buffers.failure("get") }
            defer { free(value) }
            let record = try RawRecords.verified(UnsafeRawBufferPointer(start: value, count: Int(size)))
            let count = Int(UInt32(littleEndian: record.loadUnaligned(as: UInt32.self)))
            guard record.count >= 4 + 4 * count else { throw SpeedTestError("short named buffer") }
            for i in 0..<count {
                let rowID = UInt32(littleEndian: record.loadUnaligned(fromByteOffset: 4 + 4 * i, as: UInt32.self))
                outcome.add(UInt64(rowID - 2))
            }
        case .indexedInsert, .indexedEqual, .indexedRange, .fulltext, .inverse, .observeObjects, .observeQueries, .observeIdle:
            throw SpeedTestError.unsupported(workload, by: name)
        }
        return outcome
    }
}
