import CTokyoCabinetYields
#if canImport(Glibc)
import Glibc
#endif

/// Makes Tokyo Cabinet's own calls of `sched_yield(2)` return at once, in this
/// process, leaving every other caller of `sched_yield` as it was.
///
/// Why: Debian's `libtokyocabinet9` is built in Tokyo Cabinet's "micro yield"
/// mode (its `--enable-uyield`, meant for finding race conditions while
/// developing it), in which its asserts and conditionals count up a global
/// counter and call `sched_yield` each time its low byte wraps. Those calls
/// order nothing (Tokyo Cabinet's locks are its mutexes and read-write locks;
/// no loop of it waits by yielding); they only cost a system call, a few per
/// record: 9 per song of an indexed insert, about one per object of an index
/// range query; skipping them halves a million-object save (BENCHMARKS.md,
/// "Tokyo Cabinet's yields skipped").
///
/// How: the library's import slot for `sched_yield` (its PLT's entry in the
/// global offset table) is pointed at a function that returns 0, found through
/// the dynamic loader's description of the loaded library, every address checked
/// against its segments before it is read. Nothing else in the process changes:
/// not libc, not the program's other libraries. The code the slot then points to
/// is kept loaded for good (a plugin that links Cabinet and is unloaded leaves it
/// mapped). If the library is not one this
/// can read (linked statically, its import table read-only after loading, another
/// architecture, an import someone else already redirected), nothing changes and
/// Tokyo Cabinet runs as it was built.
///
/// Cabinet calls ``skip()`` before it opens any Tokyo Cabinet file; a program that
/// calls Tokyo Cabinet's C API itself before opening a store can call it first:
///
/// ```swift
/// TokyoCabinetYields.skip()
/// let hdb = tchdbnew()
/// ```
///
/// To keep the yields, set `CABINET_TOKYO_CABINET_YIELDS=keep` in the
/// environment before the first store opens.
public enum TokyoCabinetYields {
    /// What this process does with Tokyo Cabinet's yields.
    public enum State: Sendable, Equatable, CustomStringConvertible {
        /// Tokyo Cabinet's calls of `sched_yield` return at once (or it makes none).
        case skipped
        /// They are left as the library was built, and why.
        case kept(reason: String)

        public var description: String {
            switch self {
            case .skipped: return "skipped"
            case .kept(let reason): return "kept: \(reason)"
            }
        }
    }

    /// The environment variable that keeps the yields: `CABINET_TOKYO_CABINET_YIELDS=keep`.
    public static let environmentVariable = "CABINET_TOKYO_CABINET_YIELDS"

    /// Skips Tokyo Cabinet's yields in this process. Safe to call from any
    /// thread, while other threads use Tokyo Cabinet. Each call looks at the
    /// slot again (a few microseconds): a thread whose first call into Tokyo
    /// Cabinet's `sched_yield` was being bound by the dynamic loader at that
    /// moment may have bound it to the real one, and the next call puts it back.
    @discardableResult
    public static func skip() -> State { install(keeping: keeping) }

    /// Whether the environment asked to keep the yields, read once.
    private static let keeping: Bool = keeps(environmentValue: getenv(environmentVariable).map { String(cString: $0) })

    /// Whether `value`, the environment variable's, asks to keep the yields.
    package static func keeps(environmentValue value: String?) -> Bool {
        value?.lowercased() == "keep"
    }

    static func install(keeping: Bool) -> State {
        if keeping { return .kept(reason: "\(environmentVariable)=keep") }
        switch cabinet_tc_skip_yields() {
        case CABINET_TC_YIELDS_SKIPPED, CABINET_TC_YIELDS_NONE:
            return .skipped
        case CABINET_TC_YIELDS_NO_LIBRARY:
            return .kept(reason: "no shared libtokyocabinet is loaded (linked statically?)")
        case CABINET_TC_YIELDS_CHANGED_ELSEWHERE:
            return .kept(reason: "libtokyocabinet's import of sched_yield was redirected by someone else")
        default:
            return .kept(reason: "libtokyocabinet's import of sched_yield is read-only or not one this reads")
        }
    }

    /// How many times Tokyo Cabinet called `sched_yield` since its calls were skipped.
    package static var skippedYields: Int { cabinet_tc_skipped_yields() }

    /// For tests: the slot back at the real `sched_yield`, as a lazy binding
    /// that raced ``skip()`` leaves it; `true` if it was skipped before.
    package static func putBackForTesting() -> Bool { cabinet_tc_put_back_yields() == 1 }

    /// Whether libtokyocabinet's import of function `name` is the function that
    /// skips yields (`nil`: it imports no such function through its PLT).
    package static func importIsSkipped(_ name: String) -> Bool? {
        switch cabinet_tc_import_is_skipped(name) {
        case 1: return true
        case 0: return false
        default: return nil
        }
    }
}
