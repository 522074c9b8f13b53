import CabinetStorage

extension ObjectStore {
    /// A row for an insert into `entry`'s class from this process's reserved
    /// range (``RowReservations``), reserving the next range when it is spent;
    /// `nil` when the store does not reserve rows (one writer: Tokyo Cabinet,
    /// memory) or the reservation failed (the server unreachable, the store
    /// read-only). The caller then hands out the next row it knows, as a store
    /// with one writer does, and its save writes the metadata row: that save
    /// may conflict with another process's, never overwrite it.
    @inline(__always)
    func reservedRowID(for entry: ClassEntry) -> UInt32? {
        // The common case, on every insert: the next row of the class's range.
        if let row = entry.rowRange?.take(), _fastPath(entry.live.object(at: row) == nil) { return row }
        return reservedRowIDAfterReserving(for: entry)
    }

    /// ``reservedRowID(for:)`` when the range is spent (or not looked up yet).
    private func reservedRowIDAfterReserving(for entry: ClassEntry) -> UInt32? {
        // A read block's insert is never saved: it takes the next row it knows, with no I/O.
        guard let reservations = rowReservations, link.allowsWrites else { return nil }
        let range: ClassRowRange
        if let cached = entry.rowRange {
            range = cached
        } else {
            range = reservations.range(for: entry.name)
            entry.rowRange = range
        }
        while true {
            // A row with a live instance already (a fault made for a row not handed out yet) keeps it.
            while let row = range.take() {
                if _fastPath(entry.live.object(at: row) == nil) { return row }
            }
            // A plain store does not try again before its next save once a reservation failed; a
            // pool's write block fails with it (``ObjectStore/insert(_:)`` defers the error).
            guard link.isPoolBlock || reservations.mayReserve(entry.name) else { return nil }
            do {
                try reserveRows(for: entry, into: range, reservations)
            } catch {
                let failure = error as? CabinetError
                    ?? .backendFailure(entry.location(row: ClassMetadata.rowID), operation: "reserve row IDs", code: 0, message: "\(error)")
                if link.isPoolBlock {
                    deferredSaveError = failure
                } else {
                    reservations.suspend(entry.name)
                    log(failure, level: .warning)
                }
                return nil
            }
        }
    }

    /// Raises the class's metadata row on the server by the next range's size
    /// (compare-and-set: from whatever it holds now, other processes'
    /// reservations included) and adds the range to `reservations`.
    private func reserveRows(for entry: ClassEntry, into range: ClassRowRange, _ reservations: RowReservations) throws {
        let size = reservations.nextSize(entry.name)
        let location = entry.location(row: ClassMetadata.rowID)
        var raised: ClassMetadata?
        _ = try reservations.backend.updateRecord(inTable: entry.name, forKey: RowKey.bytes(ClassMetadata.rowID)) { old in
            // Registration writes the row at once: without it the class is gone from the
            // store (a restore without it, or the table removed), and no row is made up here.
            guard let old else {
                throw CabinetError.saveConflict(path: path, reason: "the class \(entry.name) has no metadata row on the server any more (the store was restored or the class removed by another process); refresh, or reopen the store")
            }
            var metadata = try old.withUnsafeBytes { try ClassMetadata(bytes: $0, location: location) }
            // Rows handed out here without a reservation (one failed), unsaved yet, stay out of the range.
            metadata.lastRowID = max(metadata.lastRowID, entry.metadata.lastRowID)
            guard metadata.lastRowID <= UInt32.max - size else {
                throw CabinetError.malformedMetadata(location, reason: "every row ID has been used, so no object can be inserted")
            }
            metadata.lastRowID += size
            raised = metadata
            return metadata.bytes
        }
        guard let raised else { return }
        range.set((raised.lastRowID - size + 1)...raised.lastRowID)
        // The metadata row this store would write (an upgrade's) never lowers the server's.
        entry.metadata.lastRowID = max(entry.metadata.lastRowID, raised.lastRowID)
    }
}
