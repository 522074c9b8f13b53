extension ObjectStore {
    /// Calls `body` with each object of `type` whose row ID is greater than
    /// `rowID`, in ascending row-ID order, until `body` sets `stop`: a page of a
    /// listing that starts where the previous page ended.
    ///
    /// ```swift
    /// var page: [String] = []
    /// try store.enumerate(Note.self, startingAfter: 18_000) { note, stop in
    ///     page.append(note.title)
    ///     stop = page.count == 20
    /// }
    /// let next = page.isEmpty ? nil : lastRowIDShown   // pass it as startingAfter for the next page
    /// ```
    /// As with ``enumerate(_:_:)``, objects inserted and not yet saved are
    /// included and objects deleted and not yet saved are not; a live object is
    /// handed over as it is. Rows are read by key from `rowID` on, never by a
    /// scan of the class, so a page of 20 reads about 20 records wherever it
    /// starts (on Redis in batches of 16, then 64: one or two round trips); rows
    /// that were deleted cost a lookup each as they are passed over. `body` may
    /// change and save the store: a row deleted and saved is not handed over after.
    public func enumerate<T: StoredObject>(_ type: T.Type, startingAfter rowID: UInt32,
                                           _ body: (T, inout Bool) throws -> Void) throws {
        var stop = false
        try walkRows(type, after: rowID) { object in
            try body(try ObjectStore.typed(object, as: T.self), &stop)
            return !stop
        }
    }

    /// The loop of ``enumerate(_:startingAfter:_:)``, not generic: each row after
    /// `start` up to the last row ever handed out, live objects first, then the table.
    private func walkRows(_ type: StoredObject.Type, after start: UInt32, _ body: (StoredObject) throws -> Bool) throws {
        useDetector.enter("enumerate(_:startingAfter:_:)")
        defer { useDetector.leave() }
        let entry = try requireEntry(for: type)
        let first = max(start, ClassMetadata.firstObjectRowID - 1)
        guard first < entry.metadata.lastRowID else { return }
        var buffer = takeReadBuffer()   // a nested read in `body` gets a buffer of its own
        defer { readBuffer = buffer }
        let last = entry.metadata.lastRowID
        var next = UInt64(first) + 1   // the first row not visited yet (64 bits: past UInt32.max at the end)
        /// Rows from `next` up to `end` (excluded) have no record: only a live object
        /// can be there (an unsaved insert, or one whose content is loaded).
        func visitLive(upTo end: UInt64) throws -> Bool {
            while next < end {
                let rowID = UInt32(next)
                next += 1
                if let live = entry.live.object(at: rowID), live.changeState != .deleted,
                   live.hasContent || live.changeState == .inserted {
                    if try !body(live) { return false }
                }
            }
            return true
        }
        var goOn = true, readAgain = true
        while readAgain && next <= UInt64(last) {
            readAgain = false
            // Records read ahead of `body` (a batch on a networked table) are stale once it
            // saves this class (a row deleted and saved is gone): read on from the next row.
            let saves = entry.savesFinished
            // The records in row order: read in batches on a networked table, one lookup a row on a file.
            try entry.table.forEachRow(in: UInt32(next)...last) { rowID, value in
                guard entry.savesFinished == saves else { readAgain = true; return false }
                guard try visitLive(upTo: UInt64(rowID)) else { goOn = false; return false }
                guard entry.savesFinished == saves else { readAgain = true; return false }
                next = UInt64(rowID) + 1
                let object: StoredObject
                buffer.load(value)
                if let live = entry.live.object(at: rowID) {
                    if live.changeState == .deleted { return true }
                    // A fault takes its content from the record just read.
                    if !live.hasContent, live.changeState != .inserted { try decode(&buffer, into: live, entry: entry) }
                    object = live
                } else {
                    object = try adoptDecoded(entry, rowID: rowID, from: &buffer)
                }
                goOn = try body(object)
                return goOn
            }
            if !goOn { return }
        }
        _ = try visitLive(upTo: UInt64(last) + 1)
    }
}
