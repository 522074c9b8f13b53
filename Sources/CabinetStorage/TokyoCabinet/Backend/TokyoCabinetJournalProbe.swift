#if canImport(Glibc)
import Glibc
#endif

/// A reader's look at the journal file, at every read operation of a store a
/// writer in another process has open (``TokyoCabinetBackend/readJournal()``):
/// a journal there means a killed writer left a save half-applied, which a
/// reader must refuse rather than read.
///
/// While a writer is open the file is there all the time (written in place,
/// ``TokyoCabinetJournalFile``), so opening, checking, reading and closing it
/// at every read was four system calls. The probe keeps the file open and
/// asks the path only whether it is still that file (an `lstat`, compared by
/// device and inode), then reads its header where it stands (a `pread`): two.
/// A file removed (a writer's clean close) or replaced (the next writer's new
/// one) is seen at the next look, and the handle follows the path.
///
/// The file is looked at under the store's shared commit lock, so no writer
/// writes it meanwhile; the probe's own lock keeps a pool's concurrent readers
/// from sharing the handle's read position.
final class TokyoCabinetJournalProbe: Sendable {
    let path: String
    private let handle = Locked<DirectoryFiles.ReadHandle?>(nil)

    init(path: String) {
        self.path = path
    }

    /// What the file at ``path`` holds now, as ``TokyoCabinetJournalFile/contents(of:)`` says.
    func contents() throws -> TokyoCabinetJournalFile.Contents {
        try handle.withLock { handle in
            var status = stat()
            guard lstat(path, &status) == 0 else {
                guard errno == ENOENT else { throw DirectoryFiles.failure("stat", path) }
                handle = nil
                return .none
            }
            let identity = (UInt64(status.st_dev), UInt64(status.st_ino))
            if handle.map({ $0.identity != identity }) ?? true {
                // Opened anew (and checked a regular file, not followed through a link):
                // what is at the path now, even if it changed again since the lstat.
                handle = try DirectoryFiles.ReadHandle(path)
            }
            guard let file = handle else { return .none }
            return try TokyoCabinetJournalFile.contents(reading: file)
        }
    }
}
