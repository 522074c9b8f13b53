import Logging

extension ObjectStore {
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
