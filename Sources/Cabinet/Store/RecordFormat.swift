import CabinetStorage

/// How object records and named buffers are laid out in a store's files.
///
/// New stores are `checksummed`; BNRPersistence stores (and any store that
/// existed before Cabinet wrote a format marker) are `plain`. The choice is
/// recorded in the store's format marker (a Tokyo Cabinet store's
/// `.cabinet-format`) and never changes for a store. See `docs/FORMAT.md`.
///
/// ```swift
/// // A new store that BNRPersistence itself can read:
/// let store = try ObjectStore(path: "/tmp/legacy", options: .init(recordFormat: .plain))
/// ```
public enum RecordFormat: String, Sendable, Equatable {
    /// BNRPersistence's layout, byte for byte.
    case plain
    /// BNRPersistence's layout followed by a CRC-32 of the record's bytes
    /// (UInt32, little-endian): damage inside a record is detected when it is read.
    case checksummed

    /// The bytes a record carries after its content.
    var trailerSize: Int { self == .checksummed ? 4 : 0 }

    /// The text of the format marker file.
    var marker: String { "cabinet-record-format \(rawValue)\n" }

    init?(marker: String) {
        let words = marker.split(whereSeparator: \.isWhitespace)
        guard words.count == 2, words[0] == "cabinet-record-format", let format = RecordFormat(rawValue: String(words[1])) else {
            return nil
        }
        self = format
    }
}

extension DataBuffer {
    /// Appends the checksum trailer of `format` over everything written so far.
    mutating func appendTrailer(for format: RecordFormat) {
        guard format == .checksummed else { return }
        let crc = withUnsafeBytes { CRC32.checksum($0) }
        writeUInt32(crc)
    }

    /// Checks and removes the checksum trailer of `format` from a record just loaded.
    mutating func removeTrailer(for format: RecordFormat) throws {
        guard format == .checksummed else { return }
        guard writerIndex >= 4 else {
            throw CabinetError.checksumMismatch(location, reason: "the record is \(writerIndex) bytes, too short for its checksum")
        }
        let body = writerIndex - 4
        let (stored, computed) = withUnsafeBytes { all in
            (UInt32(littleEndian: all.loadUnaligned(fromByteOffset: body, as: UInt32.self)),
             CRC32.checksum(UnsafeRawBufferPointer(rebasing: all[0..<body])))
        }
        guard stored == computed else {
            throw CabinetError.checksumMismatch(location, reason: "stored checksum \(stored), computed \(computed)")
        }
        writerIndex = body
    }
}

extension RecordFormat {
    /// The format of the store behind `backend`, from its marker; `nil` for a
    /// store with no tables and no marker (a new one). A store with tables but no
    /// marker is BNRPersistence's, read as plain, unless it cannot be:
    ///
    /// - its records end in their own CRC-32: a checksummed store that lost its
    ///   marker (read as plain, every record would carry four bytes of garbage);
    /// - it has a catalog (Cabinet wrote to it) and its records do not tell: none
    ///   sampled, or some ending in their CRC-32 and some not.
    ///
    /// A catalog beside records that carry no checksum is a BNRPersistence store a
    /// writer of an older Cabinet saved to without writing the marker: plain.
    /// Only object records and named buffers are sampled (index files carry
    /// entries without a trailer). See docs/FORMAT.md, "The catalog".
    static func stored(in backend: any StorageBackend) throws -> RecordFormat? {
        try stored(in: backend, marker: backend.services.readFormatMarker())
    }

    /// ``stored(in:)`` given the marker's text (`nil`: no marker), for a caller
    /// that has read it already: an open reads the marker file once.
    static func stored(in backend: any StorageBackend, marker: String?) throws -> RecordFormat? {
        if let marker {
            guard let format = RecordFormat(marker: marker) else {
                throw CabinetError.unsupportedFormat(path: backend.path, reason: "its format marker says '\(marker.trimmingCharacters(in: .whitespacesAndNewlines))', which this version of Cabinet does not know")
            }
            return format
        }
        guard try !backend.tableNames().isEmpty else { return nil }
        let marker = backend.services.formatMarkerLocation
        let sample = try ObjectStore.sampleTrailers(backend)
        if sample.records > 0 && sample.checksummed == sample.records {
            throw CabinetError.unsupportedFormat(path: backend.path, reason: "its format marker (\(marker)) is missing, but its records carry checksums; restore the marker from a backup, or write the line 'cabinet-record-format checksummed' to it")
        }
        if try backend.services.readCatalog() != nil && (sample.records == 0 || sample.checksummed > 0) {
            throw CabinetError.unsupportedFormat(path: backend.path, reason: "its format marker (\(marker)) is missing, though Cabinet wrote the store (it has a catalog), and its records do not show which format it has; restore the marker from a backup, or write the line 'cabinet-record-format plain' (a BNRPersistence store) or 'cabinet-record-format checksummed' to it")
        }
        return .plain
    }
}

extension ObjectStore {
    /// The format of the store behind `backend` (see ``RecordFormat/stored(in:)``);
    /// for a new store, what was asked (checksummed by default), recorded in a new marker.
    /// A writer that finds a store without a marker (BNRPersistence's) writes the
    /// plain marker before anything else, so that the catalog and files it adds
    /// never make the next open take the store for one that lost its marker.
    static func recordFormat(of backend: any StorageBackend, asked: RecordFormat?) throws -> RecordFormat {
        let marker = try backend.services.readFormatMarker()
        if let format = try RecordFormat.stored(in: backend, marker: marker) {
            let hasMarker = marker != nil
            if let asked, asked != format {
                let reason = hasMarker
                    ? "it is a \(format.rawValue) store, not \(asked.rawValue)"
                    : "it has no format marker, so it is a plain (BNRPersistence) store, not \(asked.rawValue)"
                throw CabinetError.unsupportedFormat(path: backend.path, reason: reason)
            }
            if !hasMarker && !backend.services.isReadOnly {
                try backend.services.writeFormatMarker(format.marker)
            }
            return format
        }
        let format = asked ?? .checksummed
        try backend.services.writeFormatMarker(format.marker)
        return format
    }
}

extension ObjectStore {
    /// How many records of each table ``recordsCarryChecksums(_:)`` looks at.
    static let formatSampleSize = 16

    /// How many records were sampled from the store's object tables and named
    /// buffers (up to ``formatSampleSize`` from each), and how many of them end
    /// with the CRC-32 of the bytes before them. Plain records do so by chance
    /// once in four billion.
    static func sampleTrailers(_ backend: any StorageBackend) throws -> (records: Int, checksummed: Int) {
        var sampled = 0, checksummed = 0
        for name in try backend.tableNames() where !name.hasSuffix(ClassIndexes.suffix) {
            var seen = 0
            try backend.openTable(named: name).forEach { key, value in
                // The metadata row of older stores has no trailer: leave it out.
                if key.count == 4 && key.loadUnaligned(as: UInt32.self) == ClassMetadata.rowID.littleEndian { return true }
                seen += 1
                sampled += 1
                if value.count >= 4 {
                    let stored = UInt32(littleEndian: value.loadUnaligned(fromByteOffset: value.count - 4, as: UInt32.self))
                    if stored == CRC32.checksum(UnsafeRawBufferPointer(rebasing: value[0..<(value.count - 4)])) { checksummed += 1 }
                }
                return seen < formatSampleSize
            }
        }
        return (sampled, checksummed)
    }
}
