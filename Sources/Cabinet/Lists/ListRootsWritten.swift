import Foundation

/// The root node each out-of-line list had when this store (or a pool's group)
/// last saved it, on a backend other processes write (Redis). A list whose base
/// is not its stored root is a copy taken before a later save; whose save that
/// was decides the error: this store's own (the copy is stale: `staleList`), or
/// another process's (both changed the list: `saveConflict`, which
/// `refresh(discardingConflicts:)` settles). A save whose outcome is unknown
/// (its reply was lost) may have stored its root: trying it again is no conflict.
final class ListRootsWritten: @unchecked Sendable {
    private struct Written {
        var root: ListNodeID
        /// The stored root the list came from, while the save is not known to have committed.
        var unconfirmedBase: ListNodeID?
    }

    private let lock = NSLock()
    private var roots: [ListScope: Written] = [:]

    /// Notes a root a save is about to write, from a list based on `base`.
    func writing(_ root: ListNodeID, of scope: ListScope, base: ListNodeID?) {
        lock.withLock { roots[scope] = Written(root: root, unconfirmedBase: base) }
    }

    /// Notes a root a save wrote, once it committed.
    func committed(_ root: ListNodeID, of scope: ListScope) {
        lock.withLock { roots[scope] = Written(root: root, unconfirmedBase: nil) }
    }

    /// Whether the stored root `root` of `scope` is one this store wrote.
    func wrote(_ root: ListNodeID, of scope: ListScope) -> Bool {
        lock.withLock { roots[scope]?.root == root }
    }

    /// Whether `root` is what a save of this store whose outcome is unknown
    /// wrote from the tree under `base`: trying that save again is no stale copy.
    func unconfirmed(_ root: ListNodeID, of scope: ListScope, from base: ListNodeID) -> Bool {
        lock.withLock { roots[scope].map { $0.root == root && $0.unconfirmedBase == base } ?? false }
    }
}
