extension TokyoCabinetBackend: ConcurrentReadingBackend {
    /// Set by ``Options/concurrentReads``, which must be chosen when the backend is made
    /// (Tokyo Cabinet's thread-safe mode is picked before each file is opened).
    public var allowsConcurrentReads: Bool { options.concurrentReads }
}
