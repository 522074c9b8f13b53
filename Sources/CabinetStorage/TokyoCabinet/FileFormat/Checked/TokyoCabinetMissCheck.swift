import CTokyoCabinet

/// Whether a lookup in a Tokyo Cabinet hash file that finds no record can be
/// believed: a lookup walks the key's bucket, and a damaged bucket array (an
/// entry zeroed, a link cut) hides records from it that a scan of the file still
/// reads. Nothing in the bucket array or a record says so, so the check is a
/// survey: every record a scan of the file reads must be found by a lookup of
/// its key. It is made once per file (its inode), at the first miss a store
/// asks about, and kept: the file's later writes are Tokyo Cabinet's own, which
/// keep the index whole; a rebuilt or restored file is another inode.
///
/// Misses a store answers with ("no such object") ask; a save's own probes
/// (whether a key is new) do not, so an open or a save never pays for a survey.
enum TokyoCabinetMissCheck {
    /// What is known of one file.
    enum State {
        case notYet
        /// Every record is found by its key: a miss is an answer.
        case sound(inode: UInt64)
        /// A record that its key does not find, and the error that says so.
        case damaged(inode: UInt64, CabinetError)
    }

    /// The state of `hdb`'s file after a survey if it needs one; `nil` when the
    /// file can't be surveyed now (a transaction or delayed writes in progress, a
    /// file read only through Tokyo Cabinet): the miss then stands as it is.
    static func surveyed(_ hdb: UnsafeMutablePointer<TCHDB>, bigEndian: Bool, path: String, known: State) throws -> State? {
        let inode = hdb.pointee.inode
        switch known {
        case .sound(let surveyed) where surveyed == inode: return known
        case .damaged(let surveyed, _) where surveyed == inode: return known
        default: break
        }
        var hidden: [UInt8]?
        var unreadable = false
        let outcome = try TokyoCabinetFileScan.forEach(hdb, path: path) { key, _ in
            switch try TokyoCabinetLookup.holds(hdb, key: key, bigEndian: bigEndian, path: path, operation: "read") {
            case true?: return true
            case false?: hidden = Array(key)
            case nil: unreadable = true
            }
            return false
        }
        if outcome == .unsupported || unreadable { return nil }
        guard let hidden else { return .sound(inode: inode) }
        return .damaged(inode: inode, hiddenRecord(hidden, path: path))
    }

    /// The error of a file that holds a record its key's lookup misses.
    static func hiddenRecord(_ key: [UInt8], path: String) -> CabinetError {
        let which = key.count == 4
            ? "row \(UInt32(littleEndian: key.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }))"
            : "key \(key.count <= 64 ? "'\(String(decoding: key, as: UTF8.self))'" : "of \(key.count) bytes")"
        return .backendFailure(RecordLocation(file: path), operation: "read", code: Int32(TCERHEAD),
                               message: "the file's hash index is damaged: the record of \(which) is in the file, but a lookup of its key does not find it, so a lookup that finds nothing can't be believed; run `cabinet verify`, then `cabinet compact` rebuilds the index")
    }
}

extension TokyoCabinetTable: LookupMissVouching {
    func vouchForLookupMisses() throws {
        let hdb = try open()
        // A file only Tokyo Cabinet reads (no byte order known): its own lookups, nothing of ours to vouch for.
        guard let bigEndian = lookupByteOrder else { return }
        try missCheck.withLock { state in
            guard let surveyed = try TokyoCabinetMissCheck.surveyed(hdb, bigEndian: bigEndian, path: path, known: state) else { return }
            state = surveyed
            if case .damaged(_, let error) = surveyed { throw error }
        }
    }
}
