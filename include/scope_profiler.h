/*
 * scope_profiler.h -- scope-profiler 0.7.5's C API, as a thin layer over
 * spanscope's C API (<spanscope.h>, the sps_ functions).  Link with
 * libspanscope:
 *
 *     cc -std=c99 example.c $(pkg-config --cflags --libs spanscope)
 *
 * or, with CMake, find_package(spanscope) and spanscope::spanscope.
 *
 *     #include <scope_profiler.h>
 *
 *     sp_init("profile", my_rank);          // rank 0 if you are serial
 *     int solve = sp_region("solve");       // resolve the name once
 *     for (int step = 0; step < nsteps; ++step) {
 *         sp_begin(solve);
 *         solve_system();
 *         sp_end(solve);
 *     }
 *     sp_finalize();                        // writes profile_rank00000.h5
 *
 * Every function of scope-profiler's own header is here, with its
 * signature and its documented behaviour; docs/scope-profiler-c.md lists
 * where this one differs, and why.  In short:
 *
 *   - Recording is spanscope's: sp_begin/sp_end are sps_begin/sps_end
 *     inlined at the call site (one load, one predictable branch and a call
 *     into the per-thread buffer; no lookup, no lock), so they cost what
 *     sps_begin/sps_end cost, and are thread-safe.
 *   - A region handle (the int sp_region returns) is spanscope's region id
 *     (an sps_region_t, >= 1), not an index 0..n-1; SP_INVALID_REGION is
 *     -1 as in scope-profiler, and sp_begin/sp_end ignore it.
 *   - spanscope has one recording session per process.  The first active
 *     profiler starts it (or joins one already running, e.g. Python's
 *     ProfileManager.setup in the same process: then one timeline holds
 *     both languages); the last one to finish ends the session it started.
 *     Each sp_profiler writes ITS OWN file, "<prefix>_rank<NNNNN>.h5", a
 *     scope-profiler schema-3 file that spanscope (`spanscope report`,
 *     sps_file_open) and scope-profiler (read_h5, `scope-profiler
 *     import-native`) both read; nesting (parents, self time) is the one
 *     fold's, per thread.  When the session is the profiler's alone (the
 *     face started it for sp_init's profiler, no other profiler joined) its
 *     finalize is the session's own streaming writer (sps_finalize_to: as
 *     fast, memory in threads not calls); otherwise, and for flush, the file
 *     is built from the profiler's regions' spans (sps_spans, 56 bytes a call
 *     while it runs) through sps_spans_write_h5.
 *   - The default profiler (sp_init) interns its region names as they are.
 *     A profiler of sp_create interns "<prefix>_rank<NNNNN>:<name>" in the
 *     session, so that two profilers' "solve" stay two regions (as two
 *     scope-profiler contexts are independent); its own file names the
 *     region "solve".
 *   - SP_OUTPUT_TRACE writes scope-profiler's native trace
 *     ("<prefix>_rank<NNNNN>.spt", version 2, the format
 *     `scope-profiler import-native` reads; spanscope reads it too:
 *     spanscope.results.read_trace / load_traces / convert_traces).
 *     HDF5 is the default, and always available.
 *   - Line sampling (sp_start_sampling) is spanscope's sampler
 *     (sps_sampling_start): every thread, not only one, by each thread's
 *     CPU time; "<prefix>_rank<NNNNN>.sps" in scope-profiler's format.
 *
 * Thread rules: sp_begin/sp_end, sp_profiler_begin/end, the scopes and the
 * queries may be called from any thread.  sp_init, sp_create, sp_finalize,
 * sp_profiler_finalize, sp_profiler_reset and sp_destroy take the face's
 * lock; a profiler must not be destroyed while another thread uses it.
 * The checked functions (sp_profiler_begin/end, the scopes, end_last) keep
 * each thread's open calls in a stack of that thread: a call begun on one
 * thread is ended on the same thread.
 *
 * Ownership: strings passed in are copied.  Strings returned (region names,
 * output paths) belong to the profiler and live until sp_destroy (for the
 * default profiler: until the next sp_init).
 *
 * Timestamps are spanscope's: CLOCK_MONOTONIC ns, the clock of Python's
 * time.perf_counter_ns(), so C, Fortran and Python regions of one process
 * land on one timeline.
 */
