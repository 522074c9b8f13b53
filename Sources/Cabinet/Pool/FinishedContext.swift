/// A write block's context once the block and its save are done, handed from
/// the writer queue to the block's caller, who closes it.
///
/// Why: closing a context dissolves its objects' relationships and frees them,
/// its class entries and its uniquing tables, a good part of a small write
/// block. On the writer queue that work sat between one block
/// and the next; the caller, waiting for its commit anyway, does it on its own
/// thread, beside the writer.
///
/// `@unchecked Sendable`, and why that is sound: once the block's `save()` has
/// returned, nothing else holds the context or its objects. The group's staging
/// holds encoded records, ``ListNodeCache`` row IDs and node IDs, and
/// ``PendingLists`` list nodes without objects (never an object of a finished
/// block); the context's class entries and uniquing tables are its own. So after
/// the hand-off the context belongs to the one thread that closes it; its
/// ``ConcurrentUseDetector`` would stop the program if anything else entered it
/// meanwhile. The one thing shared is those list nodes: a finished block's
/// lists may hold the same nodes the next block reads. Closing only lets them
/// go, unless an app's `dissolveAllRelationships()` reads a list instead of
/// emptying it, which its documentation rules out.
final class FinishedContext: @unchecked Sendable {
    private var store: ObjectStore?

    init(_ store: ObjectStore) {
        self.store = store
    }

    /// Closes the context and lets it go (frees its objects).
    func close() {
        store?.close()
        store = nil
    }
}
