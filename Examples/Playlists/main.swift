// playlists: a small music library on Cabinet.
//
//   playlists STORE add-song TITLE SECONDS
//   playlists STORE new-playlist NAME
//   playlists STORE add-to NAME TITLE...
//   playlists STORE move NAME FROM TO        (positions start at 1)
//   playlists STORE delete-song TITLE
//   playlists STORE list
import Cabinet
import Foundation

struct UsageError: Error, CustomStringConvertible {
    let description: String
}

func song(titled title: String, in store: ObjectStore) throws -> Song {
    guard let song = try store.fetchAll(Song.self).first(where: { $0.title == title }) else {
        throw UsageError(description: "no song titled '\(title)'")
    }
    return song
}

func playlist(named name: String, in store: ObjectStore) throws -> Playlist {
    guard let list = try store.fetchAll(Playlist.self).first(where: { $0.title == name }) else {
        throw UsageError(description: "no playlist named '\(name)'")
    }
    return list
}

func duration(_ seconds: UInt32) -> String {
    "\(seconds / 60):" + (seconds % 60 < 10 ? "0" : "") + "\(seconds % 60)"
}

func run(_ arguments: [String]) throws {
    guard arguments.count >= 2 else {
        throw UsageError(description: "usage: playlists STORE add-song|new-playlist|add-to|move|delete-song|list ...")
    }
    let store = try ObjectStore(path: arguments[0])
    defer { store.close() }
    try store.register(Song.self, Playlist.self)
    let command = arguments[1], rest = Array(arguments.dropFirst(2))

    switch (command, rest.count) {
    case ("add-song", 2):
        guard let seconds = UInt32(rest[1]) else { throw UsageError(description: "seconds must be a whole number") }
        let song = Song(); song.title = rest[0]; song.seconds = seconds
        store.insert(song)
        print("Added song \(song.rowID): \(song.title) (\(duration(seconds)))")
    case ("new-playlist", 1):
        let list = Playlist(); list.title = rest[0]
        store.insert(list)
        print("Created playlist '\(list.title)'")
    case ("add-to", 2...):
        let list = try playlist(named: rest[0], in: store)
        for title in rest.dropFirst() {
            list.songs.append(try song(titled: title, in: store))
        }
        print("'\(list.title)' now has \(list.songs.count) songs")
    case ("move", 3):
        let list = try playlist(named: rest[0], in: store)
        guard let from = Int(rest[1]), let to = Int(rest[2]),
              list.songs.indices.contains(from - 1), list.songs.indices.contains(to - 1) else {
            throw UsageError(description: "positions must be between 1 and \(list.songs.count)")
        }
        let moved = list.songs.remove(at: from - 1)
        list.songs.insert(moved, at: to - 1)
        print("Moved '\(moved.title)' to position \(to) of '\(list.title)'")
    case ("delete-song", 1):
        let doomed = try song(titled: rest[0], in: store)
        store.delete(doomed)     // Song.prepareForDelete takes it out of every playlist
        print("Deleted '\(rest[0])'")
    case ("list", 0):
        for list in try store.fetchAll(Playlist.self).sorted(by: { $0.rowID < $1.rowID }) {
            let total = list.songs.reduce(0) { $0 + $1.seconds }
            print("\(list.title) (\(list.songs.count) songs, \(duration(total)))")
            for (position, song) in list.songs.enumerated() {
                print("  \(position + 1). \(song.title) \(duration(song.seconds))")
            }
        }
        print("\(try store.count(of: Song.self)) songs in the library")
    default:
        throw UsageError(description: "unknown command or wrong arguments: \(command) \(rest.joined(separator: " "))")
    }
    try store.save()
}

do {
    try run(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("playlists: \(error)\n".utf8))
    exit(1)
}
