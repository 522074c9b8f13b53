// The kill-point shim: an LD_PRELOAD library that counts the system calls that
// change files, and kills the process before the Nth (or makes it fail once).
// See docs/CRASHPOINTS.md. The two functions below are looked up with dlsym by
// the process under test, so it needs no link-time dependency on the shim.
#ifndef KILLPOINT_SHIM_H
#define KILLPOINT_SHIM_H

/// Starts counting (when CABINET_KILLPOINT_ARM=wait held counting back at start).
void cabinet_killpoint_arm(void);
/// Stops counting: later calls are neither counted, killed nor failed.
void cabinet_killpoint_disarm(void);

#endif
