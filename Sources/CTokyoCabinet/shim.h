#ifndef CABINET_CTOKYOCABINET_SHIM_H
#define CABINET_CTOKYOCABINET_SHIM_H
// Tokyo Cabinet's headers assume these are already included.
#include <stdbool.h>
#include <stdint.h>
#include <tcutil.h>
#include <tchdb.h>
#include <tcbdb.h>
#endif