#ifndef SCOPE_PROFILER_H
#define SCOPE_PROFILER_H

#include <spanscope.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SP_API SPS_API

/* Version of the ".spt" native trace SP_OUTPUT_TRACE writes (scope-profiler's
 * native_trace.py reads versions 1 and 2). */
#define SP_FORMAT_VERSION 2

/* Returned by sp_region()/sp_region_at() when profiling is not running.
 * sp_begin/sp_end ignore it, so unprofiled builds need no conditionals at
 * the call sites. */
#define SP_INVALID_REGION (-1)

/* An opaque profiler instance; see sp_create(). */
typedef struct sp_profiler sp_profiler;

/* What went wrong in the most recent call against a profiler, readable
 * with sp_profiler_last_error().  The values are scope-profiler's. */
typedef enum {
    SP_OK = 0,
    SP_ERR_INACTIVE,       /* the profiler is NULL, or not (yet, or still) active */
    SP_ERR_NO_CLOCK,       /* no clock (spanscope always has one: unused) */
    SP_ERR_NO_MEMORY,      /* out of memory */
    SP_ERR_IO,             /* the output file could not be written */
    SP_ERR_UNMATCHED_END,  /* an end with no open call to close */
    SP_ERR_OPEN_SCOPES,    /* refused because a region is still open */
    SP_ERR_UNSUPPORTED     /* not available in this build (line sampling, an
                              unknown output format, a session spanscope
                              cannot take spans from) */
} sp_status;

/* A static English name for a status ("ok", "no open call to end", ...).
 * Never NULL; any thread. */
SP_API const char *sp_error_string(sp_status status);

/* Statistics of a region, read with sp_profiler_get_region_stats(). */
typedef struct {
    int64_t calls;     /* calls entered (completed, and still open) */
    int64_t total_ns;  /* sum of the completed calls' durations */
    int64_t min_ns;    /* shortest completed call (0 if none) */
    int64_t max_ns;    /* longest completed call (0 if none) */
} sp_region_stats;

/* One open call, from sp_scope_begin()/sp_profiler_scope_begin(), ended by
 * sp_scope_end().  Treat as opaque.  Ending it twice is harmless: the
 * second end finds nothing and returns SP_ERR_UNMATCHED_END. */
typedef struct {
    sp_profiler *profiler;
    int region;
    int64_t slot;  /* internal; -1 marks a scope with nothing left to end */
} sp_scope;

/* ---------------------------------------------------------------------- */
/* Output format                                                           */
/* ---------------------------------------------------------------------- */

/* What sp_profiler_finalize()/sp_profiler_flush() write.
 * SP_OUTPUT_HDF5: "<prefix>_rank<NNNNN>.h5", scope-profiler schema 3 (the
 *   default; read by spanscope, read_h5 and every scope-profiler command).
 * SP_OUTPUT_TRACE: "<prefix>_rank<NNNNN>.spt", scope-profiler's native
 *   trace, version 2 (for `scope-profiler import-native`, and read by
 *   spanscope.results.read_trace / load_traces). */
typedef enum {
    SP_OUTPUT_HDF5 = 0,
    SP_OUTPUT_TRACE = 1
} sp_output_format;

/* 1: every spanscope build writes HDF5. */
SP_API int sp_hdf5_available(void);

/* SP_OUTPUT_HDF5, the format a new profiler starts with. */
SP_API sp_output_format sp_default_output_format(void);

/* Chooses what this profiler writes; sp_profiler_output_path() follows.
 * Returns SP_OK, SP_ERR_INACTIVE (NULL or finalized profiler) or
 * SP_ERR_UNSUPPORTED (a value that is neither format; the profiler keeps
 * the one it had). */
SP_API int sp_profiler_set_output_format(sp_profiler *profiler, sp_output_format format);

/* The format this profiler will write (the default for NULL). */
SP_API sp_output_format sp_profiler_output_format(const sp_profiler *profiler);

