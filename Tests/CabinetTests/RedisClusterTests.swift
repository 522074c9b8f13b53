import Cabinet
import CabinetRedis
import Foundation
import Testing

/// A real Redis Cluster of three masters on loopback ports: stores land on
/// different nodes (each whole on the node of its hash tag's slot), every
/// operation works through whichever node the URL names, and a store whose
/// slot moves to another node is followed there.
@Suite struct RedisClusterTests {
    typealias Server = RedisBackendTests.OwnServer

    /// Starts three cluster-enabled servers and joins them with `redis-cli --cluster create`.
    static func makeCluster() throws -> [Server] {
        let servers = try (0..<3).map { _ in
            try Server(["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "2000"])
        }
        let create = Process()
        create.executableURL = URL(fileURLWithPath: "/usr/bin/redis-cli")
        create.arguments = ["--cluster", "create"] + servers.map { "127.0.0.1:\($0.port)" } + ["--cluster-replicas", "0", "--cluster-yes"]
        create.standardOutput = FileHandle.nullDevice
        create.standardError = FileHandle.nullDevice
        try create.run()
        create.waitUntilExit()
        #expect(create.terminationStatus == 0, "redis-cli --cluster create")
        for _ in 0..<400 where !servers.allSatisfy({ $0.cli("CLUSTER", "INFO").contains("cluster_state:ok") }) { usleep(25_000) }
        return servers
    }

    /// The server that owns `store`'s slot: the one that does not answer MOVED.
    static func owner(of store: String, in servers: [Server]) -> Int? {
        servers.firstIndex { !$0.cli("EXISTS", "{\(store)}/version").contains("MOVED") }
    }

    @Test func storesLandOnDifferentNodesAndEveryOperationWorksThroughAnyNode() throws {
        let servers = try Self.makeCluster()
        // Two stores for each node, chosen by where their names hash.
        var stores: [(name: String, node: Int)] = []
        for candidate in 0..<200 where stores.count < 6 {
            let name = "cluster-\(candidate)"
            guard let node = Self.owner(of: name, in: servers), stores.filter({ $0.node == node }).count < 2 else { continue }
            stores.append((name, node))
        }
        #expect(Set(stores.map(\.node)).count == 3, "each of the three nodes holds stores")
        for (index, entry) in stores.enumerated() {
            // Opened through a node that is not the store's: MOVED leads the way.
            let entrance = servers[(entry.node + 1) % 3]
            let store = try ObjectStore(backend: RedisBackend(url: "redis://127.0.0.1:\(entrance.port)/0/\(entry.name)"))
            try store.register(Song.self, Playlist.self)
            let songs = (0..<25).map { number -> Song in let song = Song(); song.title = "\(entry.name) \(number)"; return song }
            for song in songs { store.insert(song) }
            let list = Playlist(); list.title = "list \(index)"; list.songs = songs
            store.insert(list)
            var buffer = DataBuffer(); buffer.writeString(entry.name)
            try store.setNamedBuffer(buffer, forName: "Name")
            try store.save()
            songs[0].title = "changed"
            store.delete(songs[1])
            try store.save()
            try store.undoManager.undo()                      // the delete and the change come back
            try store.save()
            store.close()

            // Every key of the store is on its owner, none on the others.
            #expect(servers[entry.node].cli("EXISTS", "{\(entry.name)}:Song").hasPrefix("1"))
            for other in servers.indices where other != entry.node {
                #expect(servers[other].cli("EXISTS", "{\(entry.name)}:Song").contains("MOVED"))
            }
            let again = try ObjectStore(backend: RedisBackend(url: "redis://127.0.0.1:\(servers[(entry.node + 2) % 3].port)/0/\(entry.name)"))
            try again.register(Song.self, Playlist.self)
            #expect(try again.fetchAll(Playlist.self).first?.songs.map(\.title) == songs.map(\.title))
            var page: [String] = []
            try again.enumerate(Song.self, startingAfter: songs[20].rowID) { song, _ in page.append(song.title) }
            #expect(page == songs[21...].map(\.title))
            var name = try #require(try again.namedBuffer(forName: "Name"))
            #expect(try name.readString() == entry.name)
            again.close()
            let backend = try RedisBackend(url: "redis://127.0.0.1:\(entrance.port)/0/\(entry.name)")
            #expect(try StoreVerifier.verify(backend).isEmpty)
            #expect(try backend.storageProblems().isEmpty)
            backend.close()
        }
        // A copy from a store on one node to a store on another.
        let (from, to) = (stores[0], stores.first { $0.node != stores[0].node }!)
        let source = try RedisBackend(url: "redis://127.0.0.1:\(servers[0].port)/0/\(from.name)")
        let target = try RedisBackend(url: "redis://127.0.0.1:\(servers[0].port)/0/\(to.name)")
        try ObjectStore.restore(from: source, to: target)
        source.close(); target.close()
        let copied = try ObjectStore(backend: RedisBackend(url: "redis://127.0.0.1:\(servers[1].port)/0/\(to.name)"))
        try copied.register(Song.self, Playlist.self)
        #expect(try copied.fetchAll(Song.self).map(\.title).sorted() == (0..<25).map { "\(from.name) \($0)" }.sorted())
        copied.close()
    }

    @Test func aStoreWhoseSlotMovesToAnotherNodeIsFollowedThere() throws {
        let servers = try Self.makeCluster()
        let name = "moving"
        let first = try #require(Self.owner(of: name, in: servers))
        let store = try ObjectStore(backend: RedisBackend(url: "redis://127.0.0.1:\(servers[first].port)/0/\(name)"))
        try store.register(Song.self)
        let song = Song(); song.title = "before the move"
        store.insert(song)
        try store.save()

        // Move the slot by hand, as `redis-cli --cluster reshard` does.
        let second = (first + 1) % 3
        let slot = servers[first].cli("CLUSTER", "KEYSLOT", "{\(name)}").trimmingCharacters(in: .whitespacesAndNewlines)
        let sourceID = servers[first].cli("CLUSTER", "MYID").trimmingCharacters(in: .whitespacesAndNewlines)
        let targetID = servers[second].cli("CLUSTER", "MYID").trimmingCharacters(in: .whitespacesAndNewlines)
        servers[second].cli("CLUSTER", "SETSLOT", slot, "IMPORTING", sourceID)
        servers[first].cli("CLUSTER", "SETSLOT", slot, "MIGRATING", targetID)
        let keys = servers[first].cli("CLUSTER", "GETKEYSINSLOT", slot, "1000").split(separator: "\n").map(String.init)
        #expect(keys.count >= 4, "\(keys)")
        for key in keys {
            servers[first].cli("MIGRATE", "127.0.0.1", String(servers[second].port), key, "0", "5000")
        }
        for server in servers { server.cli("CLUSTER", "SETSLOT", slot, "NODE", targetID) }
        #expect(Self.owner(of: name, in: servers) == second)

        // The open store's next save and read go to the new owner.
        song.title = "after the move"
        try store.save()
        let other = Song(); other.title = "new"
        store.insert(other)
        try store.save()
        store.close()
        let reader = try ObjectStore(backend: RedisBackend(url: "redis://127.0.0.1:\(servers[first].port)/0/\(name)"))
        try reader.register(Song.self)
        #expect(try reader.fetchAll(Song.self).map(\.title).sorted() == ["after the move", "new"])
        reader.close()
        #expect(servers[second].cli("EXISTS", "{\(name)}:Song").hasPrefix("1"))
    }
}
