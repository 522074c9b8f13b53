@testable import Cabinet
import CabinetStorage
import Foundation
import Testing

/// Every way of opening a store, read-only or not, succeeded or refused, gives
/// back every file it opened when it ends: a service that inspects a store
/// every few seconds must not run out of descriptors.
@Suite struct HandleLeakTests {
    /// The descriptors this process holds on files under `directory` (other
    /// tests run in parallel, so only this test's files are counted).
    private func openFiles(under directory: String) -> [String] {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0) }
            .filter { $0.hasPrefix(directory + "/") || $0 == directory }
    }

    @Test func readingOpensCloseEveryFile() throws {
        let directory = try makeSongStore(songs: 3)
        for _ in 0..<5 {
            let reader = try ObjectStore(path: directory.path, readOnly: true)
            try reader.register(Song.self, Playlist.self)
            #expect(try reader.fetchAll(Song.self).count == 3)
            #expect(!openFiles(under: directory.path).isEmpty, "the reader has its files open")
            reader.close()
            #expect(openFiles(under: directory.path) == [])
            _ = try StoreInfo(path: directory.path)
            _ = try StoreVerifier.verify(path: directory.path)
            #expect(openFiles(under: directory.path) == [])
        }
    }

    @Test func aStoreDroppedWithoutCloseClosesItsFiles() throws {
        let directory = try makeSongStore(songs: 2)
        for readOnly in [true, false] {
            do {
                let store = try ObjectStore(path: directory.path, readOnly: readOnly)
                try store.register(Song.self, Playlist.self)
                #expect(try store.fetchAll(Playlist.self).first?.songs.count == 2)
            }
            #expect(openFiles(under: directory.path) == [], "readOnly: \(readOnly)")
        }
    }

    @Test func aRefusedReadOnlyOpenClosesWhatItOpened() throws {
        let directory = try makeSongStore(songs: 2)
        try Data(WriteBatch().encoded()).write(to: URL(fileURLWithPath: directory.path + "/" + TokyoCabinetBackend.journalFileName))
        for _ in 0..<3 {
            #expect(throws: CabinetError.self) { _ = try ObjectStore(path: directory.path, readOnly: true) }
            #expect(openFiles(under: directory.path) == [])
        }
        // A class whose file a read-only store cannot create: refused at register, nothing left open.
        try FileManager.default.removeItem(atPath: directory.path + "/" + TokyoCabinetBackend.journalFileName)
        let reader = try ObjectStore(path: directory.path, readOnly: true)
        #expect(throws: CabinetError.self) { try reader.register(Album.self) }
        reader.close()
        #expect(openFiles(under: directory.path) == [])
    }
}
