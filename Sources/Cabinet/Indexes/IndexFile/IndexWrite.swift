import CabinetStorage

/// One save's writes into a class's index file (or one part of a build's):
/// each changed row's entries go to the sink as they come, full-text entries
/// into posting blocks (``PostingChanges``) when the save calls ``finish(sink:)``.
///
/// ```swift
/// let write = IndexWrite(indexes, view: indexView(of: indexes))
/// try write.row(object.rowID, entries: entries, isNew: true, sink: indexRecords)
/// try write.finish(sink: indexRecords)
/// ```
final class IndexWrite {
    let indexes: ClassIndexes
    let view: any OrderedStorageTable
    private var postings = PostingChanges()
    /// Full-text changes a build holds before it commits what it has (``holdsMany``).
    static let postingsHeld = 1 << 20

    init(_ indexes: ClassIndexes, view: any OrderedStorageTable) {
        self.indexes = indexes
        self.view = view
    }

    /// Takes row `row`'s entries from what its last save wrote (read through the
    /// view; none when `isNew`) to `new` (`nil`: the row is deleted).
    func row(_ row: UInt32, entries new: RowEntries?, isNew: Bool, sink: ClassIndexes.Sink) throws {
        let old = isNew ? nil : try indexes.recorded(row: row, in: view)
        if old == new { return }
        let oldEntries = old?.entries ?? [], newEntries = new?.entries ?? []
        // An entry whose key stays but whose value changes (a word's positions) is only put again.
        for old in oldEntries where !newEntries.contains(where: { $0.index == old.index && $0.entry.key == old.entry.key }) {
            if indexes.isFullText(old.index) {
                postings.remove(index: old.index, word: old.entry.key, row: row)
            } else {
                try sink(IndexKeys.entryKey(index: old.index, value: old.entry.key, row: row), nil)
            }
        }
        for new in newEntries where !oldEntries.contains(new) {
            if indexes.isFullText(new.index) {
                postings.set(index: new.index, word: new.entry.key, row: row, positions: new.entry.value)
            } else {
                try sink(IndexKeys.entryKey(index: new.index, value: new.entry.key, row: row), new.entry.value)
            }
        }
        if let new, !new.entries.isEmpty {
            try sink(IndexKeys.rowKey(row), new.encoded(format: indexes.format))
        } else if old != nil {
            try sink(IndexKeys.rowKey(row), nil)
        }
    }

    /// Writes the full-text changes held so far; a save calls it once, after its last row.
    func finish(sink: ClassIndexes.Sink) throws {
        try postings.flush(view: view, sink: sink, className: indexes.className)
    }

    /// Whether many full-text changes are held: a build then commits what it
    /// has (``finish(sink:)`` first), bounding its memory.
    var holdsMany: Bool { postings.count >= IndexWrite.postingsHeld }
}
