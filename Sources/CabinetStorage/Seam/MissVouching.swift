/// A table whose lookups by key can miss a record that is in it, and which can
/// tell whether its misses are to be believed: a Tokyo Cabinet hash file, whose
/// records a lookup finds through a bucket array that carries no checksum (a
/// zeroed entry reads as an empty bucket). Tables wrapping another (a pool's
/// staging, an observation's recording) pass the question on to it.
///
/// A store asks after a lookup that found nothing, before it answers "no such
/// object" (``StorageTable/vouchForMisses()``): a checksummed store's answers
/// are vouched for, or the read throws.
package protocol LookupMissVouching: StorageTable {
    /// Returns if a lookup in this table that finds no record means there is
    /// none; throws if the table holds a record that a lookup of its key misses.
    func vouchForLookupMisses() throws
}

extension StorageTable {
    /// Returns if a lookup in this table that found no record can be believed,
    /// and throws the damage that makes it unbelievable (see ``LookupMissVouching``).
    /// Nothing to do for a table whose lookups cannot miss (the memory and Redis
    /// backends' are dictionary lookups).
    ///
    /// ```swift
    /// if try table.withValue(forRow: row, { _ in true }) == nil {
    ///     try table.vouchForMisses()   // "no such row", or the damage that hid it
    /// }
    /// ```
    package func vouchForMisses() throws {
        try (self as? any LookupMissVouching)?.vouchForLookupMisses()
    }
}
