import CTokyoCabinet
import Foundation

/// Opening a handle on a B+ tree file (a writer's, or a reader's without Tokyo
/// Cabinet's lock), and creating an empty file whole or not at all.
extension TokyoCabinetOrderedTable {
    static func openHandle(path: String, options: TokyoCabinetBackend.Options) throws -> UnsafeMutablePointer<TCBDB> {
        if options.readOnly {
            if !DirectoryFiles.exists(path) {
                throw CabinetError.readOnly(path: path, reason: "the file does not exist, and a read-only store cannot create it")
            }
            // A reader: without Tokyo Cabinet's lock, which the writer holds, and never over a killed writer's transaction.
            try TokyoCabinetTable.refuseInterruptedTransaction(path)
            return try openHandle(path: path, mode: Int32(BDBOREADER | BDBONOLCK), options: options)
        }
        // A rollback after a failed write that a kill cut short, done again by the open, the mark kept.
        try TokyoCabinetFailedWriteMark.prepareOpen(ofTable: path, sync: options.syncOnCommit)
        return try openHandle(path: path, mode: Int32(BDBOREADER | BDBOWRITER | BDBOLCKNB), options: options)
    }

    private static func openHandle(path: String, mode: Int32, options: TokyoCabinetBackend.Options) throws -> UnsafeMutablePointer<TCBDB> {
        TokyoCabinetYields.skip()   // before the first call into Tokyo Cabinet
        guard let bdb = tcbdbnew() else {
            throw CabinetError.backendFailure(RecordLocation(file: path), operation: "tcbdbnew", code: -1, message: "out of memory")
        }
        if options.concurrentReads && !tcbdbsetmutex(bdb) {
            tcbdbdel(bdb)
            throw CabinetError.backendFailure(RecordLocation(file: path), operation: "tcbdbsetmutex", code: -1, message: "this Tokyo Cabinet has no thread support")
        }
        // Leaves of 256 entries and inner nodes of 512: an index entry is a few
        // dozen bytes, so a page is a few KiB, and a million entries are three levels.
        // Pages aligned to 16 bytes, not Tokyo Cabinet's 256: 3 MB less padding in
        // a million songs' index, and a page that grows moves a little more often.
        _ = tcbdbtune(bdb, 256, 512, 65_521, 4, 10, 0)
        _ = tcbdbsetcache(bdb, 4096, 1024)
        // Pages written through the map, as a hash file's records are: Tokyo
        // Cabinet takes a failed pwrite(2) for a whole one (it compares the -1 it
        // returns with an unsigned size), so a page written that way can be lost
        // without an error. Within the map a write cannot fail part way.
        _ = tcbdbsetxmsiz(bdb, options.mappedSize)
        let syncMode = options.syncOnCommit && !options.readOnly ? Int32(BDBOTSYNC) : 0
        guard tcbdbopen(bdb, path, mode | syncMode) else {
            let code = tcbdbecode(bdb)
            tcbdbdel(bdb)
            throw TokyoCabinetTable.openError(path: path, code: code)
        }
        // A reader opens without Tokyo Cabinet's lock, and so without its checks of
        // the header: a file cut short would be mapped past its end.
        if mode & Int32(BDBONOLCK) != 0, let hdb = bdb.pointee.hdb,
           !TokyoCabinetTable.unlockedHeaderIsValid(hdb, type: Int(TCDBTBTREE)) {
            _ = tcbdbclose(bdb)
            tcbdbdel(bdb)
            throw TokyoCabinetTable.openError(path: path, code: Int32(TCEMETA))
        }
        if let hdb = bdb.pointee.hdb, let error = TokyoCabinetTable.compressionError(hdb, path: path) {
            _ = tcbdbclose(bdb)
            tcbdbdel(bdb)
            throw error
        }
        return bdb
    }

    /// Creates an empty B+ tree file at `name`, whole or not at all: written
    /// under a temporary name, then renamed into place.
    static func create(directory: String, name: String, options: TokyoCabinetBackend.Options) throws {
        let path = directory + "/" + name
        let temporary = directory + "/" + DirectoryFiles.temporaryPrefix + name
        try? DirectoryFiles.remove(temporary)
        do {
            let bdb = try openHandle(path: temporary, mode: Int32(BDBOREADER | BDBOWRITER | BDBOCREAT | BDBOTRUNC), options: options)
            let closed = tcbdbclose(bdb)
            let code = tcbdbecode(bdb)
            tcbdbdel(bdb)
            guard closed else {
                throw CabinetError.backendFailure(RecordLocation(file: path), operation: "create", code: code, message: String(cString: tcbdberrmsg(code)))
            }
            try TokyoCabinetTable.removeLog(of: path)
            try DirectoryFiles.replace(path, with: temporary, directory: directory, sync: options.syncOnCommit)
        } catch {
            try? DirectoryFiles.remove(temporary)
            throw error
        }
    }
}
