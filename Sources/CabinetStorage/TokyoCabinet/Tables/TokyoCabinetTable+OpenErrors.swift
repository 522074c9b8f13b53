import CTokyoCabinet
import Foundation

/// What a failed `tchdbopen` means, told from the file itself: a file that is not
/// Tokyo Cabinet's, a damaged header, or a sound one in the other byte order.
extension TokyoCabinetTable {
    static func openError(path: String, code: Int32) -> CabinetError {
        let location = RecordLocation(file: path)
        let message = String(cString: tchdberrmsg(code))
        switch Int(code) {
        case Int(TCEMETA), Int(TCERHEAD), Int(TCEREAD), Int(TCEMMAP):
            if let foreign = TokyoCabinetDirectory.foreignLayoutError(ofTable: path, refused: true) { return foreign }
            let reason = hasMagic(atPath: path) ? "its header is damaged: \(message)" : "it does not start with Tokyo Cabinet's magic"
            return .notADatabase(location, reason: reason)
        case Int(TCELOCK):
            return .storeLocked(path: path, pid: nil)
        case Int(TCETHREAD):
            // Tokyo Cabinet keeps one handle per file in a process and refuses a second
            // one with this code (Debian's 1.4.48; a reader's open as much as a writer's).
            return .backendFailure(location, operation: "open", code: code,
                                   message: "\(message): this process has the file open already (another ObjectStore, StorePool or backend of this store), and Tokyo Cabinet opens a file once per process. Read through the backend that store was opened with (StoreInfo(backend:), StoreVerifier.verify(_:)), or from another process")
        default:
            return .backendFailure(location, operation: "open", code: code, message: message)
        }
    }

    /// The error for a file whose header asks for compression or a custom codec
    /// (`nil` for any other): Cabinet never writes one, and reads every record
    /// itself, bounds-checked, which it cannot do for one; left to Tokyo Cabinet,
    /// a damaged one's sizes would be trusted.
    static func compressionError(_ hdb: UnsafeMutablePointer<TCHDB>, path: String) -> CabinetError? {
        guard hdb.pointee.zmode || hdb.pointee.enc != nil else { return nil }
        return .notADatabase(RecordLocation(file: path),
                             reason: "its header asks for compressed records (options byte \(hdb.pointee.opts)), which Cabinet never writes and does not read; if the store was Cabinet's, the header is damaged: restore a backup")
    }

    static func hasMagic(atPath path: String) -> Bool {
        TokyoCabinetDirectory.hasMagic(atPath: path)   // follows no link, opens no FIFO
    }
}
