import Foundation

/// The songs and playlists of issue 15's workloads, the same for every engine,
/// made so that each query finds a known number of them at any size.
///
/// Song `i` of `n` (its row is `i + 2` in Cabinet, `id = i + 1` in SQLite) takes
/// each property from its own permutation of `0..<n` (`i × stride mod n`, the
/// stride a prime coprime with `n`), so that the songs one query finds are
/// spread over the whole file, as real data is, and not neighbours:
///
/// - artist: `Artist k`, exactly 10 songs each (`k = permutation / 10`);
/// - seconds: `0..<n/10`, exactly 10 songs each, so a range of 100 values holds 1,000;
/// - added: a date a minute apart per song, `nil` for one song in 100;
/// - title: three words, one from each of ``firstWords`` (32), ``secondWords``
///   (32) and ``thirdWords`` (64), in that order. A pair of a first and a second
///   word is in one title of 1,024: ~977 of 1M. Each of the two words is in
///   one title of 32 (31,250 of 1M): a query pairing two common words, as
///   "love song" would be in a catalogue.
///
/// Playlist `p` holds `size` songs of a pool of `n/10` songs (every tenth of
/// the catalogue, in a permuted order), a run of consecutive pool songs from
/// `p × size`, wrapping: with 10,000 playlists of 100, each pool song is in
/// exactly 10 playlists, and never twice in one.
public enum IndexedSpeedData {
    /// Songs per artist, and per value of seconds.
    public static let songsPerValue = 10
    /// The width of a range query on seconds: 100 values of 10 songs.
    public static let rangeWidth = 100

    // MARK: Songs

    public static func artist(_ i: Int, of n: Int) -> String {
        "Artist \(permuted(i, n, stride: 1_000_003) / songsPerValue)"
    }

    public static func seconds(_ i: Int, of n: Int) -> UInt32 {
        UInt32(permuted(i, n, stride: 999_983) / songsPerValue)
    }

    public static func added(_ i: Int, of n: Int) -> Date? {
        i % 100 == 99 ? nil : Date(timeIntervalSince1970: 1_500_000_000 + 60 * Double(permuted(i, n, stride: 999_979)))
    }

    public static func title(_ i: Int, of n: Int) -> String {
        let (first, second, third) = titleWords(i, of: n)
        return "\(firstWords[first].capitalized) \(secondWords[second]) \(thirdWords[third])"
    }

    /// The positions of song `i`'s title words in the three lists.
    static func titleWords(_ i: Int, of n: Int) -> (Int, Int, Int) {
        let j = permuted(i, n, stride: 1_000_033)
        return (j % firstWords.count, (j / firstWords.count) % secondWords.count,
                (j / (firstWords.count * secondWords.count)) % thirdWords.count)
    }

    /// What a query adds to the checksum for a song it finds.
    public static func songChecksum(title: String, seconds: UInt32) -> UInt64 {
        stableHash(title) &+ UInt64(seconds)
    }

    // MARK: Playlists

    public static func playlistTitle(_ p: Int) -> String { "Indexed Playlist \(p)" }

    /// The songs (catalogue positions) of playlist `p`, `size` of them.
    public static func playlistSongs(_ p: Int, size: Int, songs n: Int) -> [Int] {
        let pool = poolSize(n)
        return (0..<min(size, pool)).map { poolSong((p * size + $0) % pool, songs: n) }
    }

    static func poolSize(_ n: Int) -> Int { max(1, n / songsPerValue) }

    /// The catalogue position of pool song `k`.
    static func poolSong(_ k: Int, songs n: Int) -> Int {
        permuted(k, poolSize(n), stride: 7_919) * (n / poolSize(n))
    }

    // MARK: Queries

    /// The artist query `q` asks for.
    public static func queryArtist(_ q: Int, songs n: Int) -> String {
        "Artist \(permuted(q % poolSize(n), poolSize(n), stride: 104_729))"
    }

    /// The seconds query `q` asks for: `rangeWidth` values, inside `0..<n/10` when it is wide enough.
    public static func querySeconds(_ q: Int, songs n: Int) -> ClosedRange<UInt32> {
        let values = poolSize(n)
        let start = values > rangeWidth ? permuted(q % values, values, stride: 104_729) % (values - rangeWidth) : 0
        return UInt32(start)...UInt32(start + rangeWidth - 1)
    }

    /// The two words query `q` searches for: a first word and a second word, every pair in turn.
    public static func queryWords(_ q: Int) -> (String, String) {
        let pair = q % (firstWords.count * secondWords.count)
        return (firstWords[pair % firstWords.count], secondWords[pair / firstWords.count])
    }

    /// The song (catalogue position) whose playlists query `q` asks for.
    public static func querySong(_ q: Int, songs n: Int) -> Int {
        poolSong(permuted(q % poolSize(n), poolSize(n), stride: 104_729), songs: n)
    }

    // MARK: Permutations

    /// `i × stride mod n`, with `stride` moved up to the next number coprime with `n`: a permutation of `0..<n`.
    static func permuted(_ i: Int, _ n: Int, stride: Int) -> Int {
        guard n > 1 else { return 0 }
        var step = stride % n
        while gcd(step, n) != 1 { step += 1 }
        return (i % n) * step % n
    }

    private static func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }

    // MARK: Words

    /// The first word of every title.
    public static let firstWords = [
        "love", "blue", "little", "sweet", "lonely", "golden", "wild", "broken", "silver", "crazy", "midnight", "summer",
        "electric", "burning", "velvet", "hollow", "lucky", "restless", "shining", "secret", "distant", "tender", "frozen",
        "holy", "neon", "paper", "quiet", "rolling", "sacred", "savage", "wicked", "younger",
    ]

    /// The second word of every title.
    public static let secondWords = [
        "heart", "river", "road", "night", "fire", "rain", "dream", "girl", "train", "moon", "city", "angel", "highway",
        "window", "garden", "ocean", "shadow", "thunder", "letter", "mirror", "morning", "desert", "island", "kingdom",
        "ladder", "lantern", "meadow", "harbor", "orchard", "prairie", "canyon", "valley",
    ]

    /// The third word of every title.
    public static let thirdWords = [
        "again", "tonight", "forever", "blues", "song", "ballad", "waltz", "reprise", "remix", "live", "acoustic", "demo",
        "revisited", "calling", "falling", "rising", "dancing", "waiting", "running", "turning", "singing", "crying",
        "dreaming", "flying", "leaving", "glowing", "fading", "shaking", "swinging", "breaking", "drifting", "rocking",
        "home", "away", "down", "above", "below", "within", "beyond", "together", "alone", "apart", "outside", "inside",
        "eternal", "parade", "anthem", "lullaby", "serenade", "hymn", "shuffle", "boogie", "stomp", "rag", "march",
        "overture", "interlude", "finale", "prelude", "nocturne", "rhapsody", "sonata", "chorus", "refrain",
    ]
}
