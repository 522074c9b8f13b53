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
    /// handed over as it is. Each object costs one lookup by key (no scan of the
    /// class), so a page of 20 reads about 20 records wherever it starts; rows
    /// that were deleted cost a lookup each as they are passed over.
    public func enumerate<T: StoredObject>(_ type: T.Type, startingAfter rowID: UInt32,
                                           _ body: (T, inout Bool) throws -> Void) throws {
        var stop = false
        try walkRows(type, after: rowID) { object in
            try body(unsafeDowncast(object, to: T.self), &stop)
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
        for rowID in (first + 1)...entry.metadata.lastRowID {
            let object: StoredObject
            if let live = entry.live.object(at: rowID) {
                if live.changeState == .deleted { continue }
                if !live.hasContent, live.changeState != .inserted {
                    guard try loadContent(of: live, entry: entry) else { continue }
                }
                object = live
            } else {
                // Read first, so a row passed over costs a lookup and no object.
                let found: Void? = try entry.table.withValue(forRow: rowID) { buffer.load($0) }
                guard found != nil else { continue }
                object = try adoptDecoded(entry, rowID: rowID, from: &buffer)
            }
            if try !body(object) { return }
        }
    }
}
