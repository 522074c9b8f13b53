// A save on a disk that fills up, in a process of its own (the file-size limit
// applies to the whole process):
//
//   cabinet-full-disk STORE MODE      MODE: one-file or several-files
//
// It saves 100 songs, then limits file sizes (RLIMIT_FSIZE) to just above what
// is on disk, and saves 20,000 more, which must fail. It prints what happened.
import Cabinet
import Foundation

final class Song: StoredObject {
    @Stored var title = ""
    override func read(from buffer: inout DataBuffer) throws { title = try buffer.readString() }
    override func write(to buffer: inout DataBuffer) { buffer.writeString(title) }
}

final class Tag: StoredObject {
    @Stored var name = ""
    override func read(from buffer: inout DataBuffer) throws { name = try buffer.readString() }
    override func write(to buffer: inout DataBuffer) { buffer.writeString(name) }
}

guard CommandLine.arguments.count == 3 else { exit(2) }
let path = CommandLine.arguments[1], severalFiles = CommandLine.arguments[2] == "several-files"
do {
    let store = try ObjectStore(path: path)
    store.undoManager.isEnabled = false
    try store.register(Song.self, Tag.self)
    for i in 0..<100 { let s = Song(); s.title = "good \(i)"; store.insert(s) }
    try store.save()

    // Writes past the limit now fail with EFBIG instead of killing the process.
    signal(SIGXFSZ, SIG_IGN)
    let used = try FileManager.default.contentsOfDirectory(atPath: path).map {
        (try FileManager.default.attributesOfItem(atPath: path + "/" + $0)[.size] as? Int) ?? 0
    }.max() ?? 0
    var limit = rlimit(rlim_cur: rlim_t(used + 4096), rlim_max: rlim_t.max)
    setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit)

    for i in 0..<20_000 {
        let s = Song(); s.title = String(repeating: "doomed \(i) ", count: 8); store.insert(s)
        if severalFiles { let t = Tag(); t.name = "tag \(i)"; store.insert(t) }
    }
    do {
        try store.save()
        print("save succeeded")
    } catch {
        print("save failed: \(error)")
        print("pending: \(store.hasUnsavedChanges)")
        print("songs in memory: \(try store.fetchAll(Song.self).count)")
        // Space comes back: the same changes save (Tokyo Cabinet's handle, marked
        // fatal by the failed write, must have been reopened).
        var unlimited = rlimit(rlim_cur: rlim_t.max, rlim_max: rlim_t.max)
        setrlimit(Int32(RLIMIT_FSIZE.rawValue), &unlimited)
        do {
            try store.save()
            print("retry saved")
        } catch {
            print("retry failed: \(error)")
        }
    }
    store.close()
} catch {
    print("error: \(error)")
    exit(1)
}
