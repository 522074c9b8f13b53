import CabinetStorage

/// Row 1 of every class file: the last row ID handed out, the class version,
/// the class ID used by heterogeneous references, two salt words, and the
/// layout fingerprints of the versions the class wrote.
///
/// Layout (see `docs/FORMAT.md`): UInt32 LE last row ID, UInt8 version, UInt8
/// class ID, then 2 × UInt32 LE salt. BNRPersistence stores older than its
/// encryption support stop after the first 6 bytes; they read with zero salt.
/// Then, if the class has layout fingerprints, their count (UInt8) and each
/// as version (UInt8) and fingerprint (UInt32 LE), versions ascending:
/// BNRPersistence reads the first 14 bytes and ignores the rest. In checksummed
/// stores the row ends with the CRC-32 of every byte before it, so a damaged
/// last row ID can never make an insert overwrite an object.
struct ClassMetadata: Equatable {
    static let rowID: UInt32 = 1
    static let firstObjectRowID: UInt32 = 2

    var lastRowID: UInt32
    var version: UInt8
    var classID: UInt8
    var salt: (UInt32, UInt32)?
    /// The fingerprint of each version's record layout, as `StoredObject.layoutFingerprints` gave them
    /// (ClassLayoutCheck.swift checks them); empty for a class that has none, and in a 6-byte row, which has no room.
    var layouts: [UInt8: UInt32] = [:]
    /// Whether ``bytes`` ends with a CRC-32 (checksummed stores; the 6-byte form never has one).
    var checksummed = false

    static func == (a: ClassMetadata, b: ClassMetadata) -> Bool {
        a.lastRowID == b.lastRowID && a.version == b.version && a.classID == b.classID
            && a.salt?.0 == b.salt?.0 && a.salt?.1 == b.salt?.1 && a.layouts == b.layouts
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

    /// The length of the checksummed form without fingerprints: 14 bytes and their CRC-32.
    static let checksummedSize = 18
    /// The bytes before the fingerprints: last row ID, version, class ID, salt.
    static let fixedSize = 14

    /// Decodes row 1; throws ``CabinetError/malformedMetadata(_:reason:)`` naming `location`.
    init(bytes: UnsafeRawBufferPointer, location: RecordLocation) throws {
        let count = bytes.count
        guard count == 6 || count >= ClassMetadata.fixedSize else {
            throw CabinetError.malformedMetadata(location, reason: "it is \(count) bytes long; expected 6, 14 or 18, or more with layout fingerprints")
        }
        // The fields end where the checksum (if any) starts: the count of fingerprints says where.
        var fieldsEnd = count
        if count == ClassMetadata.checksummedSize {
            fieldsEnd = ClassMetadata.fixedSize
        } else if count > ClassMetadata.fixedSize {
            let withoutChecksum = ClassMetadata.fixedSize + 1 + 5 * Int(bytes[ClassMetadata.fixedSize])
            guard count == withoutChecksum || count == withoutChecksum + 4 else {
                throw CabinetError.malformedMetadata(location, reason: "it is \(count) bytes long, and \(bytes[ClassMetadata.fixedSize]) layout fingerprints make \(withoutChecksum), or \(withoutChecksum + 4) with a checksum")
            }
            fieldsEnd = withoutChecksum
        }
        if fieldsEnd < count {
            let stored = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: fieldsEnd, as: UInt32.self))
            let computed = CRC32.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<fieldsEnd]))
            guard stored == computed else {
                throw CabinetError.malformedMetadata(location, reason: "its checksum does not match (stored \(stored), computed \(computed))")
            }
            checksummed = true
        }
        var buffer = DataBuffer(bytes: UnsafeRawBufferPointer(rebasing: bytes[0..<fieldsEnd]))
        do {
            lastRowID = try buffer.readUInt32()
            version = try buffer.readUInt8()
            classID = try buffer.readUInt8()
            salt = fieldsEnd >= ClassMetadata.fixedSize ? (try buffer.readUInt32(), try buffer.readUInt32()) : nil
            if fieldsEnd > ClassMetadata.fixedSize {
                var previous: UInt8?
                for _ in 0..<(try buffer.readUInt8()) {
                    let version = try buffer.readUInt8()
                    guard version > 0, previous.map({ version > $0 }) ?? true else {
                        throw CabinetError.malformedMetadata(location, reason: "its layout fingerprints name version \(version) after version \(previous ?? 0); versions must ascend from 1")
                    }
                    layouts[version] = try buffer.readUInt32()
                    previous = version
                }
            }
        } catch let error as CabinetError where error.code == .malformedMetadata {
            throw error
        } catch {
            throw CabinetError.malformedMetadata(location, reason: "\(error)")
        }
        guard lastRowID >= ClassMetadata.firstObjectRowID - 1 else {
            throw CabinetError.malformedMetadata(location, reason: "last row ID \(lastRowID) is below the first row ID")
        }
    }

    /// The bytes of row 1. A store that had no salt keeps the 6-byte form (and so no fingerprints).
    var bytes: [UInt8] {
        var buffer = DataBuffer(capacity: ClassMetadata.checksummedSize + 1 + 5 * layouts.count)
        buffer.writeUInt32(lastRowID)
        buffer.writeUInt8(version)
        buffer.writeUInt8(classID)
        if let salt {
            buffer.writeUInt32(salt.0)
            buffer.writeUInt32(salt.1)
            // Versions 1 to 255: at most 255 fingerprints, which a UInt8 counts.
            let fingerprints = layouts.filter { $0.key > 0 }.sorted { $0.key < $1.key }
            if !fingerprints.isEmpty {
                buffer.writeUInt8(UInt8(fingerprints.count))
                for (version, fingerprint) in fingerprints {
                    buffer.writeUInt8(version)
                    buffer.writeUInt32(fingerprint)
                }
            }
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
