// What the campaign reads from a (damaged) store: each operation an app or a
// maintenance tool runs, one line each, with its answer or the error it threw.
// The driver compares the lines with those of the undamaged store.
import Cabinet
import Foundation

/// One operation's outcome: its answer as text, or the code of the error it threw.
enum Outcome {
    case answer(String)
    case error(String)

    var line: String {
        switch self {
        case .answer(let text): "ok \(text)"
        case .error(let code): "error \(code)"
        }
    }
}

/// Reads everything from the store at `path` and prints one line per operation.
/// Errors are answers here: only a trap, a crash or a hang is not.
func probe(_ path: String) {
    var faultErrors: [CabinetError] = []
    func run(_ name: String, _ body: () throws -> String) {
        let before = faultErrors.count
        let outcome: Outcome
        do {
            let answer = try body()
            // A fault that could not load is an error the getter could not throw.
            outcome = faultErrors.count > before ? .error(faultErrors[before].code.rawValue) : .answer(answer)
        } catch let error as CabinetError {
            outcome = .error(error.code.rawValue)
        } catch {
            outcome = .error("not a CabinetError: \(type(of: error))")
        }
        print("\(name)\t\(outcome.line)")
    }
    func rows(_ objects: [StoredObject]) -> String { objects.map { String($0.rowID) }.joined(separator: ",") }

    let store: ObjectStore
    do {
        store = try ObjectStore(path: path)
        store.faultErrorHandler = { faultErrors.append($0) }
        try store.register(classes)
    } catch let error as CabinetError {
        print("open\t\(Outcome.error(error.code.rawValue).line)")
        maintenance(path, run)
        return
    } catch {
        print("open\terror not a CabinetError: \(error)")
        return
    }
    print("open\tok")
    run("songs") {
        try store.fetchAll(Song.self).sorted { $0.rowID < $1.rowID }
            .map { "\($0.rowID):\($0.title)|\($0.artist)|\($0.seconds)" }.joined(separator: ";")
    }
    run("enumerate") {
        var lines: [String] = []
        try store.enumerate(Song.self) { song, _ in lines.append("\(song.rowID):\(song.title)") }
        return lines.sorted().joined(separator: ";")
    }
    run("playlists") {
        try store.fetchAll(Playlist.self).sorted { $0.rowID < $1.rowID }
            .map { "\($0.rowID):\($0.title)[\(rows($0.songs))]" }.joined(separator: ";")
    }
    run("shelves") {
        try store.fetchAll(Shelf.self).sorted { $0.rowID < $1.rowID }
            .map { "\($0.rowID):\($0.name):\($0.songs.count)[\($0.songs.map { "\($0.rowID)=\($0.title)" }.joined(separator: ","))]" }
            .joined(separator: ";")
    }
    run("artist") { rows(try store.fetch(Song.self, where: \.artist, equals: "artist7")) }
    run("count") { String(try store.count(Song.self, where: \.artist, equals: "artist11")) }
    run("range") { rows(try store.fetch(Song.self, where: \.seconds, in: 100...180)) }
    run("range-down") { rows(try store.fetch(Song.self, where: \.seconds, in: 300...499, limit: 40, descending: true)) }
    run("search") { rows(try store.search(Song.self, matching: "word7 sunshine")) }
    run("search-prefix") { rows(try store.search(Song.self, matching: "caf*")) }
    run("search-cjk") { rows(try store.search(Song.self, matching: "東京")) }
    run("contains") {
        guard let song = try store.fetch(Song.self, rowID: 2 + 13) else { return "no song" }
        return rows(try store.fetch(Playlist.self, where: \.songs, contains: song))
    }
    for name in bufferNames {
        run("buffer \(name)") {
            guard let buffer = try store.namedBuffer(forName: name) else { return "none" }
            return buffer.allBytes.map { String(format: "%02x", $0) }.joined()
        }
    }
    run("verifyIndexes") { String(try store.verifyIndexes().count) }
    save(store, run)
    store.close()
    maintenance(path, run)
}

/// What `cabinet verify` and `cabinet info` read, through the same API.
func maintenance(_ path: String, _ run: (String, () throws -> String) -> Void) {
    run("verify") { try StoreVerifier.verify(path: path).isEmpty ? "clean" : "damage found" }
    run("info") { try StoreInfo(path: path).tables.map { "\($0.name)=\($0.records)" }.sorted().joined(separator: ",") }
}

/// A save over the (damaged) store, then what it changed read back: a save's
/// writes go through Tokyo Cabinet, which loads the pages and records they
/// change, so a damaged one must fail the save with an error, not end the process.
func save(_ store: ObjectStore, _ run: (String, () throws -> String) -> Void) {
    var saveFailed: CabinetError?
    run("save") {
        // Any error of this step (a read before the save too) means nothing was saved.
        do { return try changeAndSave(store) } catch let error as CabinetError {
            saveFailed = error
            throw error
        }
    }
    run("after save") {
        // What a failed save changed is nothing: no answer to compare, its error stands for it.
        if let saveFailed { throw saveFailed }
        let renamed = try store.fetch(Song.self, where: \.artist, equals: "renamed").map { String($0.rowID) }
        let found = try store.search(Song.self, matching: "nightingale").map { String($0.rowID) }
        return renamed.joined(separator: ",") + " / " + found.joined(separator: ",")
    }
}

/// The save of ``save(_:_:)``: one song renamed, retitled and re-timed, one
/// deleted, one inserted and appended to the first shelf's list, a named buffer
/// replaced. Returns the new song's row.
private func changeAndSave(_ store: ObjectStore) throws -> String {
    guard let song = try store.fetch(Song.self, rowID: 2 + 40) else { return "no song 42" }
    guard let other = try store.fetch(Song.self, rowID: 2 + 41) else { return "no song 43" }
    guard let shelf = try store.fetchAll(Shelf.self).min(by: { $0.rowID < $1.rowID }) else { return "no shelf" }
    song.artist = "renamed"
    song.seconds = 777
    song.title = "retitled nightingale"
    store.delete(other)
    let added = Song()
    added.title = "added nightingale"
    added.artist = "renamed"
    store.insert(added)
    shelf.songs.append(added)
    try store.setNamedBuffer(DataBuffer(bytes: [1, 2, 3]), forName: bufferNames[0])
    try store.save()
    return "saved \(added.rowID)"
}
