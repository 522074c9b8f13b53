/// Sizes every backend accepts.
public enum StorageLimits {
    /// The largest key or value a table stores: Tokyo Cabinet keeps sizes in
    /// 32-bit signed integers, and a record's header and key must fit beside
    /// its value. The store refuses a larger record before anything is written,
    /// journal included (`CabinetError.valueTooLarge`).
    public static let largestValue = Int(Int32.max) - (1 << 16)

    /// How many bytes of records a copy holds before it commits them
    /// (``StorageBackend/writeRecords(toTable:_:)``): bounds a backup's memory.
    package static let copyBatchBytes = 8 << 20
}
