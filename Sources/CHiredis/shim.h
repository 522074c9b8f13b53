#ifndef CABINET_CHIREDIS_SHIM_H
#define CABINET_CHIREDIS_SHIM_H
// Debian's libhiredis-dev (0.14): the synchronous API only.
#include <hiredis/hiredis.h>
#endif
