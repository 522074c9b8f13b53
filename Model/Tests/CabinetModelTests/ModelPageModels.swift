import Cabinet
import CabinetModel          // brings Cabinet with it
import Foundation

// docs/MODEL.md's samples, line for line (ModelPageTests checks that each is
// here), so that each compiles and its claims are tested. Each in a namespace
// of its own: the samples name every class Song or Album, as the page does.

/// The page's first sample: the macro's API, the names and shapes it keeps.
enum ModelPage {
    @StoredModel
    final class Song: StoredObject {
        var title = ""
        @Indexed var artist = ""
        @Indexed var seconds: UInt32 = 0
        @FullText var lyrics: String? = nil
        var added: Date? = nil
        var album: Album? = nil                 // to-one reference
        var tags: [String] = []
        @Transient var playCount = 0            // not stored
    }

    @StoredModel(version: 2)
    final class Album: StoredObject {
        var name = ""
        var songs: [Song] = []                  // ordered to-many, BNRPersistence's layout
        @Since(2) var year: UInt16 = 0          // records written by version 1 read it as 0; upgradeAll rewrites them
    }

    /// Album written by hand with what the page says the macro writes for it.
    final class HandAlbum: StoredObject {
        override class var storedName: String { "Album" }
        @Stored var name = ""
        @Stored var songs: [Song] = []
        @Stored var year: UInt16 = 0

        override func read(from buffer: inout Cabinet.DataBuffer) throws {
            self.name = try buffer.readString()
            self.songs = try buffer.readModelValue([Song].self)     // readReferences(to: Song.self)
            if buffer.version >= 2 {
                self.year = try buffer.readUInt16()
            } else {
                self.year = 0
            }
        }
        override func write(to buffer: inout Cabinet.DataBuffer) {
            buffer.writeString(self.name)
            buffer.writeModelValue(self.songs)                      // writeReferences(songs)
            buffer.writeUInt16(self.year)
        }
        override class var version: UInt8 { 2 }
        override class var layoutFingerprints: [UInt8: UInt32] {
            [1: 0x620750CB,      // String,[Song]         (see "Layout fingerprints")
             2: 0xCC61FC52]      // String,[Song],UInt16
        }
    }
}

/// The program as it shipped Album's version 1: the same Song (its `album`
/// the version-1 Album, as a store can hold only one class named Album).
enum ModelPageVersion1 {
    @StoredModel
    final class Song: StoredObject {
        var title = ""
        @Indexed var artist = ""
        @Indexed var seconds: UInt32 = 0
        @FullText var lyrics: String? = nil
        var added: Date? = nil
        var album: Album? = nil
        var tags: [String] = []
    }

    @StoredModel
    final class Album: StoredObject {
        var name = ""
        var songs: [Song] = []
    }
}

/// The page's version 3 of Album: the year widened, the old one read from older records.
enum ModelPageVersion3 {
    typealias Song = ModelPage.Song

    @StoredModel(version: 3)
    final class Album: StoredObject {
        var name = ""
        var songs: [Song] = []
        @Since(2) @Removed(in: 3) var year: UInt16 = 0
        @Since(3) var fullYear: Int32 = 0

        override func read(from buffer: inout DataBuffer) throws {
            try readStoredProperties(from: &buffer)
            if buffer.version < 3 { fullYear = Int32(year) }
        }
    }
}

/// The page's Album with its layouts declared: it compiles only while they match.
enum ModelPageDeclared {
    typealias Song = ModelPage.Song

    @StoredModel(version: 2, fingerprints: [1: 0x620750CB, 2: 0xCC61FC52])
    final class Album: StoredObject {
        var name = ""
        var songs: [Song] = []
        @Since(2) var year: UInt16 = 0
    }
}
