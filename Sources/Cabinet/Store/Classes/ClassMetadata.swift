import CabinetStorage

/// Row 1 of every class file: the last row ID handed out, the class version,
/// the class ID used by heterogeneous references, and two salt words.
///
/// Layout (see `docs/FORMAT.md`): UInt32 LE last row ID, UInt8 version, UInt8
/// class ID, then 2 × UInt32 LE salt. BNRPersistence stores older than its
/// encryption support stop after the first 6 bytes; they read with zero salt.
/// In checksummed stores the 14 bytes are followed by their CRC-32, so a
/// damaged last row ID can never make an insert overwrite an object.
struct ClassMetadata: Equatable {
    static let rowID: UInt32 = 1
    static let firstObjectRowID: UInt32 = 2

    var lastRowID: UInt32
    var version: UInt8
    var classID: UInt8
    var salt: (UInt32, UInt32)?
    /// Whether ``bytes`` ends with a CRC-32 (checksummed stores; the 6-byte form never has one).
    var checksummed = false

    static func == (a: ClassMetadata, b: ClassMetadata) -> Bool {
        a.lastRowID == b.lastRowID && a.version == b.version && a.classID == b.classID
            && a.salt?.0 == b.salt?.0 && a.salt?.1 == b.salt?.1
    }

    /// Metadata for a class that has no rows yet.
    static func new(version: UInt8, classID: UInt8) -> ClassMetadata {
        ClassMetadata(lastRowID: ClassMetadata.firstObjectRowID - 1, version: version, classID: classID,
                      salt: (UInt32.random(in: .min ... .max), UInt32.random(in: .min ... .max)))
    }

    init(lastRowID: UInt32, version: UInt8, classID: UInt8, salt: (UInt32, UInt32)?) {
        self.lastRowID = lastRowID
        self.version = version
        self.classID = classID
        self.salt = salt
    }

    /// The length of the checksummed form: 14 bytes and their CRC-32.
    static let checksummedSize = 18

    /// Decodes row 1; throws ``CabinetError/malformedMetadata(_:reason:)`` naming `location`.
    init(bytes: UnsafeRawBufferPointer, location: RecordLocation) throws {
        var buffer = DataBuffer(bytes: bytes)
        guard bytes.count == 6 || bytes.count >= 14 else {
            throw CabinetError.malformedMetadata(location, reason: "it is \(bytes.count) bytes long; expected 6, 14 or 18")
        }
        if bytes.count == ClassMetadata.checksummedSize {
            let stored = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 14, as: UInt32.self))
            let computed = CRC32.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<14]))
            guard stored == computed else {
                throw CabinetError.malformedMetadata(location, reason: "its checksum does not match (stored \(stored), computed \(computed))")
            }
            checksummed = true
        }
        do {
            lastRowID = try buffer.readUInt32()
            version = try buffer.readUInt8()
            classID = try buffer.readUInt8()
            salt = bytes.count >= 14 ? (try buffer.readUInt32(), try buffer.readUInt32()) : nil
        } catch {
            throw CabinetError.malformedMetadata(location, reason: "\(error)")
        }
        guard lastRowID >= ClassMetadata.firstObjectRowID - 1 else {
            throw CabinetError.malformedMetadata(location, reason: "last row ID \(lastRowID) is below the first row ID")
        }
    }

    /// The bytes of row 1. A store that had no salt keeps the 6-byte form.
    var bytes: [UInt8] {
        var buffer = DataBuffer(capacity: 14)
        buffer.writeUInt32(lastRowID)
        buffer.writeUInt8(version)
        buffer.writeUInt8(classID)
        if let salt {
            buffer.writeUInt32(salt.0)
            buffer.writeUInt32(salt.1)
            if checksummed { buffer.appendTrailer(for: .checksummed) }
        }
        return buffer.allBytes
    }
}

extension WriteBatch {
    /// A batch that writes a class's metadata row, and what is added to it.
    init(_ metadata: ClassMetadata, of className: String) {
        self.init()
        let table = table(named: className)
        metadata.bytes.withUnsafeBytes { bytes in
            withUnsafeBytes(of: ClassMetadata.rowID.littleEndian) { set(bytes, forKey: $0, inTable: table) }
        }
    }
}
