#ifndef CABINET_CTOKYOCABINETYIELDS_H
#define CABINET_CTOKYOCABINETYIELDS_H
// Debian's Tokyo Cabinet is built in its "micro yield" mode (TC's configure
// option --enable-uyield, meant for finding race conditions while developing
// it): its asserts and conditionals count up a global counter and call
// sched_yield(2) whenever its low byte wraps. That is one system call per few
// records read or written. These functions point the
// library's own import of sched_yield at a function that returns at once,
// leaving every other caller of sched_yield in the process as it was.
// CabinetStorage's TokyoCabinetYields is the Swift side; docs/ARCHITECTURE.md says why.

#include <stddef.h>

/// What cabinet_tc_skip_yields found and did.
typedef enum {
    /// Tokyo Cabinet's calls of sched_yield now return at once (or already did).
    CABINET_TC_YIELDS_SKIPPED = 0,
    /// The loaded Tokyo Cabinet imports no sched_yield: a build without micro yields.
    CABINET_TC_YIELDS_NONE = 1,
    /// No shared library named libtokyocabinet defining tchdbnew is loaded
    /// (linked statically, or under another name): nothing is changed.
    CABINET_TC_YIELDS_NO_LIBRARY = 2,
    /// Its import table is read-only after loading (full RELRO), or its layout
    /// is one this code does not read (another architecture, damaged headers).
    CABINET_TC_YIELDS_UNSUPPORTED = 3,
    /// Its import of sched_yield points somewhere else than sched_yield or the
    /// library's own lazy-binding stub: someone else changed it, so it is left alone.
    CABINET_TC_YIELDS_CHANGED_ELSEWHERE = 4,
} cabinet_tc_yields_status;

/// Finds the loaded libtokyocabinet's slot for sched_yield and points it at a
/// function that returns 0 (whose code is then kept loaded for good). Reads
/// only the library's loaded segments, each address checked against them
/// before it is read; writes one aligned pointer (by compare-and-swap), in a
/// segment that is writable. May be called any number of times, from any
/// thread, while Tokyo Cabinet is used: each call checks the slot again.
cabinet_tc_yields_status cabinet_tc_skip_yields(void);

/// Whether the loaded libtokyocabinet's slot for `import_name` points at the
/// function that skips yields: 1 if it does, 0 if it does not, -1 if there is no such slot.
int cabinet_tc_import_is_skipped(const char *import_name);

/// For tests: points the slot back at the real sched_yield, as the dynamic
/// loader's lazy binding may when it races cabinet_tc_skip_yields. 1 if it did.
int cabinet_tc_put_back_yields(void);

/// How many times Tokyo Cabinet has called sched_yield since its calls were skipped.
long cabinet_tc_skipped_yields(void);

#endif
