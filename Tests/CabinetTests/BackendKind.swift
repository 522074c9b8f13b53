import Foundation

// Shared with the macro's package (Model/Tests/CabinetModelTests links this
// file), whose store tests run on the same backends.

/// A fresh directory under the system's temporary directory, removed when the value is freed.
final class TemporaryDirectory {
    let path: String

    init() throws {
        let base = FileManager.default.temporaryDirectory.path + "/cabinet-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        path = base
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// The backends every store test runs against: `dictionary` is `DictionaryBackend`,
/// written from the storage seam's documentation alone.
enum BackendKind: String, CaseIterable, CustomStringConvertible, Sendable {
    case tokyoCabinet, memory, redis, dictionary
    var description: String { rawValue }
    /// Whether inserts take their rows from ranges reserved on the server
    /// (several writers: Redis): row IDs then jump to a new range after a
    /// reopen, and one taken by an insert that was not saved is not handed out again.
    var reservesRows: Bool { self == .redis }
}
