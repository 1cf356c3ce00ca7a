/* version.c -- the library's version at run time (sps_version), which may
 * differ from the SPS_VERSION_* macros a program was compiled with: the
 * header's are the build's, these the loaded library's (docs/abi.md). */
#include "core/core.h"

/* Returns the version this library was built as, e.g. "0.1.0" (static). */
const char *sps_version(void) { return SPS_VERSION_STRING; }

/* Returns SPS_VERSION_NUMBER of this library, e.g. 1000 for 0.1.0. */
long sps_version_number(void) { return SPS_VERSION_NUMBER; }