/* ---------------------------------------------------------------------- */
/* Explicit contexts                                                       */
/* ---------------------------------------------------------------------- */

/* Creates an active profiler that writes "<prefix>_rank<NNNNN>.h5" (prefix
 * NULL: "scope_profile"; rank: this process's MPI rank, >= 0) at
 * sp_profiler_finalize()/sp_profiler_flush(), starting spanscope's session
 * if none is running.  Returns NULL only when out of memory.  If the
 * session cannot be had (spanscope refused to start one, or the running one
 * keeps no spans: an aggregate session) a one-line reason goes to stderr
 * and the profiler is returned inactive, sp_profiler_last_error() saying
 * why (SP_ERR_NO_MEMORY or SP_ERR_UNSUPPORTED): every call against it is a
 * harmless no-op.  A negative rank is SP_ERR_UNSUPPORTED too.  Free it with
 * sp_destroy(). */
SP_API sp_profiler *sp_create(const char *prefix, int rank);

/* Releases a profiler and what it owns, without writing (call
 * sp_profiler_finalize() first for a file); ends spanscope's session when
 * this was the last active profiler of a session the face started.  NULL
 * is fine.  Handles of its regions must not be used after this. */
SP_API void sp_destroy(sp_profiler *profiler);

/* The handle of a region of this profiler, registering the name (copied;
 * cut at 4096 bytes as spanscope cuts names) on first use.  Resolve once,
 * outside hot loops: this interns the name under a lock.  Returns
 * SP_INVALID_REGION for a NULL or inactive profiler, a NULL name, or out
 * of memory. */
SP_API int sp_profiler_region(sp_profiler *profiler, const char *name);

/* Like sp_profiler_region(), and records where the region is defined
 * (source_file NULL: unknown, source_line then ignored).  First writer
 * wins: a location is set once, and a handle registered without one picks
 * it up from a later sp_profiler_region_at(). */
SP_API int sp_profiler_region_at(sp_profiler *profiler, const char *name,
                                 const char *source_file, int source_line);

/* sp_profiler_region_at() with the call site's file and line. */
#define SP_PROFILER_REGION_AT(profiler, name) \
    sp_profiler_region_at((profiler), (name), __FILE__, __LINE__)

/* Checked enter / leave.  sp_profiler_begin does nothing for a NULL or
 * inactive profiler or a handle that is not this profiler's; otherwise it
 * begins the region (sps_begin) and pushes the call on the calling
 * thread's stack of checked calls.  sp_profiler_end ends this profiler's
 * innermost open call of the region on the calling thread; with none open
 * it records nothing, prints "sp_end('name') without a matching sp_begin"
 * to stderr and sets SP_ERR_UNMATCHED_END.  A few ns more than
 * sp_begin/sp_end (the thread's stack); nesting is spanscope's: ending a
 * call also ends the calls opened inside it and still open. */
SP_API void sp_profiler_begin(sp_profiler *profiler, int region);
SP_API void sp_profiler_end(sp_profiler *profiler, int region);

/* Ends this profiler's most recently begun, still open call on the
 * calling thread (sp_profiler_begin or a scope), whatever its region.
 * Returns SP_OK or SP_ERR_UNMATCHED_END (nothing open, or an inactive
 * profiler). */
SP_API int sp_profiler_end_last(sp_profiler *profiler);

/* Begins a region and returns a token for exactly this call (slot -1: the
 * call was not begun, e.g. an inactive profiler). */
SP_API sp_scope sp_profiler_scope_begin(sp_profiler *profiler, int region);

/* Ends the call scope names.  Refused (SP_ERR_UNMATCHED_END, token kept)
 * while a later call of the same region of the same profiler is open on
 * this thread: end that one first, then this one succeeds.  A token
 * already ended, or not open on the calling thread, gives
 * SP_ERR_UNMATCHED_END and is left inert.  Returns SP_OK on success. */
SP_API int sp_scope_end(sp_scope *scope);

/* Discards the calls recorded so far for this profiler (its next file
 * holds only calls that begin after this) and its statistics; handles stay
 * valid.  Refused with SP_ERR_OPEN_SCOPES while a call of one of its
 * regions is open on any thread.  Returns SP_OK, SP_ERR_INACTIVE or
 * SP_ERR_OPEN_SCOPES. */
