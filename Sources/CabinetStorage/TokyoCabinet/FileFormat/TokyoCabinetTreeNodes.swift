import CTokyoCabinet

/// The inner nodes of one B+ tree file that ``TokyoCabinetTreeScan`` has parsed,
/// each page's separators located once so a walk down the tree is a binary
/// search per level instead of a parse of the whole page.
///
/// Why: an inner node holds up to 512 separators of variable length; parsing
/// one whole to choose a child (as Tokyo Cabinet's load requires: a page must
/// parse to its end) was most of an index query's work. A
/// million songs' index has a few hundred inner nodes, all read again and again.
///
/// Entries point into the map of the file, valid for one generation of its
/// table (``TokyoCabinetOrderedTable``): any write, transaction or reopen starts
/// a new one, and the first read of a new generation empties the cache. Readers
/// on several threads share it (a pool's concurrent reads), behind a lock.
final class TokyoCabinetTreeNodes: @unchecked Sendable {
    // @unchecked: `state` is only read and written under `lock`.
    struct Node {
        var heir: UInt64
        /// Each separator: where its key is in the map, and the child for keys from it on.
        var separators: [Separator]
    }

    struct Separator {
        var key: UnsafeRawBufferPointer
        var child: UInt64
    }

    private struct State {
        var generation = -1
        var nodes: [UInt64: Node] = [:]
    }

    /// At most this many nodes are kept (a fresh start when full): a million
    /// songs' four indexes take a few dozen; at most 512 separators of 24 bytes a
    /// node, the cache stays under 13 MB a table, whatever the file.
    static let capacity = 1_024

    private let lock = PlainMutex()
    private var state = State()

    /// The node `id` of `generation`, if kept.
    func kept(_ id: UInt64, generation: Int) -> Node? {
        lock.withLock {
            if state.generation != generation {
                state.generation = generation
                state.nodes.removeAll(keepingCapacity: true)
            }
            return state.nodes[id]
        }
    }

    /// Keeps `node` as node `id` of `generation` (its separators must point into the map).
    func keep(_ node: Node, as id: UInt64, generation: Int) {
        lock.withLock {
            guard state.generation == generation else { return }
            if state.nodes.count >= Self.capacity { state.nodes.removeAll(keepingCapacity: true) }
            state.nodes[id] = node
        }
    }

    /// Parses an inner node's page (`tcbdbnodeload`'s format): the heir, then
    /// each separator's child and key. `nil` unless the whole page parses, as
    /// Tokyo Cabinet's load requires, with separators in ascending order.
    static func parse(_ page: UnsafeRawBufferPointer) -> Node? {
        var cursor = 0
        guard let heir = TokyoCabinetTreeScan.number(page, &cursor), heir > 0 else { return nil }
        var separators: [Separator] = []
        while page.count - cursor >= 2 {
            guard let child = TokyoCabinetTreeScan.number(page, &cursor), child > 0,
                  let size = TokyoCabinetTreeScan.number(page, &cursor), size <= UInt64(page.count - cursor) else { return nil }
            let key = UnsafeRawBufferPointer(rebasing: page[cursor..<cursor + Int(size)])
            // Out of order, the binary search would not choose what Tokyo Cabinet chooses: damage.
            if let last = separators.last, orderedKeyPrecedes(key, last.key) { return nil }
            separators.append(Separator(key: key, child: child))
            cursor += Int(size)
        }
        return cursor == page.count ? Node(heir: heir, separators: separators) : nil
    }
}

extension TokyoCabinetTreeNodes.Node {
    /// The child that holds `key`: that of the last separator not above it, or
    /// the heir when every separator is above it (`tcbdbsearchleaf`).
    func child(for key: UnsafeRawBufferPointer) -> UInt64 {
        // The first separator above `key`; the one before it is the last not above.
        var low = 0, high = separators.count
        while low < high {
            let middle = (low + high) / 2
            if orderedKeyPrecedes(key, separators[middle].key) { high = middle } else { low = middle + 1 }
        }
        return low == 0 ? heir : separators[low - 1].child
    }
}
