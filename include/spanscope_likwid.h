/* spanscope_likwid.h -- LIKWID's marker API over spanscope regions.
 *
 * Programs annotated for LIKWID (likwid-marker.h's LIKWID_MARKER_* macros,
 * built with -DLIKWID_PERFMON) build unchanged against spanscope: put
 * <prefix>/include/likwid first on the include path (-I<prefix>/include/likwid)
 * and link libspanscope instead of liblikwid.  That directory's
 * likwid-marker.h includes this header, which maps every marker onto an
 * sps_likwid_* function below; each region tag becomes the spanscope region
 * of the same name (docs/likwid.md).
 *
 * What is kept of LIKWID's contract, and what is not:
 *   - Every function does nothing, and the int-returning ones return
 *     -EFAULT, before sps_likwid_init or after sps_likwid_close (LIKWID's
 *     "marker API not initialised" rule).
 *   - Region state is per thread, as LIKWID keeps it per hardware thread:
 *     a tag started on one thread is stopped on the same thread.
 *   - Registration is optional (LIKWID creates a region at its first
 *     start); registering only interns the name early.
 *   - Misuse is LIKWID's: a stop of a tag not started on this thread prints
 *     "WARN: Stopping an unknown/not-started region <tag>" on stderr and
 *     returns -EFAULT (nothing recorded); a start of a tag already started
 *     on this thread prints "WARN: Region <tag> was already started" and
 *     keeps the first start (LIKWID restarts the timer; spanscope cannot
 *     move the start of an open call, so the call counts once either way);
 *     a reset of a started region prints "ERROR: Can only reset stopped
 *     regions" and returns -EFAULT.  A NULL or empty tag returns -EINVAL
 *     (LIKWID would crash on NULL).
 *   - No hardware counters: spanscope measures time.  GET reports no
 *     events (*nr_events = 0) and this thread's call count and time.
 *   - Regions nest as spanscope regions do: stopping an outer tag while an
 *     inner one is open closes the inner call there (sps_misuse_count).
 *
 * Any thread may call any function once sps_likwid_init has returned;
 * sps_likwid_init and sps_likwid_close belong on one thread (the main one),
 * as in LIKWID.
 */
#ifndef SPANSCOPE_LIKWID_H
#define SPANSCOPE_LIKWID_H

#include "spanscope.h"

#ifdef __cplusplus
extern "C" {
#endif

/* LIKWID_MARKER_INIT.  Turns the marker API on.  When no spanscope session
 * is running it starts one from the environment (sps_setup_from_env:
 * SPANSCOPE_OUTPUT, default "spanscope_likwid.h5"; SPANSCOPE_CONFIG is
 * refused; SPANSCOPE_DEACTIVATE_PROFILING=1 leaves the markers on but
 * records nothing), which sps_likwid_close finalizes; a
 * session already running (the program's own, the Python face's) is used
 * as it is and left to its owner.  A bad SPANSCOPE_* variable is reported
 * on stderr in one line and the program runs unprofiled.  Calling it again
 * while on does nothing. */
SPS_API void sps_likwid_init(void);

/* LIKWID_MARKER_THREADINIT.  LIKWID pins the calling thread here; spanscope
 * needs nothing per thread (any thread records), so this only checks that
 * the marker API is on.  Harmless to call on any thread, any number of times. */
SPS_API void sps_likwid_thread_init(void);

/* LIKWID_MARKER_REGISTER(tag).  Interns the region named tag (the name the
 * spanscope region gets) and this thread's entry for it, so that the first
 * start costs no allocation.  0, -EFAULT when the API is off, -EINVAL for a
 * NULL or empty tag, -ENOMEM. */
SPS_API int sps_likwid_register(const char *tag);

/* LIKWID_MARKER_START(tag).  Begins a call of region tag on this thread
 * (sps_begin).  Unregistered tags are registered here.  0, or -EFAULT (API
 * off), -EINVAL, -ENOMEM; a tag already started on this thread warns and
 * returns 0 (LIKWID's return), keeping the call open since the first start. */
SPS_API int sps_likwid_start(const char *tag);

/* LIKWID_MARKER_STOP(tag).  Ends this thread's open call of tag (sps_end)
 * and adds it to the thread's count and time that sps_likwid_get reports.
 * 0; -EFAULT with LIKWID's warning when tag is not started on this thread;
 * -EFAULT when the API is off; -EINVAL for a NULL or empty tag. */
SPS_API int sps_likwid_stop(const char *tag);

/* LIKWID_MARKER_GET(tag, nevents, events, time, count).  This thread's
 * results for tag since INIT (or its last RESET): *count the completed calls
 * (stops), *time their summed duration in seconds, *nevents set to 0 (no
 * hardware events; events[] is never written).  An unknown tag, or the API
 * off, gives 0 everywhere (LIKWID's values).  Any pointer may be NULL. */
SPS_API void sps_likwid_get(const char *tag, int *nevents, double *events, double *time,
                            int *count);

/* LIKWID_MARKER_RESET(tag).  Zeroes this thread's count and time of tag
 * (what sps_likwid_get reports); the calls already recorded in the spanscope
 * session stay (a profile keeps every call).  0; -EFAULT when tag is started
 * (with LIKWID's message), unknown on this thread, or the API is off. */
SPS_API int sps_likwid_reset(const char *tag);

/* LIKWID_MARKER_SWITCH.  LIKWID moves to its next event group; spanscope
 * has one "group" (time), so nothing changes. */
SPS_API void sps_likwid_switch(void);

/* LIKWID_MARKER_CLOSE.  Turns the marker API off.  When sps_likwid_init
 * started the session, the session is finalized (its file written, an error
 * reported on stderr) and ended; otherwise it goes on for its owner.  Calls
 * still open stay open in the session.  Thread entries of threads that have
 * exited were already freed; the calling thread's are freed here. */
SPS_API void sps_likwid_close(void);

/* 1 between sps_likwid_init and sps_likwid_close, else 0. */
SPS_API int sps_likwid_is_on(void);

#ifdef __cplusplus
}
#endif

#endif /* SPANSCOPE_LIKWID_H */
