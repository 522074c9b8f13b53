#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A reader's side of ``CommitAnnouncements``: a thread that sleeps in
/// `poll` on an inotify descriptor watching the store directory, wakes when
/// the writer rewrites `.cabinet-commits`, and reports each new commit: the
/// tables it changed, or `nil` for everything (a number that jumped: commits
/// announced while this one was not looking). No polling while nothing
/// changes; `poll` times out every quarter of a second only to notice ``stop()``.
final class CommitWatcher: @unchecked Sendable {
    // @unchecked: `stopped` is guarded by `lock`; the descriptors and `last`
    // are the thread's alone once it started.
    private let directory: String
    private let handler: @Sendable (Set<String>?) -> Void
    private let lock = PlainMutex()
    private var stopped = false
    private let inotify: Int32
    private var last: UInt64?

    /// Starts watching `directory`; `nil` if inotify cannot (too many watches):
    /// the reader then sees changes at its next read only.
    init?(directory: String, handler: @escaping @Sendable (Set<String>?) -> Void) {
        self.directory = directory
        self.handler = handler
        inotify = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard inotify >= 0 else { return nil }
        let mask = UInt32(IN_MODIFY | IN_CREATE | IN_MOVED_TO)
        guard inotify_add_watch(inotify, directory, mask) >= 0 else {
            closeDescriptor(inotify)
            return nil
        }
        // Watching first, then reading: a commit in between is seen as a change of the number.
        last = readAnnouncement()?.number
        let thread = Thread { [self] in run() }
        thread.name = "Cabinet commit watcher"
        thread.start()
    }

    func stop() { lock.withLock { stopped = true } }

    private var isStopped: Bool { lock.withLock { stopped } }

    private func run() {
        defer { closeDescriptor(inotify) }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while !isStopped {
            var watched = pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)
            let ready = poll(&watched, 1, 250)
            guard ready > 0 else { continue }
            var announced = false
            while true {
                let count = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress, $0.count) }
                guard count > 0 else { break }
                announced = announced || CommitWatcher.names(in: buffer[0..<count]).contains(CommitAnnouncements.fileName)
            }
            if announced && !isStopped { report() }
        }
    }

    private func report() {
        guard let announcement = readAnnouncement(), announcement.number != last else { return }
        let missedSome = last.map { announcement.number != $0 &+ 1 } ?? true
        last = announcement.number
        handler(missedSome ? nil : announcement.tables)
    }

    private func readAnnouncement() -> CommitAnnouncements.Announcement? {
        let fd = open(directory + "/" + CommitAnnouncements.fileName, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { closeDescriptor(fd) }
        return CommitAnnouncements.read(fd)
    }

    /// The file names of the inotify events in `bytes` (`struct inotify_event`: wd, mask, cookie, len, name).
    static func names(in bytes: ArraySlice<UInt8>) -> [String] {
        var names: [String] = []
        var at = bytes.startIndex
        while bytes.endIndex - at >= 16 {
            let length = Int(bytes[at + 12..<at + 16].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
            guard bytes.endIndex - at - 16 >= length else { break }
            let name = bytes[at + 16..<at + 16 + length].prefix { $0 != 0 }
            names.append(String(decoding: name, as: UTF8.self))
            at += 16 + length
        }
        return names
    }
}
