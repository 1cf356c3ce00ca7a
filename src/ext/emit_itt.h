/* emit_itt.h -- the ITT emitter (src/ext/emit_itt.c, docs/nvtx-itt.md):
 * every region an ITT task in the "spanscope" domain while it is on. */
#ifndef SPS_EXT_EMIT_ITT_H
#define SPS_EXT_EMIT_ITT_H

#include "core/emit.h"

/* The ITT emitter's table (the one emit_itt.c's constructor names for
 * SPS_EMIT_ITT with sps__emit_provide; for tests that drive it directly).
 * Its first begin loads the ITT collector named by INTEL_LIBITTNOTIFY64,
 * if any, and creates the "spanscope" domain; without a collector begin
 * and end return at once.  NULL in a build without ITT (CMake SPS_ITT=OFF,
 * where sps_emit_set(SPS_EMIT_ITT, 1) answers SPS_ENOTSUP).  Any thread. */
SPS__HIDDEN const sps__emit_ops_t *sps__itt_emitter(void);
/* The constructor (declared for CMake's --undefined in static links). */
SPS__HIDDEN void sps__itt_provide(void);

#endif /* SPS_EXT_EMIT_ITT_H */
