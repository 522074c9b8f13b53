import CabinetStorage
import Foundation

extension ObjectStore {
    /// Writes a new store at `destination` with the content of the store at
    /// `source`, whose Tokyo Cabinet files may be in either byte order: the way to
    /// open, on Linux, a BNRPersistence (or Cabinet) store written on a Mac.
    ///
    /// ```swift
    /// // ObjectStore(path: "/mnt/mac/library") throws CabinetError.Code.foreignByteOrder
    /// let report = try ObjectStore.importStore(from: "/mnt/mac/library", to: "/var/lib/library")
    /// for problem in report.problems { print(problem) }   // damaged records, left out
    /// let store = try ObjectStore(path: "/var/lib/library")
    /// ```
    /// Debian's Tokyo Cabinet writes its files big-endian; a Mac's (built natively,
    /// as BNRPersistence's README says) writes them little-endian, and neither
    /// reads the other's. The records themselves (row IDs, class IDs, versions,
    /// every byte of every object, named buffer and metadata row) are the same on
    /// both, so the import copies them unchanged: Cabinet reads each source file
    /// itself and this machine's Tokyo Cabinet writes the new one.
    ///
    /// `source` is only read. `destination` must not exist or be empty; the new
    /// store is written under a hidden name, read back record by record against
    /// the source, checked by ``StoreVerifier`` (whose findings join the report's
    /// problems), and only then renamed into place, so it appears checked or not
    /// at all. `progress` is called as the records are written (``StoreProgress``).
    /// A source without a format marker (BNRPersistence's) gives a store
    /// in the plain record format, as BNRPersistence wrote it.
    ///
    /// Damage in the source is reported per record, never trapped on: a damaged
    /// record is left out and named (file, class, row, offset) in
    /// ``/CabinetStorage/StoreImportReport/problems``. A source with an unfinished transaction or
    /// save, index files, or files that are not part of a store is refused before
    /// anything is written, with what to do.
    public static func importStore(from source: String, to destination: String,
                                   progress: StoreProgress.Handler? = nil) throws -> StoreImportReport {
        // A marker this version does not know is refused before anything is written.
        if let marker = try DirectoryFiles.read(source + "/" + TokyoCabinetBackend.formatFileName).map({ String(decoding: $0, as: UTF8.self) }),
           RecordFormat(marker: marker) == nil {
            throw CabinetError.unsupportedFormat(path: source, reason: "its format marker says '\(marker.trimmingCharacters(in: .whitespacesAndNewlines))', which this version of Cabinet does not know")
        }
        return try TokyoCabinetBackend.importStore(from: source, to: destination, defaultFormatMarker: RecordFormat.plain.marker,
                                                   progress: progress) { try StoreVerifier.verify(path: $0) }
    }
}

extension ObjectStore {
    /// Writes a copy of the store, as of its last save, to a new directory
    /// `destination` whose Tokyo Cabinet files are in `byteOrder`: by default
    /// little-endian, for a Mac's Tokyo Cabinet (and BNRPersistence on it).
    ///
    /// ```swift
    /// try store.exportStore(to: "/srv/to-mac/library")   // then copy the folder to the Mac
    /// ```
    /// The copy is a ``backup(to:progress:)`` (so it works while the app keeps using the
    /// store, and on every backend) whose files are then rewritten in the other
    /// layout, whole or not at all. Index files are left out (the next open with
    /// the classes builds them again from the records); the returned notes say
    /// which. Only Tokyo Cabinet's structures change: every record's bytes are the
    /// store's. ``importStore(from:to:progress:)`` reads the result back.
    @discardableResult
    public func exportStore(to destination: String, byteOrder: TokyoCabinetByteOrder = .littleEndian,
                            progress: StoreProgress.Handler? = nil) throws -> [String] {
        let url = URL(fileURLWithPath: destination)
        let temporary = url.deletingLastPathComponent().path + "/." + url.lastPathComponent + ".cabinet-export"
        try? FileManager.default.removeItem(atPath: temporary)
        defer { try? FileManager.default.removeItem(atPath: temporary) }
        try TokyoCabinetDirectory.refuseNonEmpty(destination, for: "an export")
        try backup(to: temporary, progress: progress)
        return try TokyoCabinetByteSwap.convertStore(at: temporary, to: destination, as: byteOrder)
    }
}