SP_API int sp_profiler_reset(sp_profiler *profiler);

/* Statistics of a region since the profiler started (or was reset): a
 * query over the session's recording (proportional to the calls recorded
 * since the previous query), not for hot loops.  After finalize, the
 * values at finalize.  Returns SP_OK, or SP_ERR_INACTIVE when profiler or
 * stats is NULL or region is not this profiler's. */
SP_API int sp_profiler_get_region_stats(const sp_profiler *profiler, int region,
                                        sp_region_stats *stats);

/* Number of regions registered with this profiler (0 for NULL). */
SP_API int sp_profiler_num_regions(const sp_profiler *profiler);

/* The name a region was registered with (without the profiler's
 * qualifier), or NULL when region is not this profiler's. */
SP_API const char *sp_profiler_region_name(const sp_profiler *profiler, int region);

/* Writes every call of this profiler's regions completed so far (since
 * start or reset) to sp_profiler_output_path(), through a temporary file
 * renamed into place, and keeps profiling; calls still open are not in the
 * file.  Returns 0 (also for a NULL or inactive profiler, which writes
 * nothing), non-zero when the file could not be written (a one-line reason
 * on stderr; SP_ERR_IO or SP_ERR_NO_MEMORY in sp_profiler_last_error()). */
SP_API int sp_profiler_flush(sp_profiler *profiler);

/* Writes this profiler's file (as sp_profiler_flush), keeps its regions'
 * statistics readable, and stops it.  A region still open is reported on
 * stderr and its unfinished call left out (SP_ERR_OPEN_SCOPES).  Stops
 * even when the write fails.  Returns 0 on success (and for a NULL or
 * inactive profiler), non-zero if the file could not be written. */
SP_API int sp_profiler_finalize(sp_profiler *profiler);

/* spanscope's addition (not in scope-profiler's header): like
 * sp_profiler_finalize, but when the file cannot be written the profiler
 * stays active with its calls (returns non-zero, SP_ERR_IO in
 * sp_profiler_last_error()), so that the caller can fix the cause (create
 * the directory) and call it again: the rule of scope-profiler's Fortran
 * sp_finalize, which the Fortran module implements with it. */
SP_API int sp_profiler_finalize_or_keep(sp_profiler *profiler);

/* spanscope's addition: the face's one-line messages on stderr
 * (scope-profiler's C API prints them: an end without a begin, a region
 * open at finalize, a file that cannot be written, a profiler that cannot
 * start) on (on != 0, the default) or off for the calling thread; returns
 * whether they were on.  The Fortran module turns them off around a call
 * given stat or errmsg, where scope-profiler's Fortran API prints nothing. */
SP_API int sp_set_messages(int on);

/* Non-zero while the profiler is active (created and not finalized). */
SP_API int sp_profiler_is_active(const sp_profiler *profiler);

/* The path sp_profiler_finalize()/sp_profiler_flush() writes for the
 * current format, or NULL for a NULL profiler.  Owned by the profiler. */
SP_API const char *sp_profiler_output_path(const sp_profiler *profiler);

/* The status of the most recent failing or checked call against this
 * profiler (SP_OK for NULL). */
SP_API sp_status sp_profiler_last_error(const sp_profiler *profiler);

/* ---------------------------------------------------------------------- */
/* Global convenience API: the default profiler                            */
/* ---------------------------------------------------------------------- */

/* Starts profiling on the default profiler (sp_create(prefix, rank));
 * a second call replaces the previous default profiler as sp_destroy
 * would (without writing): no other thread may be using the default
 * profiler then.  Returns 0 on success, non-zero when the
 * profiler could not be made active (see sp_create).  With
 * SCOPE_PROFILER_SAMPLE_HZ set (> 0), starts line sampling at that rate
 * (sp_start_sampling). */
SP_API int sp_init(const char *prefix, int rank);

/* sp_profiler_region()/sp_profiler_region_at() against the default
 * profiler; SP_INVALID_REGION before sp_init and after sp_finalize. */
