import CabinetStorage

/// The save-time state of encoding records, owned by the loop that encodes
/// them (a save, an undo snapshot, an upgrade's rewrite, the registration
/// probe), not by the ``DataBuffer``: a buffer the loop writes into points to
/// it (``DataBuffer/encoder``) so that `writeList` and the reference writers
/// can leave their notes, and nothing else in the encoding layer knows about
/// saves, stores or pools.
///
/// It holds where lists go (``collector`` or ``undoLists``) and the per-record
/// notes the loop checks after each `write(to:)`: the first reference to an
/// uninserted object and the first list that could not be loaded. A note makes
/// the loop throw, so at the start of the next record there is none; the loop
/// resets only the collector.
///
/// A buffer no loop owns (`DataBuffer()`, made by an app for a named buffer)
/// gets a note of its own when it writes an uninserted reference
/// (``init(uninserted:)``): made once, never changed, and dropped by
/// ``DataBuffer/removeAll()``, so copies of the buffer stay independent. A
/// loop's notes stay until the loop takes them, whatever a copy of its buffer does.
///
/// `@unchecked Sendable` only so that ``DataBuffer`` stays `Sendable`: a loop's
/// encoder is set on the loop's own buffer, which never leaves the store's
/// thread, and a note of its own is immutable.
final class RecordEncoder: @unchecked Sendable {
    /// Where `writeList` leaves a long list to be written out of line (see
    /// ``ListCollector``); `nil`: every list stays in its record.
    var collector: ListCollector?
    /// Where `writeList` keeps each list's tree instead of its elements (an undo snapshot).
    var undoLists: UndoListTrees?
    /// The record being encoded, named in the error of a list that could not be loaded.
    var location: RecordLocation
    /// The class of the first object written as a reference before it was
    /// inserted; the loop throws ``CabinetError/referenceToUninsertedObject(_:targetClass:)`` for it.
    private(set) var firstUninsertedReference: String?
    /// The first error a written list carried (a part of it could not be
    /// loaded); the loop throws it instead of writing the record.
    private(set) var listFailure: CabinetError?
    /// Whether either note is set: one load per record for the loop's check.
    private(set) var hasNote = false
    /// A buffer's note of its own, not a loop's encoder (see ``init(uninserted:)``).
    let isOwnNote: Bool

    /// An encoder for a loop: it writes lists into `collector`, into `undoLists`, or inline.
    init(location: RecordLocation, collector: ListCollector? = nil, undoLists: UndoListTrees? = nil) {
        self.location = location
        self.collector = collector
        self.undoLists = undoLists
        isOwnNote = false
    }

    /// The note of a buffer no loop owns that wrote a reference to an uninserted object of class `targetClass`.
    fileprivate init(uninserted targetClass: String) {
        location = RecordLocation(file: RecordContext.unknownFile)
        firstUninsertedReference = targetClass
        hasNote = true
        isOwnNote = true
    }

    /// Forgets the notes, once the loop has taken them.
    private func clearNotes() {
        firstUninsertedReference = nil
        listFailure = nil
        hasNote = false
    }

    /// The error the record's notes call for, if any, and forgets them.
    /// `location` names the record (an uninserted reference's error).
    func takeNote(location: @autoclosure () -> RecordLocation) -> CabinetError? {
        guard hasNote else { return nil }
        defer { clearNotes() }
        if let target = firstUninsertedReference { return .referenceToUninsertedObject(location(), targetClass: target) }
        return listFailure
    }

    fileprivate func noteUninserted(_ targetClass: @autoclosure () -> String) {
        guard firstUninsertedReference == nil else { return }
        firstUninsertedReference = targetClass()
        hasNote = true
    }

    fileprivate func noteListFailure(_ error: CabinetError) {
        guard listFailure == nil else { return }
        listFailure = error
        hasNote = true
    }
}

extension DataBuffer {
    /// The class of the first object written as a reference before it was inserted.
    var firstUninsertedReference: String? {
        encoder?.firstUninsertedReference
    }

    /// Notes `object` if it is the first uninserted one written as a reference.
    @inline(never)
    mutating func noteUninserted(_ object: StoredObject) {
        if let encoder {
            // A note of its own is never changed (copies share it), and already says the first.
            if !encoder.isOwnNote { encoder.noteUninserted(String(describing: type(of: object))) }
        } else {
            encoder = RecordEncoder(uninserted: String(describing: type(of: object)))
        }
    }

    /// Notes the first error of a list written into the buffer. Only a loop
    /// reads it, so a buffer no loop owns notes nothing.
    mutating func noteListFailure(_ error: CabinetError) {
        if let encoder, !encoder.isOwnNote { encoder.noteListFailure(error) }
    }

    /// What ``removeAll()`` does to the notes: a buffer's own note goes. A
    /// loop's encoder keeps them: copies of the loop's buffer share it (a
    /// scratch copy emptied inside `write(to:)`), and a note the record may
    /// still hold must not be forgotten; an extra error is the safe side.
    @inline(never)
    mutating func removeNotes() {
        if let encoder, encoder.isOwnNote { self.encoder = nil }
    }
}
