/// Registration's check of a class's record layout against the fingerprints its
/// metadata row keeps (`StoredObject.layoutFingerprints`, which `@StoredModel`
/// writes): a stored property removed or moved without raising the version would
/// make every record of that version misread, silently or as a damaged record,
/// so the class is refused before anything is read.
///
/// Only versions from the metadata's on are compared: the metadata's version is
/// the oldest any record may have (a class's records start at it, and
/// `upgradeAll` raises it once none is older), so a layout of an older version
/// describes no record and may change.
extension ClassMetadata {
    /// Throws ``/CabinetStorage/CabinetError/Code-swift.struct/layoutChanged`` if the row keeps a fingerprint,
    /// of the metadata's version or a later one, that differs from `type`'s
    /// fingerprint of that version. A class with no fingerprints passes.
    func checkLayouts(of type: StoredObject.Type) throws {
        guard !layouts.isEmpty else { return }
        let declared = type.layoutFingerprints
        guard !declared.isEmpty else { return }
        for (recordVersion, stored) in layouts.sorted(by: { $0.key < $1.key }) where recordVersion >= version {
            guard let current = declared[recordVersion], current != stored else { continue }
            let next = max(type.version, layouts.keys.max() ?? 0) &+ 1
            throw CabinetError.layoutChanged(
                className: String(describing: type), recordVersion: recordVersion,
                reason: "its records of version \(recordVersion) were written in another layout (fingerprint \(ClassMetadata.hex(stored))) "
                    + "than the class now declares for version \(recordVersion) (\(ClassMetadata.hex(current))): a stored property was "
                    + "removed or reordered without @Removed/@Since. Raise the version (@StoredModel(version: \(next))), keep each "
                    + "removed or moved property in its old place marked @Removed(in: \(next)), and declare a moved one again where "
                    + "it now goes, marked @Since(\(next)) (docs/MODEL.md, \"Versions\")")
        }
    }

    /// Adds `type`'s fingerprint of its own version if the row has none for it,
    /// and forgets those of versions older than the metadata's. Returns whether
    /// the row changed and should be written (with the next save of the store).
    mutating func recordLayout(of type: StoredObject.Type) -> Bool {
        // A 6-byte row (BNRPersistence before its salt) keeps that form, with no room for fingerprints.
        guard salt != nil, type.version > 0, type.version >= version,
              let current = type.layoutFingerprints[type.version], layouts[type.version] == nil else { return false }
        layouts = layouts.filter { $0.key >= version }
        layouts[type.version] = current
        return true
    }

    private static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: 8 - digits.count) + digits
    }
}
