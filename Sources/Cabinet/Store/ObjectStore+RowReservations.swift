import CabinetStorage

extension ObjectStore {
    /// A row for an insert into `entry`'s class from this process's reserved
    /// range (``RowReservations``), reserving the next range when it is spent;
    /// `nil` when the store does not reserve rows (one writer: Tokyo Cabinet,
    /// memory) or the reservation failed (the server unreachable, the store
    /// read-only). The caller then hands out the next row it knows, as a store
    /// with one writer does, and its save writes the metadata row: that save
    /// may conflict with another process's, never overwrite it.
    func reservedRowID(for entry: ClassEntry) -> UInt32? {
        guard let reservations = rowReservations else { return nil }
        for _ in 0..<2 {
            // A row with a live instance already (a fault made for a row not handed out yet) keeps it.
            while let row = reservations.take(entry.name) {
                if entry.live.object(at: row) == nil { return row }
            }
            guard reservations.mayReserve(entry.name) else { return nil }
            do {
                try reserveRows(for: entry, in: reservations)
            } catch {
                // Not tried again before the next save, which reports what is still wrong.
                reservations.suspend(entry.name)
                if let error = error as? CabinetError { log(error, level: .warning) }
                return nil
            }
        }
        return nil
    }

    /// Raises the class's metadata row on the server by the next range's size
    /// (compare-and-set: from whatever it holds now, other processes'
    /// reservations included) and adds the range to `reservations`.
    private func reserveRows(for entry: ClassEntry, in reservations: RowReservations) throws {
        let size = reservations.nextSize(entry.name)
        let location = entry.location(row: ClassMetadata.rowID)
        var raised: ClassMetadata?
        _ = try reservations.backend.updateRecord(inTable: entry.name, forKey: withUnsafeBytes(of: ClassMetadata.rowID.littleEndian, Array.init)) { old in
            // Not on the server yet (registered, never saved): the registration's metadata.
            var metadata = try old.map { try $0.withUnsafeBytes { try ClassMetadata(bytes: $0, location: location) } } ?? entry.metadata
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
        reservations.add((raised.lastRowID - size + 1)...raised.lastRowID, for: entry.name)
        // The metadata row this store would write (an upgrade's) never lowers the server's.
        entry.metadata.lastRowID = max(entry.metadata.lastRowID, raised.lastRowID)
    }
}