SP_API int sp_region(const char *name);
SP_API int sp_region_at(const char *name, const char *source_file, int source_line);
#define SP_REGION_AT(name) sp_region_at((name), __FILE__, __LINE__)

/* Enter / leave a region: sps_begin/sps_end of the handle, inlined at the
 * call site (the functions exist too, for bindings and for (sp_begin)(r)).
 * A handle below 1 (SP_INVALID_REGION, -1) is ignored; so is every call while
 * no session records.  Unchecked, as sps_begin/sps_end are: regions must
 * nest per thread (spanscope repairs and counts what does not, see
 * sps_misuse_count); use sp_profiler_begin/end on sp_default_profiler()
 * for the checked pair.  A handle used after sp_finalize records into the
 * session if another face keeps it running (it is not in this profiler's
 * file).  Any thread. */
SP_API void sp_begin(int region);
SP_API void sp_end(int region);

/* Calls of a region of the default profiler entered so far (completed and
 * open; after sp_finalize, the count at finalize); 0 for an unknown
 * handle or before sp_init.  A query, not for hot loops. */
SP_API int64_t sp_num_calls(int region);

/* Now, ns on spanscope's clock (CLOCK_MONOTONIC, Python's
 * perf_counter_ns()).  Never negative. */
SP_API int64_t sp_now_ns(void);

/* Non-zero while the default profiler is active. */
SP_API int sp_is_active(void);

/* sp_profiler_set_output_format()/output_format()/output_path()/finalize()
 * against the default profiler. */
SP_API int sp_set_output_format(sp_output_format format);
SP_API sp_output_format sp_current_output_format(void);
SP_API const char *sp_output_path(void);
SP_API int sp_finalize(void);

/* The default profiler: NULL until sp_init() has been called, then
 * non-NULL (possibly inactive) until the next sp_init(). */
SP_API sp_profiler *sp_default_profiler(void);

/* Line-level sampling of native code: spanscope's sampler
 * (sps_sampling_start, docs/sampling.md) at hz samples per second of each
 * thread's CPU time (hz <= 0: 1000), every thread of the process.  The
 * profiler's finalize writes "<prefix>_rank<NNNNN>.sps" next to its file,
 * in scope-profiler's sample format (each sample: the innermost open
 * region and the innermost native frame's module and address; a sample
 * standing for w timer periods is written w times), which
 * `spanscope native-lines` and scope-profiler's own `native-lines` read;
 * the whole stacks are in the HDF5 file's /samples (a direct write) and
 * the profiler must be the session's only one to write the .sps.
 * sp_profiler_start_sampling returns SP_OK (also when another profiler
 * already started it), SP_ERR_INACTIVE for a NULL or finalized profiler,
 * SP_ERR_NO_MEMORY, or SP_ERR_UNSUPPORTED (no per-thread CPU timers, or a
 * bad rate: the reason on stderr).  sp_profiler_stop_sampling stops it,
 * keeping the samples for the finalize.  The global forms act on the
 * default profiler. */
SP_API int sp_profiler_start_sampling(sp_profiler *profiler, int hz);
SP_API int sp_profiler_stop_sampling(sp_profiler *profiler);
SP_API int sp_start_sampling(int hz);
SP_API int sp_stop_sampling(void);

/* The inline hot path.  SP_NO_INLINE (or a compiler without GNU C's
 * always_inline) calls the exported functions instead. */
#if !defined(SP_NO_INLINE) && defined(__GNUC__)
static inline __attribute__((always_inline, no_instrument_function)) void sp_begin_inline_(int region) {
    if (__builtin_expect(region > 0, 1))
        sps_begin(SPS_CAST_(sps_region_t, region));
}
static inline __attribute__((always_inline, no_instrument_function)) void sp_end_inline_(int region) {
    if (__builtin_expect(region > 0, 1))
        sps_end(SPS_CAST_(sps_region_t, region));
}
#  define sp_begin(region) sp_begin_inline_(region)
#  define sp_end(region) sp_end_inline_(region)
#endif

#ifdef __cplusplus
}
#endif

#endif /* SCOPE_PROFILER_H */
