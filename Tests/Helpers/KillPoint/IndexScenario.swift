// A save of indexed objects: records and index entries (value and full-text)
// change in one journaled save, so a kill between the class file and the
// index file must leave both old or both new. The dump prints what queries
// answer, and the dump's verify checks every index entry against the records.
import Cabinet

struct SaveIndexed: Scenario {
    let name = "save-indexed"
    let classes: [StoredObject.Type] = [Tune.self]
    static let artists = ["Queen", "ABBA", "Björk"]

    func prepare(_ work: Work) throws {
        let store = try open(work.store)
        defer { store.close() }
        for i in 0..<30 {
            let tune = Tune()
            tune.title = "tune \(i) walking on sunshine"
            tune.artist = SaveIndexed.artists[i % SaveIndexed.artists.count]
            store.insert(tune)
        }
        try store.save()
    }

    func run(_ work: Work, _ steps: Steps) throws {
        let store = try open(work.store)
        defer { store.close() }
        let tunes = try store.fetchAll(Tune.self).sorted { $0.rowID < $1.rowID }
        for tune in tunes[0..<4] { tune.artist = "Queen" }
        for tune in tunes[4..<7] { tune.title = "rain \(tune.rowID)" }
        for tune in tunes[7..<9] { store.delete(tune) }
        for i in 0..<3 {
            let tune = Tune()
            tune.title = "new sunshine \(i)"
            tune.artist = "Zappa"
            store.insert(tune)
        }
        steps.arm()
        try save(store, steps)
    }

    /// What the indexes answer: each artist's rows, and two searches.
    func dumpExtra(_ store: ObjectStore) throws -> [String] {
        var lines = try (SaveIndexed.artists + ["Zappa"]).map { artist in
            "artist \(artist): \(try store.fetch(Tune.self, where: \.artist, equals: artist).map(\.rowID))"
        }
        for query in ["sunshine", "rain*"] {
            lines.append("search \(query): \(try store.search(Tune.self, matching: query).map(\.rowID))")
        }
        let stale = try store.verifyIndexes()
        if !stale.isEmpty { lines.append("index problems: \(stale.map(\.description))") }
        return lines
    }
}
