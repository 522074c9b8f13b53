#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A ``StorageTable`` that keeps its records in key order and can scan a range
/// of keys, in either direction: what an index needs. Opened by
/// ``StorageBackend/openOrderedTable(named:)``; Tokyo Cabinet keeps one in a
/// B+ tree database file, the memory backend in sorted memory.
///
/// Keys compare as unsigned bytes, a key that is a prefix of another first
/// (`memcmp`, then length): so a big-endian number sorts as the number.
/// ```swift
/// let index = try backend.openOrderedTable(named: "Song.index")
/// try index.forEach(from: lower, to: upper, descending: false) { key, value in
///     print(Array(key))
///     return true          // false stops the scan
/// }
/// ```
/// Everything else (transactions, single reads and writes, a whole scan in key
/// order through ``StorageTable/forEach(_:)``) is as for any table, so a
/// journal, a copy or a backup handles it as any other.
public protocol OrderedStorageTable: StorageTable {
    /// Calls `body` with each record whose key is at least `lower` and below
    /// `upper` (`nil`: no bound), in ascending key order, or descending when
    /// `descending`, until it returns `false`. The table must not change while
    /// this runs; an error `body` throws ends the scan and is rethrown.
    func forEach(from lower: UnsafeRawBufferPointer?, to upper: UnsafeRawBufferPointer?, descending: Bool,
                 _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool) throws

    /// Whether a write failed where the table could not take it back (Tokyo
    /// Cabinet finished a commit that had lost a page): what the table holds is
    /// no longer to be trusted. An ordered table holds what can be made again (an
    /// index, from its class's records): its owner empties it (``removeAll()``)
    /// and rebuilds it.
    var isDamaged: Bool { get }

    /// Empties the table, whatever state it is in (damaged included): whole or
    /// not at all, even if the process dies (a new empty file takes the old
    /// one's place). Called outside any transaction; clears ``isDamaged``.
    func removeAll() throws
}

/// The order of an ordered table's keys: bytes compared unsigned, then the shorter first.
package func orderedKeyPrecedes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
    orderedKeyCompare(a, b) < 0
}

/// The same order, three ways (Tokyo Cabinet's `TCCMPLEXICAL`): -1, 0 or 1.
@inline(__always)
package func orderedKeyCompare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
    let common = min(a.count, b.count)
    if common > 0, let left = a.baseAddress, let right = b.baseAddress {
        let order = memcmp(left, right, common)
        if order != 0 { return order < 0 ? -1 : 1 }
    }
    return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
}
