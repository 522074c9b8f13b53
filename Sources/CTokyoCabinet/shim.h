#ifndef CABINET_CTOKYOCABINET_SHIM_H
#define CABINET_CTOKYOCABINET_SHIM_H
// Tokyo Cabinet's headers assume these are already included.
#include <stdbool.h>
#include <stdint.h>
#include <tcutil.h>
#include <tchdb.h>
#include <tcbdb.h>

/// Asks the CPU to bring the cache line holding `address` in, for a read soon:
/// a hint that never faults, whatever the address (`TokyoCabinetLookup.prefetch`
/// warms the records of a batch of lookups with it, so their cache misses overlap).
static inline void cabinet_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}
#endif
