import Logging

extension ObjectStore {
    /// The logger a store uses unless it is given one: label `cabinet`, writing
    /// to standard error (as the store printed before it logged), never to
    /// standard output, which belongs to the program (a tool's output, a pipe).
    /// Pass your own `Logger` to route it through your `LoggingSystem`.
    public static var defaultLogger: Logger {
        Logger(label: "cabinet", factory: { StreamLogHandler.standardError(label: $0) })
    }

    /// Logs `error` with where it happened as metadata, so a service's log
    /// handler can index it (`cabinet.file`, `cabinet.class`, `cabinet.row`).
    func log(_ error: CabinetError, level: Logger.Level) {
        var metadata: Logger.Metadata = ["cabinet.path": "\(path)", "cabinet.code": "\(error.code)"]
        if let location = error.location {
            metadata["cabinet.file"] = "\(location.file)"
            if let className = location.className { metadata["cabinet.class"] = "\(className)" }
            if let rowID = location.rowID { metadata["cabinet.row"] = "\(rowID)" }
        }
        logger.log(level: level, "\(error)", metadata: metadata)
    }
}
