#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Keeps a scan over a memory-mapped file in bounded resident memory.
///
/// A scan touches every page of the file's map, and touched pages of a mapped
/// file count as the process's resident memory. Handing the pages already read
/// back now and then keeps a scan of any size small. The map is shared, so the
/// pages stay in the kernel's page cache (nothing is lost or written); a page
/// still needed is simply mapped again. Both of Tokyo Cabinet's scans
/// (`tchdbforeach` and Cabinet's own reader of the record region) use it.
struct MappedPages {
    /// How many records a scan reads between releases.
    static let recordsPerRelease = 16_384
    private var recordsSinceRelease = 0

    /// Counts one record read; `true` once every ``recordsPerRelease`` records,
    /// when the caller should call ``release(_:length:)``.
    @inline(__always)
    mutating func countRecord() -> Bool {
        recordsSinceRelease &+= 1
        guard recordsSinceRelease == MappedPages.recordsPerRelease else { return false }
        recordsSinceRelease = 0
        return true
    }

    /// Hands back the whole pages of the first `length` bytes of the map at `map`.
    static func release(_ map: UnsafeMutableRawPointer, length: Int) {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let whole = length / page * page
        if whole > 0 { _ = madvise(map, whole, Int32(MADV_DONTNEED)) }
    }
}
