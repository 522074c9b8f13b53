import CTokyoCabinet
import Foundation

/// Opening and closing a handle on a hash file: a writer's (under Tokyo
/// Cabinet's lock, after settling a log a kill cut short) or a reader's
/// (without the lock, and never over a killed writer's transaction).
extension TokyoCabinetTable {
    /// A new handle on the existing file at `path`.
    static func openHandle(path: String, options: TokyoCabinetBackend.Options) throws -> UnsafeMutablePointer<TCHDB> {
        if options.readOnly && !DirectoryFiles.exists(path) {
            throw CabinetError.readOnly(path: path, reason: "the file does not exist, and a read-only store cannot create it")
        }
        guard options.readOnly else {
            // A log a kill cut short, settled before Tokyo Cabinet's rollback reads it.
            try TokyoCabinetLog.trimCutEntry(ofTable: path)
            // A rollback after a failed write that a kill cut short, done again by the open.
            try TokyoCabinetFailedWriteMark.prepareOpen(ofTable: path, sync: options.syncOnCommit)
            return try openHandle(path: path, mode: Int32(HDBOREADER | HDBOWRITER | HDBOLCKNB), options: options, tuning: nil)
        }
        // A reader: without Tokyo Cabinet's lock, which the writer holds (see TokyoCabinetTable+Reading).
        try refuseInterruptedTransaction(path)
        let hdb = try openHandle(path: path, mode: Int32(HDBOREADER | HDBONOLCK), options: options, tuning: nil)
        try checkUnlockedOpen(hdb, path: path)
        return hdb
    }

    /// A handle opened with `mode` (plus `HDBOTSYNC` when asked); `tuning` for files it creates.
    static func openHandle(path: String, mode: Int32, options: TokyoCabinetBackend.Options,
                           tuning: (buckets: Int64, alignment: Int8, pool: Int8, flags: UInt8)?) throws -> UnsafeMutablePointer<TCHDB> {
        TokyoCabinetYields.skip()   // before the first call into Tokyo Cabinet
        guard let hdb = tchdbnew() else {
            throw CabinetError.backendFailure(RecordLocation(file: path), operation: "tchdbnew", code: -1, message: "out of memory")
        }
        // Thread-safe mode must be chosen before the open.
        if options.concurrentReads && !tchdbsetmutex(hdb) {
            tchdbdel(hdb)
            throw CabinetError.backendFailure(RecordLocation(file: path), operation: "tchdbsetmutex", code: -1, message: "this Tokyo Cabinet has no thread support")
        }
        let tuning = tuning ?? (options.bucketCount, options.alignmentPower, options.freeBlockPoolPower, 0)
        _ = tchdbtune(hdb, tuning.buckets, tuning.alignment, tuning.pool, tuning.flags)
        _ = tchdbsetxmsiz(hdb, options.mappedSize)
        let syncMode = options.syncOnCommit && !options.readOnly ? Int32(HDBOTSYNC) : 0
        guard tchdbopen(hdb, path, mode | syncMode) else {
            let code = tchdbecode(hdb)
            tchdbdel(hdb)
            throw TokyoCabinetTable.openError(path: path, code: code)
        }
        if let error = compressionError(hdb, path: path) {
            closeHandle(hdb, path: path)
            throw error
        }
        return hdb
    }

    /// Closes `hdb`; returns the error if Tokyo Cabinet could not write its last changes.
    @discardableResult
    static func closeHandle(_ hdb: UnsafeMutablePointer<TCHDB>, path: String) -> CabinetError? {
        var error: CabinetError?
        if !tchdbclose(hdb) {
            let code = tchdbecode(hdb)
            error = .backendFailure(RecordLocation(file: path), operation: "close", code: code, message: String(cString: tchdberrmsg(code)))
        }
        tchdbdel(hdb)
        return error
    }
}
