/* emit.h -- emitters: integrations told of every region begin and end, on
 * every thread, while they are on -- whether a session records or not
 * (issue 38: NVTX ranges for Nsight Systems, ITT tasks for VTune).  The
 * core never names an emitter: each integration (src/ext/emit_nvtx.c,
 * src/ext/emit_itt.c) fills an sps__emit_ops_t and turns it on and off
 * with sps__emit_set; core/emit.c keeps the table and makes the hot path
 * take its out-of-line branch while any emitter is on (sps__active holds
 * a state other than SPS__EVENTS then, also without a session), where
 * sps__emit_begin / sps__emit_end call them.
 *
 * Cost: with every emitter off, nothing (the hot path is as before).  With
 * one on: the out-of-line path plus the emitter's own call. */
#ifndef SPS_CORE_EMIT_H
#define SPS_CORE_EMIT_H

#include "spanscope.h"
#include "util/util.h"

#define SPS__EMIT_MAX 4 /* emitters that can be registered in a process */

/* One emitter.  Its functions run on the thread that called sps_begin /
 * sps_end (any thread; concurrently on several), must not call back into
 * spanscope's begin/end, and must be cheap when no tool is attached.
 * begin runs before the begin's timestamp is taken and end after the
 * end's, so what they cost is not the span's own time. */
typedef struct sps__emit_ops {
    const char *name;              /* "nvtx", "itt": for messages */
    void (*begin)(sps_region_t r); /* region r begins on this thread */
    void (*end)(sps_region_t r);   /* region r ends on this thread */
} sps__emit_ops_t;

/* Turns ops on (on != 0) or off; the first call for an ops registers it
 * (ops must stay valid for the life of the process).  Any thread; takes
 * effect for begins and ends that start after it returns.  An emitter
 * turned off while a region it saw begin is still open does not see that
 * region's end (its tool closes what is left open, as NVTX and ITT do at
 * thread exit).  0, SPS_EINVAL (ops or a function NULL) or SPS_ENOMEM
 * (SPS__EMIT_MAX emitters registered already). */
SPS__HIDDEN int sps__emit_set(const sps__emit_ops_t *ops, int on);

/* Whether ops is on now. */
SPS__HIDDEN int sps__emit_on(const sps__emit_ops_t *ops);

/* Added with the implementation (core/emit.c), beside the contract above. */

/* The out-of-line path (buffer.c): calls every emitter on, begins in
 * registration order, ends in the reverse order. */
SPS__HIDDEN void sps__emit_begin(sps_region_t r);
SPS__HIDDEN void sps__emit_end(sps_region_t r);

/* The label the begin being emitted on this thread carries (sps_emit_label:
 * the shapes of a Python record_function with emit_nvtx(record_shapes=
 * True)), NUL-terminated, or NULL for none.  For an emitter's begin. */
SPS__HIDDEN const char *sps__emit_label(void);

/* An emitter that knows it has nothing to do for the rest of the process
 * (NVTX or ITT with no tool attached: their calls are no-ops) says so,
 * from any thread but not holding the session lock (it takes it): it
 * stays on for sps__emit_on and sps_emit_active, but the hot path stops
 * calling it, and with no other emitter on takes its fast path again. */
SPS__HIDDEN void sps__emit_idle(const sps__emit_ops_t *ops);

/* The public face (sps_emit_set, sps_emit_active, sps_config_t.emit)
 * reaches an integration by its public bit (SPS_EMIT_NVTX, SPS_EMIT_ITT):
 * each integration built names its ops with sps__emit_provide from a
 * constructor (a static link keeps its object through CMake's
 * --undefined, as the sampler's); bit must be one SPS_EMIT_* bit. */
SPS__HIDDEN void sps__emit_provide(unsigned bit, const sps__emit_ops_t *ops);
/* 0 when every bit of what is known and built, SPS_EINVAL for a bit the
 * header does not name, SPS_ENOTSUP for one this build lacks. */
SPS__HIDDEN int sps__emit_check(unsigned what);

#endif /* SPS_CORE_EMIT_H */
