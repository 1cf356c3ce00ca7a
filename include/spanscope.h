/*
 * spanscope.h -- the whole public C API of spanscope, a region profiler.
 *
 * A program marks regions (named spans of its own code); spanscope records
 * every call with nanosecond timestamps into per-thread buffers, and at
 * sps_finalize() writes an HDF5 file (scope-profiler schema 3) and, if asked,
 * prints a summary table.
 *
 *     #include <spanscope.h>
 *
 *     int main(void) {
 *         sps_config_t cfg = SPS_CONFIG_INIT;
 *         cfg.file_path = "profile.h5";
 *         cfg.verbose = 1;
 *         sps_setup(&cfg);
 *         for (int i = 0; i < 100; i++) {
 *             SPS_REGION("step");        // lasts to the end of the block
 *             do_work();
 *         }
 *         return sps_finalize() < 0;
 *     }
 *
 * Conventions (one rule for the whole API):
 *   - Functions that can fail return int: 0 on success, a negative SPS_E*
 *     code on failure.  sps_strerror(code) names the code.  Nothing aborts
 *     the host program and nothing prints unless cfg.verbose asks for it.
 *   - Strings passed in are copied; the caller keeps ownership.  Strings
 *     returned point into spanscope's registry and stay valid until the
 *     process exits (region names are interned for the life of the process).
 *   - Thread rules: sps_begin/sps_end/sps_region and every query may be called
 *     from any thread at any time.  sps_setup and sps_finalize may be called
 *     from any thread, but not concurrently with each other; a thread inside
 *     sps_begin/sps_end while another thread calls sps_setup may lose that
 *     one call (never crashes).
 *
 * Timestamps are nanoseconds on the CLOCK_MONOTONIC timeline, the same one
 * Python's time.perf_counter_ns() uses on Linux, so C and Python regions of
 * one process line up.
 */
#ifndef SPANSCOPE_H
#define SPANSCOPE_H

/* Language: C99 or later, or C++11 or later, with GCC's extensions that
 * GCC and Clang both have (__atomic builtins, __attribute__((cleanup)),
 * __builtin_expect).  The header is warning-free at the use sites of
 * every macro under gcc -std=c99 -pedantic -Wall -Wextra
 * -Wdeclaration-after-statement, clang -std=c11 -Weverything
 * -Wno-padded and clang++ -std=c++11 -Weverything -Wno-c++98-compat
 * (tests/header/run.sh checks these, and g++ -pedantic). */
#if defined(__cplusplus)
#  if __cplusplus < 201103L
#    error "spanscope.h needs C++11 or later (e.g. -std=c++11)"
#  endif
#elif !defined(__STDC_VERSION__) || __STDC_VERSION__ < 199901L
#  error "spanscope.h needs C99 or later (e.g. -std=c99): it uses inline functions"
#endif

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header.  The library's own, at run time, is
 * sps_version() / sps_version_number(); docs/abi.md says what a version
 * change promises (the SONAME policy). */
#define SPS_VERSION_MAJOR 0
#define SPS_VERSION_MINOR 3
#define SPS_VERSION_PATCH 0
#define SPS_VERSION_STRING "0.3.0"
/* A version as one number, major * 10^6 + minor * 10^3 + patch (each part
 * below 1000), usable in #if: SPS_VERSION_ENCODE(0, 1, 0) is 1000. */
#define SPS_VERSION_ENCODE(major, minor, patch)                                \
    ((major) * 1000000L + (minor) * 1000L + (patch))
#define SPS_VERSION_NUMBER                                                     \
    SPS_VERSION_ENCODE(SPS_VERSION_MAJOR, SPS_VERSION_MINOR, SPS_VERSION_PATCH)
/* Non-zero when this header is version major.minor.patch or later:
 *     #if SPS_VERSION_AT_LEAST(0, 2, 0)  ...use what 0.2 added...  #endif */
#define SPS_VERSION_AT_LEAST(major, minor, patch)                              \
    (SPS_VERSION_NUMBER >= SPS_VERSION_ENCODE(major, minor, patch))

#if defined(_WIN32)
#  define SPS_API
#elif defined(__GNUC__)
#  define SPS_API __attribute__((visibility("default")))
#else
#  define SPS_API
#endif

/* A conversion in a macro that C and C++ both accept without a warning
 * (clang++ -Weverything flags C's casts as old-style). */
#ifdef __cplusplus
#  define SPS_CAST_(type, value) (static_cast<type>(value))
#else
#  define SPS_CAST_(type, value) ((type)(value))
#endif

/* The version of the library this program runs with (which may be newer
 * than the header it was compiled with, within one SONAME): "0.1.0" and
 * SPS_VERSION_ENCODE(0, 1, 0).  Static storage; never fails; any thread,
 * no session needed. */
SPS_API const char *sps_version(void);
SPS_API long sps_version_number(void);

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

/* Every error code, as X(NAME, value, message).  Codes are negative. */
#define SPS_ERRNO_MAP(X)                                                       \
    X(EINVAL,     -1, "invalid argument")                                      \
    X(ENOMEM,     -2, "out of memory")                                         \
    X(ENOSESSION, -3, "no profiling session (sps_setup was not called, or "    \
                      "this is a forked child of the profiled process)")       \
    X(EACTIVE,    -4, "a profiling session is already active")                 \
    X(EIO,        -5, "I/O error writing or reading a file")                   \
    X(EHDF5,      -6, "the HDF5 library reported an error")                    \
    X(EFORMAT,    -7, "the file is not a valid spanscope/scope-profiler file") \
    X(ENOREGION,  -8, "no such region")                                        \
    X(EPATH,      -9, "the output path cannot be written (directory missing " \
                      "or not writable); the recording is kept")               \
    X(ETOOBIG,   -10, "a limit was exceeded (too many regions or threads)")    \
    X(ENOTSUP,   -11, "not supported by this build or platform")           \
    X(EMODE,     -12, "an aggregate session keeps statistics only, no spans")

/* SPS_OK last: an enumerator list may not end in a comma in C++98's
 * grammar (clang++ -Weverything warns, -Wc++98-compat-pedantic). */
typedef enum {
#define SPS_ERRNO_ENUM_(name, val, msg) SPS_##name = (val),
    SPS_ERRNO_MAP(SPS_ERRNO_ENUM_)
#undef SPS_ERRNO_ENUM_
    SPS_OK = 0
} sps_errno_t;

/* Returns a static English message for an error code (never NULL; unknown
 * codes give "unknown error"). */
SPS_API const char *sps_strerror(int code);

/* Returns the error's name, e.g. "SPS_EINVAL" (never NULL). */
SPS_API const char *sps_err_name(int code);

/* The cause of the last SPS_EIO or SPS_EPATH this thread got from a call
 * that writes a file (sps_finalize*, sps_merge, sps_convert, the
 * exports): the operating system's errno (ENOSPC for a full disk, EDQUOT,
 * EFBIG for a file size limit, EROFS, EACCES, ENOENT for a vanished
 * directory, EIO), or 0 when the failure had none or no call failed.
 * Thread-local; each of those calls forgets the old cause when it starts.
 * The code stays the error rule: this only says why. */
SPS_API int sps_last_errno(void);

/* This thread's one-line message about the last failed call, "" when
 * there is none (static, thread-local storage, valid until this thread's
 * next call into the library).  After a failed write it names the cause
 * and the file, e.g. "no space left on device (writing /data/out.h5)". */
SPS_API const char *sps_last_error(void);

/* Writes s (NUL-terminated, any bytes: a region name or metadata value
 * read from someone else's file; NULL as "") into buf as text a terminal
 * only shows, by the rule of the library's own tables: C0 controls (tab
 * and newline too), DEL and C1 controls (U+0080..U+009F) become '?',
 * bytes that start no valid UTF-8 sequence become U+FFFD, and text wider
 * than max_cols columns (one per code point) is cut to max_cols ending in
 * "..." (max_cols 0: never cut).  buf (cap bytes, the caller's) gets at
 * most cap - 1 bytes and a NUL, never a split UTF-8 sequence; cap 0
 * writes nothing.  Returns the length of the whole result (without the
 * NUL; over cap - 1 means it was cut short, as with snprintf), 0 when out
 * of memory.  Thread-safe; touches no session. */
SPS_API size_t sps_terminal_text(const char *s, size_t max_cols, char *buf, size_t cap);

/* ------------------------------------------------------------------------ */
/* Configuration and session                                                 */
/* ------------------------------------------------------------------------ */

/* What to do when the in-memory event buffers reach cfg.memory_limit. */
typedef enum {
    SPS_OVERFLOW_SPILL = 0, /* write full chunks to a spill file (default),
                               packed (~1 byte per call for a loop), by a
                               background thread of the library:
                               nothing lost, memory stays bounded; if the
                               file cannot grow (disk full, spill_limit),
                               new events are dropped and counted.  Env
                               SPANSCOPE_SPILL_THREAD=0: written by the
                               recording thread instead */
    SPS_OVERFLOW_DROP  = 1, /* drop new events and count them; the count is
                               reported in the file and by sps_dropped() */
    SPS_OVERFLOW_GROW  = 2  /* keep allocating: nothing lost, memory unbounded */
} sps_overflow_t;

typedef struct sps_config {
    /* HDF5 file written by sps_finalize().  NULL means no file (statistics
     * and the table only).  Copied by sps_setup. */
    const char *file_path;
    /* Non-zero: sps_finalize() prints the summary table to stderr. */
    int verbose;
    /* Non-zero: aggregate mode -- keep per-region statistics only (count,
     * total, self, min, max, variance), no per-call events.  For regions hit
     * billions of times.  The file then uses storage_layout="aggregate". */
    int aggregate;
    /* Bytes of event buffers kept in memory before the overflow policy
     * applies.  0 = default (32 MiB).  Each recorded call costs 16 bytes. */
    size_t memory_limit;
    /* Bytes per buffer chunk, a power of two between 4 KiB and 16 MiB.
     * 0 = default (64 KiB). */
    size_t chunk_size;
    sps_overflow_t overflow;
    /* What every begin and end reads besides the time, folded per span
     * like time (docs/values.md): 0 (nothing, the old behaviour) or
     * SPS_TRACK_MEMORY | SPS_TRACK_COUNTERS.  Events mode only (aggregate
     * mode: SPS_EMODE).  This int was the explicit padding reserved0_:
     * the layout is unchanged (docs/abi.md). */
    int track;
    /* Directory for the spill file (an unlinked temporary file).  NULL =
     * $TMPDIR, else /tmp. */
    const char *spill_dir;
    /* A label stored in the file's /metadata (e.g. a run name), or NULL. */
    const char *label;
    /* gzip+shuffle the event columns from this many events on; 0 = default
     * (16384, as scope-profiler's "auto"), -1 = never. */
    long compress_threshold;
    /* MPI rank and size stored in the file (0 and 1 without MPI). */
    int rank;
    int size;
    /* Most bytes the spill file may hold between two finalizes; past it
     * (or when the disk is full) new events are dropped and counted, as
     * under SPS_OVERFLOW_DROP.  0 = no limit but the disk. */
    uint64_t spill_limit;
    /* Non-zero: this process only, even when MPI is initialised (no
     * collective setup or finalize; see spanscope_mpi.h).  For sessions
     * that ranks start on their own, such as the torch-style profiler's. */
    int local;
    /* Stack samples per second of each thread's CPU time (docs/sampling.md):
     * 0 = no sampling (the default), else sps_setup starts the sampler as
     * sps_sampling_start(sample_hz) would (-1: its default rate, 1000).
     * This int was the explicit padding reserved1_: the layout is unchanged. */
    int sample_hz;
    /* Emitters turned on with the session (docs/nvtx-itt.md): 0 (none, the
     * default) or SPS_EMIT_NVTX | SPS_EMIT_ITT.  sps_setup turns them on as
     * sps_emit_set(emit, 1) would, and sps_shutdown turns off those it
     * turned on (an emitter already on before sps_setup stays on).  A bit
     * this build lacks: sps_setup returns SPS_ENOTSUP; an unknown bit:
     * SPS_EINVAL.  Added after sample_hz: the struct grew by 8 bytes
     * (docs/abi.md). */
    unsigned emit;
    int reserved2_; /* 0: explicit padding */
} sps_config_t;

#define SPS_CONFIG_INIT                                                        \
    { NULL, 0, 0, 0, 0, SPS_OVERFLOW_SPILL, 0, NULL, NULL, 0, 0, 1, 0, 0, 0, 0, 0 }

/* Emitters (docs/nvtx-itt.md): while one is on, every sps_begin/sps_end of
 * every thread is also a range pushed and popped for a tool -- on or off
 * a session, recording or paused.  SPS_EMIT_NVTX: a range in the NVTX
 * domain "spanscope" named after the region (a registered string, made
 * once per region), for Nsight Systems; built where the CUDA toolkit's
 * header-only nvtx3 was found, and a no-op (one call per begin and end)
 * where no NVTX tool is attached.  SPS_EMIT_ITT: a task in the ITT domain
 * "spanscope", for VTune. */
#define SPS_EMIT_NVTX 1u
#define SPS_EMIT_ITT 2u

/* Turns the emitters of what (SPS_EMIT_* bits) on (on != 0) or off.  Any
 * thread, any time, no session needed; takes effect for begins and ends
 * that start after it returns.  Turning on an emitter that is on, or off
 * one that is off, is harmless (there is no count: one off turns it off).
 * An emitter turned off while a region it saw begin is still open does
 * not see that region's end (its tool closes what is left open).  While
 * any emitter is on, sps_begin/sps_end take the library's out-of-line
 * path (a few ns more than a recorded pair, plus the tool's own cost);
 * with none on they cost what they cost without emitters.  Returns 0,
 * SPS_EINVAL (what is 0 or has a bit the header does not name) or
 * SPS_ENOTSUP (an emitter this build lacks: nothing changed). */
SPS_API int sps_emit_set(unsigned what, int on);
/* The SPS_EMIT_* bits of the emitters on now. */
SPS_API unsigned sps_emit_active(void);
/* The SPS_EMIT_* bits of the emitters this build has. */
SPS_API unsigned sps_emit_available(void);
/* A label for the next region this thread begins while an emitter is on,
 * shown with the region's name: NVTX ranges read "NAME, sizes = TEXT" (as
 * torch's emit_nvtx(record_shapes=True) writes its operators' input
 * shapes), ITT tasks get TEXT as their "sizes" metadata.  text is copied
 * (cut at 255 bytes); NULL or "" clears it.  It is the next begin's only:
 * that begin takes it, whichever region it is, so set it right before
 * sps_begin and clear it right after (a begin with no emitter on leaves it
 * in place).  Thread-local; costs the copy. */
SPS_API void sps_emit_label(const char *text);

/* Device collectors (docs/device.md): what a GPU ran, joined to the spans
 * that launched it, written into the HDF5 file by finalize (/device, the
 * per-event /events/gpu_durations and summary_statistics' gpu_count /
 * gpu_total).  SPS_DEVICE_CUPTI: the kernels, copies, sets and CUDA
 * runtime/driver API calls, through CUPTI (libcupti loaded at run time);
 * each activity belongs to the innermost span of the region whose id was
 * the launching thread's external correlation id, open on that thread at
 * the launch.  SPS_DEVICE_EVENTS: a CUDA event pair around every region
 * call (libcudart loaded at run time), its elapsed time the span's device
 * time.  Both bits may be asked for at once. */
#define SPS_DEVICE_CUPTI 1u
#define SPS_DEVICE_EVENTS 2u

/* Whether the collectors of what (SPS_DEVICE_* bits) can start here: 0,
 * SPS_EINVAL (what is 0 or has a bit the header does not name) or
 * SPS_ENOTSUP, sps_last_error then saying why in one line (built without
 * the collector, no NVIDIA driver, no libcupti, ...).  Starts nothing;
 * any thread. */
SPS_API int sps_device_available(unsigned what);
/* Starts the collectors of what, for the session open now or the next
 * one: from then on every region begin/end of every thread marks the
 * CUDA work it launches (sps_begin/sps_end take the out-of-line path and
 * add CUPTI's push/pop, or gpu_timing's event records, to each call).
 * Every finalize writes what was collected up to it (a checkpoint writes
 * its period's, nothing twice).  All or nothing: when one bit fails, the
 * others it started are stopped.  Returns 0, SPS_EINVAL (as above),
 * SPS_ENOTSUP (the reason in sps_last_error) or SPS_EACTIVE (that
 * collector is on already, or another CUPTI subscriber -- Nsight Systems,
 * torch.profiler -- holds CUPTI).  Any thread. */
SPS_API int sps_device_start(unsigned what);
/* Stops the collectors of what: flushes everything in flight, so nothing
 * is lost; what was collected is written by the next finalize.  Returns 0
 * or SPS_EINVAL (what is 0, has an unknown bit, or names a collector that
 * is not on).  Any thread. */
SPS_API int sps_device_stop(unsigned what);

/* Starts a profiling session: recording begins at once in every thread.
 * cfg may be NULL (defaults).  Returns SPS_EACTIVE if a session is active
 * (call sps_shutdown first, or sps_finalize then sps_setup -- see below),
 * SPS_EINVAL for a bad field.
 *
 * Calling sps_setup after sps_shutdown starts a fresh session: statistics,
 * events and the set of registered regions are empty again; region ids
 * already handed out stay valid (names are interned per process). */
SPS_API int sps_setup(const sps_config_t *cfg);

/* Writes everything recorded since the previous finalize (or setup) to
 * cfg.file_path, prints the table if verbose, and keeps recording: a
 * checkpoint, as in scope-profiler.  Each file holds only its own period;
 * calls still open at the checkpoint are written by the next finalize.
 *
 * The file is written to "<path>.tmp-<pid>" and renamed into place, so a
 * reader never sees half a file.  If the path cannot be written the period's
 * data is NOT consumed: fix the path with sps_set_file_path() and call
 * sps_finalize() again, and everything is written.
 *
 * Returns 0, SPS_ENOSESSION (no session, or a forked child), SPS_EPATH,
 * SPS_EIO or SPS_EHDF5. */
SPS_API int sps_finalize(void);

/* Like sps_finalize but writes to path (NULL = no file) instead of the
 * configured one, once. */
SPS_API int sps_finalize_to(const char *path);

/* Like sps_finalize_to, and prints the period's summary table to
 * table_file (a stdio FILE*, passed as void*) when it is not NULL, whatever
 * cfg.verbose says. */
SPS_API int sps_finalize_print(const char *path, void *table_file);

/* One call path of a finalized period, as scope-profiler's region table
 * pools calls (its summary.region_rows): the path of region names from a
 * root, adjacent repeats of a name collapsed (a self-recursive region is
 * one path, recursive = 1).  Times in ns. */
typedef struct sps_call_path {
    int32_t parent;          /* index of the parent path, -1 for a root */
    uint32_t name;           /* index into sps_period_paths_t.names */
    uint64_t calls;
    int64_t total_ns;        /* durations of the outermost calls of a
                                recursion (of every call without one) */
    int64_t duration_sum_ns; /* every call's duration (the mean's sum) */
    int64_t self_ns;         /* exclusive time: duration minus the children
                                in the same file */
    int64_t min_ns, max_ns;
    int64_t first_start_ns, first_ns; /* the earliest call's start, duration */
    int64_t last_end_ns, last_ns;     /* the latest-ending call's end, duration */
    int64_t coverage_ns;     /* wall-clock union of the calls, all threads */
    int recursive;
} sps_call_path_t;

/* What sps_finalize_paths gives: available = 0 when it could not pool the
 * period (a distributed session: the file holds every rank; aggregate
 * mode: no calls), else the file's region table (names, in its order;
 * the strings are the registry's and live as long as the process) and
 * the paths, parents before children, in order of their first call. */
typedef struct sps_period_paths {
    int available;
    size_t nnames;
    const char **names;      /* owned array, borrowed strings */
    size_t npaths;
    sps_call_path_t *paths;  /* owned */
} sps_period_paths_t;

/* Like sps_finalize_print (table_file may be NULL), and pools the period
 * just written by call path into *out (zeroed first; free it with
 * sps_period_paths_free, also after an error), by one more merged pass
 * over the period's records: memory in threads and paths, not in calls.
 * Errors as sps_finalize; out->available stays 0 when the write failed. */
SPS_API int sps_finalize_paths(const char *path, void *table_file, sps_period_paths_t *out);
/* Frees what sps_finalize_paths put in p and zeroes it.  NULL is a no-op. */
SPS_API void sps_period_paths_free(sps_period_paths_t *p);

/* Changes the output path of the active session (copied). */
SPS_API int sps_set_file_path(const char *path);

/* Ends the session without writing: recording stops, buffers are released.
 * Safe to call without a session.  Returns 0. */
SPS_API int sps_shutdown(void);

/* Non-zero while a session records in this process. */
SPS_API int sps_is_active(void);

/* Pausing.  sps_pause makes every sps_begin/sps_end of the session record
 * nothing until sps_resume (the session stays live: queries, finalize and
 * sps_region work as before), at no cost to the hot path: while paused a
 * begin or an end costs the one branch of "no session".  For phases of a
 * program that are not to be measured (scope-profiler's pause/resume,
 * sample_every).  A call open when the pause starts is ended by an
 * sps_end that comes after sps_resume; an sps_end that comes during the
 * pause is not recorded, so that call stays open (see sps_misuse_count):
 * pause between calls, where sps_open_calls gives nothing (or only the
 * calls meant to span the pause).  Both return 0 or SPS_ENOSESSION;
 * pausing twice, or resuming an unpaused session, is harmless.  A new
 * session starts unpaused.  Any thread; a thread inside sps_begin/sps_end
 * at that moment may record or lose that one record (as for sps_setup). */
SPS_API int sps_pause(void);
SPS_API int sps_resume(void);
/* 1 while the live session is paused, else 0. */
SPS_API int sps_is_paused(void);

/* Forked children (docs/process-trees.md).  A process that forks (fork(),
 * or a runtime's fork such as Python's os.fork) while a session records:
 *   - policy own (the default): the child records into a session of its
 *     own from the fork on, set up with the parent's settings (events or
 *     aggregate, cfg.track, buffers, label, cfg.sample_hz, native stacks, a
 *     pause, the registered regions and their sources and tags, the
 *     /metadata of sps_metadata_set) but local (no MPI in a child) and
 *     writing sps_fork_child_path(parent's path, child's pid) (no path:
 *     none).  Its timeline starts at the fork.  The calls open on the
 *     forking thread at the fork stay open in the child, so that its
 *     sps_end calls balance: they begin again at the child's session
 *     start (the fork), and the child's /metadata names them
 *     (fork_open_calls: a JSON list of region names, outermost first),
 *     with ppid (the parent's pid; pid is the child's) and parent_output
 *     (the parent's output path, "" when none).  The parent's file keeps
 *     those calls whole, as ever.  The child writes at its sps_finalize
 *     (checkpoints as in any session) and at exit() through handlers the
 *     parent registered (SPANSCOPE_AUTO_FINALIZE); a child that ends with
 *     _exit() or a signal, or that execs, writes nothing.  A child's
 *     sps_setup returns SPS_EACTIVE: sps_shutdown first, or policy off.
 *     Grandchildren likewise (their parent's path gets a second suffix).
 *     Of a multithreaded parent only the forking thread exists in the
 *     child; the others' open calls are the parent's alone.
 *   - policy off: the child's copy of the session is switched off: it
 *     records and writes nothing (sps_finalize: SPS_ENOSESSION) until it
 *     calls sps_setup.
 * sps_fork_policy(1) chooses own, (0) off, for every later fork of the
 * process (and of its children, which inherit it); (-1) only asks.  Until
 * a call with 0 or 1, SPANSCOPE_FORK decides, read in the parent at each
 * fork: unset, "", own (or on, 1, true, yes): own; off (or none, 0,
 * false, no): off, any case.  Returns the policy in force before the call
 * (1 own, 0 off), or SPS_EINVAL for own other than -1, 0, 1, or (-1 with
 * no policy chosen) for a SPANSCOPE_FORK of another value, under which
 * children record as under own (sps_last_error says so).  Any thread;
 * it never takes a lock. */
SPS_API int sps_fork_policy(int own);

/* The output path of a forked child of pid from its parent's output
 * parent_path: DIR/STEM.EXT becomes DIR/STEM.pid<PID>.EXT, the extension
 * being the part of the file name from its last dot (a dot that starts or
 * ends the file name is none); a name without one gets ".pid<PID>" at
 * its end ("out/run" -> "out/run.pid42", "p.h5" -> "p.pid42.h5",
 * "a.b/c.v2.h5" -> "a.b/c.v2.pid42.h5").  Writes it NUL-terminated into
 * out[0..cap) when it fits whole (out may be NULL; out[0] is 0
 * otherwise, when cap > 0) and returns its length without the NUL (call
 * with cap 0 to size a buffer): 0 for a NULL or empty parent_path (a
 * session without a file: so is the child's) or a pid <= 0.  Pure; any
 * thread. */
SPS_API size_t sps_fork_child_path(const char *parent_path, int64_t pid, char *out,
                                   size_t cap);

/* One call open (begun, not yet ended) on some thread of the session. */
typedef struct sps_open_call {
    uint32_t region;  /* its region (an sps_region_t, declared below) */
    uint32_t depth;   /* its place on its thread's stack: 0 outermost */
    int64_t thread;   /* the thread's index in the session (what
                         sps_thread_current returns on that thread) */
} sps_open_call_t;

/* The calls open on every thread of the session -- before a pause, "is
 * any region open anywhere?" (scope-profiler's pause refuses then) --
 * threads that have exited included (a call they left open stays open).
 * Writes them to out[0..cap), thread by thread (threads in no set
 * order), each thread's outermost first, and returns how many there are in all
 * (call with cap 0 to size; a second call may find a different number:
 * other threads go on recording).  0 without a session.  SPS_EMODE in an
 * aggregate session: its recorders keep their stacks to themselves, so
 * only the calling thread's are known (sps_open_calls).  Costs the hot
 * path nothing: under the session lock it brings every thread's analysis
 * up to date (the queries' analyzer, which reads what each thread has
 * published, while the threads go on recording) and reads the stacks at
 * its cursors, so a call begun a moment ago on another thread may be
 * missed and one just ended still listed, as for any query.  A query,
 * not for hot loops; any thread. */
SPS_API int64_t sps_open_calls_all(sps_open_call_t *out, size_t cap);

/* The settings a program can take from its environment, as
 * sps_env_read reads them (the variables) and sps_env_resolve (the
 * variables over the TOML file SPANSCOPE_CONFIG names).  Each
 * SPANSCOPE_<NAME> has scope-profiler's SCOPE_PROFILER_<NAME> as an
 * alias; when both are set, SPANSCOPE_<NAME> wins.  Every setting, its
 * variable, its [profiling] key, type and default: docs/configuration.md
 * (`spanscope config`).  From sps_env_read, strings point into the
 * environment (valid until it changes); from sps_env_resolve, into the
 * environment or the library's copy of the file (valid until the next
 * sps_env_resolve or sps_setup_from_env). */
typedef struct sps_env {
    sps_config_t cfg;        /* SPANSCOPE_OUTPUT -> file_path ("" or
                                "none": no file), SPANSCOPE_LABEL -> label,
                                SPANSCOPE_AGGREGATION_MODE -> aggregate,
                                SPANSCOPE_MEMORY_LIMIT (bytes) ->
                                memory_limit, SPANSCOPE_SAMPLE_HZ (stack
                                samples per second, 0 to 10000) ->
                                sample_hz; sps_env_resolve also the
                                file's chunk_size, overflow, spill_dir,
                                hdf5_compression (-> compress_threshold)
                                and deactivate_file_output; the rest
                                SPS_CONFIG_INIT */
    int has_output;          /* SPANSCOPE_OUTPUT was set (or the file's
                                file_path / deactivate_file_output) */
    int recursive;           /* SPANSCOPE_RECURSIVE: -1 unset, 0 or 1 */
    int auto_finalize;       /* SPANSCOPE_AUTO_FINALIZE: -1, 0 or 1 */
    int deactivate;          /* SPANSCOPE_DEACTIVATE_PROFILING: -1, 0, 1 */
    int aggregate;           /* SPANSCOPE_AGGREGATION_MODE: -1, 0 or 1 */
    const char *config_path; /* SPANSCOPE_CONFIG (a TOML file), or NULL */
    const char *enable_tags; /* SPANSCOPE_ENABLE_TAGS, comma-separated, or NULL */
} sps_env_t;

/* Reads the variables above into *out.  Booleans are 1/0, true/false,
 * yes/no, on/off (any case); anything else is SPS_EINVAL, and so is a
 * memory limit that is not a whole number of bytes or a sampling rate out
 * of range; on failure a one-line
 * reason naming the variable goes to err[0..errlen) when err is not NULL.
 * Needs no session; any thread, but not while another thread changes the
 * environment. */
SPS_API int sps_env_read(sps_env_t *out, char *err, size_t errlen);
/* Checks the TOML configuration file at path as the C auto-setup reads it
 * (the strict reader of src/api/env.c: its [profiling] table, or the
 * top-level one, groups flattened): what it refuses -- outside the TOML
 * subset a configuration needs, an unknown key (with the closest known
 * one), a key set twice, a wrong type -- the Python face's
 * setup(config_path=...) refuses too, in the same words.  Reads no
 * variable.  Returns 0, SPS_EINVAL ("FILE:LINE: ..." in err), SPS_EIO (it
 * cannot be read), SPS_ENOTSUP (a value this build lacks) or SPS_ENOMEM;
 * the one-line reason in err[0..errlen) when err is not NULL. */
SPS_API int sps_config_check(const char *path, char *err, size_t errlen);

/* sps_env_read, with the TOML file that SPANSCOPE_CONFIG (or
 * SCOPE_PROFILER_CONFIG) names read under the variables: defaults < the
 * file's [profiling] table (the top-level table of a file without one;
 * scope-profiler's key names, as the Python face reads them) < the
 * variables.  The file is read strictly: what is not TOML, or is TOML
 * outside the subset a configuration needs (docs/configuration.md), an
 * unknown key (the message names it and the closest known one) or a value
 * of the wrong type is SPS_EINVAL with "FILE:LINE: ..." in err; a file
 * that cannot be read is SPS_EIO; hdf5_compression lzf or zstd is
 * SPS_ENOTSUP.  The file's keys that only the Python face applies
 * (use_memray, track_async, ...) are checked and otherwise left alone.
 * Thread-safe (a lock), but not while another thread changes the
 * environment; the strings of *out live until the next call. */
SPS_API int sps_env_resolve(sps_env_t *out, char *err, size_t errlen);

/* sps_setup with the configuration sps_env_resolve reads (the variables
 * over the SPANSCOPE_CONFIG file), the C core's auto-setup: nothing when
 * deactivate_profiling is true (returns 0, no session); with
 * SPANSCOPE_AUTO_FINALIZE true, the session is finalized once at exit
 * (atexit); the file's perf_events go to sps_set_counters (and
 * cfg.track).  Each SPANSCOPE_* variable of the environment that no
 * setting has is named once per process in a one-line warning on stderr
 * (not an error: a stray variable must not stop a program).  Returns
 * sps_setup's codes, or sps_env_resolve's (err as for sps_env_read). */
SPS_API int sps_setup_from_env(char *err, size_t errlen);

/* The name of the i-th SPANSCOPE_* variable the library knows (the
 * settings of docs/configuration.md, tuning knobs included), for i from 0;
 * NULL past the last.  Static strings; any thread.  A binding that reads
 * the environment itself names the others, as sps_setup_from_env does. */
SPS_API const char *sps_env_variable(size_t i);

/* Signals (docs/signals.md): what SIGTERM & co. do to a recording process.
 * While a session records, each signal of the list gets spanscope's
 * handler, installed by sps_setup and removed by sps_shutdown (the
 * disposition found at sps_setup is put back, unless the program has put
 * another in the meantime, which then stays).  What a signal does then
 * depends on what it would have done without spanscope:
 *   - it would end the process (SIG_DFL): the profile recorded so far is
 *     written, as sps_finalize would write it (the period since the last
 *     finalize, to cfg.file_path; after an earlier finalize, an empty
 *     period does not replace that file), by a watcher thread, never in
 *     the handler (which only wakes it through a pipe); one line goes to
 *     stderr ("spanscope: SIGTERM: profile written to out.h5 (12345
 *     calls); ending as the signal does"); then the default disposition
 *     is restored and the signal raised again: the process dies of it,
 *     with the exit status it would have had (143 from a shell for
 *     SIGTERM).  A second signal of the list that comes before the write
 *     is done ends the process at once (what is on disk stays).  Other
 *     threads keep recording meanwhile; what they record after the
 *     snapshot is not in the file.
 *   - the program has a handler of its own (Python's SIGINT, which raises
 *     KeyboardInterrupt; a C program's): that handler is called, from
 *     spanscope's, in the thread the signal interrupted, and nothing is
 *     written: the program's own finalize (at exit, in a finally block, a
 *     context manager's exit) writes the whole recording, the part before
 *     the signal included, as it would have without the signal.
 *   - it is ignored (SIG_IGN, e.g. under nohup): it stays ignored.
 * In a distributed (MPI) session each rank writes its part
 * "<path>.rank<R>.h5" and rank 0 merges the parts into one file at its
 * path (no MPI call is made: the ranks' threads may be inside MPI); each
 * rank waits up to 30 s for the others (docs/signals.md).  A forked child
 * keeps the parent's dispositions: there a signal does what it did before
 * sps_setup until the child calls sps_setup itself.
 *
 * list: the signals, comma-separated names with or without "SIG", any
 * case: HUP, INT, QUIT, TERM, USR1, USR2, ALRM, XCPU ("TERM,INT,HUP,USR1"
 * is the default); "" or "none": no signal (spanscope leaves every
 * disposition alone); NULL: back to the environment's list,
 * SPANSCOPE_SIGNALS (same syntax), or the default when it is unset.  The
 * list set here wins over SPANSCOPE_SIGNALS for every later session of
 * the process.  Before sps_setup it applies from the next sps_setup on;
 * with a session live it applies at once (handlers installed or removed).
 * A bad SPANSCOPE_SIGNALS makes sps_setup fail with SPS_EINVAL (the reason
 * naming the variable in sps_last_error), unless sps_signals set a list.
 * Any thread, but not concurrently with sps_setup or sps_shutdown; not
 * from a signal handler.  Returns 0, SPS_EINVAL (an unknown name: nothing
 * changed; a bad SPANSCOPE_SIGNALS for NULL), or SPS_EIO / SPS_ENOMEM when
 * the watcher cannot be started. */
SPS_API int sps_signals(const char *list);

/* Crash safety (docs/crash-recovery.md).  An events session with a file
 * keeps what it records in shared mappings of files in the directory
 * "<file_path>.live-<pid>" (chunks of records, the spill file, and a log
 * of names, threads and clock anchors), so that after a SIGKILL, a
 * segfault or an OOM kill `spanscope recover <file_path>` (sps_recover)
 * writes the profile of everything recorded.  A session whose records
 * were all written by a finalize, or that is shut down, removes the
 * directory.  on: 1 on, 0 off, -1 the default (on, unless the environment
 * says SPANSCOPE_CRASH_SAFE=0); read by the next sps_setup.  0 or
 * SPS_EINVAL.  Any thread. */
SPS_API int sps_crash_safe(int on);

/* What sps_recover recovered (summed over the directories). */
typedef struct sps_recover_info {
    uint32_t processes;     /* directories written */
    uint32_t threads;       /* threads with records */
    uint64_t records;       /* begin and end records */
    uint64_t open_closed;   /* calls open at the end, ended at the last time */
    uint64_t carried;       /* calls begun before the last finalize, begun anew */
    uint64_t lost_records;  /* records missing between recovered ones */
} sps_recover_info_t;

/* Recovers the profile a process recording to path left behind when it
 * died (every "<path>.live-<pid>" directory): writes path as a finalize
 * would have (the HDF5 profile, or the format path's suffix names), with
 * the calls still open at the end closed at the last recorded time and
 * counted in /metadata (recovered_open_calls), and removes the directory.
 * Several directories (ranks, or earlier crashes) are each written to
 * "<stem>.pid<PID><ext>" unless exactly one exists.  Needs no session and
 * must not be called while one is running (SPS_EACTIVE): it runs one.
 * info (may be NULL) says what was recovered.  Returns 0, SPS_EPATH when
 * there is nothing to recover, SPS_EFORMAT for a torn or hostile
 * directory (err: why, one line; a torn last log entry is not an error:
 * it was being written at the kill), SPS_EACTIVE, or sps_finalize's
 * codes. */
SPS_API int sps_recover(const char *path, sps_recover_info_t *info, char *err, size_t errlen);

/* Events dropped so far under SPS_OVERFLOW_DROP (0 otherwise). */
SPS_API uint64_t sps_dropped(void);

/* Why the spill failed, when it did (SPS_OVERFLOW_SPILL: the spill file
 * could not grow, so events were dropped and counted by sps_dropped):
 * returns the operating system's errno of this session's last failed
 * spill write or open (ENOSPC for a full disk, EFBIG for a file size
 * limit, EIO, ENOENT or EACCES for a missing or unwritable spill_dir;
 * EFBIG too when cfg.spill_limit was reached), or 0 when no spill failed
 * in this session (or there is none).  When buf is not NULL and len > 0,
 * buf gets the cause in words, NUL-terminated and cut to len - 1 bytes
 * ("no space left on device (writing the spill file in /scratch)",
 * "the spill file reached spill_limit (1048576 bytes) in /tmp"; "" for
 * none).  The cause stays after spilling resumes (a finalize frees room),
 * for the file that counts the drops: finalize writes it to /metadata as
 * spill_error and spill_errno.  Any thread. */
SPS_API int sps_spill_error(char *buf, size_t len);

/* Number of calls whose nesting was repaired: an sps_end that named a region
 * other than the innermost open one closes the inner ones at that time; an
 * sps_end with no matching open call is ignored.  Both are counted here. */
SPS_API uint64_t sps_misuse_count(void);

/* Current time on the profiler's timeline (CLOCK_MONOTONIC ns). */
SPS_API int64_t sps_now_ns(void);

/* When the active session started (CLOCK_MONOTONIC ns); 0 without one. */
SPS_API int64_t sps_session_start_ns(void);

/* The counter the hot path reads: "tsc" or "monotonic". */
SPS_API const char *sps_clock_source(void);

/* ------------------------------------------------------------------------ */
/* Regions                                                                   */
/* ------------------------------------------------------------------------ */

/* A region id: small, dense, stable for the life of the process. */
typedef uint32_t sps_region_t;

/* The id returned for a NULL name; its calls are recorded as misuse. */
#define SPS_REGION_INVALID SPS_CAST_(sps_region_t, 0)

/* Interns name (any bytes up to a NUL; copied) and returns its id.  The same
 * name always gives the same id.  May be called before sps_setup (ids survive
 * sessions).  An empty name is the region "" shown as "(empty)"; names longer
 * than 4096 bytes are cut there; bytes that are not valid UTF-8 are kept for
 * identity but written as U+FFFD.  NULL gives SPS_REGION_INVALID.  Also
 * registers the region in the active session.  Thread-safe; takes a lock, so
 * cache the id (SPS_REGION does). */
SPS_API sps_region_t sps_region(const char *name);

/* Enter / leave a region on the calling thread.  Lock-free and allocation-
 * free: one fixed 8-byte record each into the thread's own buffer.  With no
 * session they cost one load and one predicted branch, inlined at the call
 * site.  Regions must nest per thread; see sps_misuse_count for what happens
 * when they do not.
 *
 * sps__begin / sps__end are the out-of-line halves (exported for bindings
 * that cannot use inline functions, e.g. ctypes or Fortran's bind(C)); they
 * check the session themselves.  sps__active is non-zero while a session
 * records; it is read here and written only by the library. */
/* These three names are the library's ABI (the bindings call them).  In
 * C++ every name containing "__" is reserved, so clang++ -Weverything
 * warns where they are declared; no use site ever names them, so the
 * warning is silenced here, for these declarations only. */
#if defined(__cplusplus) && defined(__clang__)
#  if __has_warning("-Wreserved-identifier") /* clang 13 and later */
#    define SPS_QUIET_RESERVED_ 1
#  endif
#endif
#ifdef SPS_QUIET_RESERVED_
#  pragma clang diagnostic push
#  pragma clang diagnostic ignored "-Wreserved-identifier"
#endif
SPS_API extern int sps__active;
SPS_API void sps__begin(sps_region_t r);
SPS_API void sps__end(sps_region_t r);
#ifdef SPS_QUIET_RESERVED_
#  pragma clang diagnostic pop
#  undef SPS_QUIET_RESERVED_
#endif

/* Inlined even without optimisation: no call when profiling is off, and
 * sps__begin's caller is the user's function (native stacks start there). */
/* no_instrument_function: a program built with -finstrument-functions
 * (libspanscope_instrument, docs/instrument.md) does not send the API's own
 * inline calls through its hooks */
#define SPS_ALWAYS_INLINE_ static inline __attribute__((always_inline, no_instrument_function))
SPS_ALWAYS_INLINE_ void sps_begin(sps_region_t r) {
    if (__builtin_expect(__atomic_load_n(&sps__active, __ATOMIC_RELAXED) != 0, 1))
        sps__begin(r);
}
SPS_ALWAYS_INLINE_ void sps_end(sps_region_t r) {
    if (__builtin_expect(__atomic_load_n(&sps__active, __ATOMIC_RELAXED) != 0, 1))
        sps__end(r);
}

/* Statistics of a region.  All times in ns. */
typedef struct sps_stats {
    uint64_t num_calls;   /* completed calls */
    int64_t total_ns;     /* sum of durations */
    int64_t self_ns;      /* sum of durations minus direct children */
    int64_t min_ns;       /* 0 when num_calls == 0 */
    int64_t max_ns;
    double mean_ns;
    double var_ns2;       /* sample variance (n-1), 0 for fewer than 2 calls */
} sps_stats_t;

/* Statistics of r over the whole session (all periods, including those
 * already written by a checkpoint finalize).  Open calls are not counted.
 * Returns 0, SPS_ENOSESSION or SPS_ENOREGION.  Cost: proportional to events
 * recorded since the last query (plus, per thread, a walk over the records
 * before the analysis's cursor in its chunk: at most one chunk). */
SPS_API int sps_region_stats(sps_region_t r, sps_stats_t *out);

/* Copies the durations (ns) of r's completed calls since the last finalize,
 * in start order, into out[0..cap) and returns how many there are in all
 * (may exceed cap; call with cap 0 to size a buffer).  The matching start
 * times (CLOCK_MONOTONIC ns) go to starts if not NULL.  Returns 0 without a
 * session or for an unknown region.  The order is the order of r's rows in
 * the file the next finalize writes (start order; equal starts: the lower
 * thread index first); calls still open are left out.  After a finalize
 * whose write failed, the calls of that pending period come first.
 *
 * Cost: the records written since the previous query, plus copying the
 * answer out.  The library keeps the calls of each region asked for in the
 * period (16 bytes a call) and brings them up to date from the new records
 * (every kept region at once); the first query of a region in a period
 * reads the period's records from its start once.  That memory is freed by
 * the first query after the next finalize and by sps_shutdown/sps_setup;
 * sps_query_info reports it. */
SPS_API size_t sps_region_durations(sps_region_t r, int64_t *out,
                                    size_t cap);
SPS_API size_t sps_region_calls(sps_region_t r, int64_t *starts,
                                int64_t *durations, size_t cap);

/* What the per-call queries (sps_region_calls, sps_region_durations) have
 * done in this process, for diagnostics and tests: records_read, the
 * records they decoded (each query decodes those written since the
 * previous one, 2 per call); rebuilds, the times a region new to a period
 * made them read the period's records again; regions and bytes, what they
 * keep now (regions asked for in the current period, their calls). */
typedef struct sps_query_info {
    uint64_t records_read;
    uint64_t rebuilds;
    uint64_t regions;
    uint64_t bytes;
} sps_query_info_t;
/* Fills *out (never fails; takes the session lock). */
SPS_API void sps_query_info(sps_query_info_t *out);

/* One completed span of the session, as sps_spans returns it.  Times are
 * CLOCK_MONOTONIC ns (the timeline of Python's time.perf_counter_ns()). */
typedef struct sps_span {
    int64_t start_ns, end_ns;
    int64_t self_ns;     /* duration minus the direct children's durations */
    int64_t parent;      /* index of the enclosing span in the same array,
                            -1 when it has none or it is not in the array */
    sps_region_t region;
    uint32_t thread;     /* thread index (see sps_thread_info) */
    uint32_t depth;      /* open calls around it on its thread */
    uint32_t stack;      /* native stack of its begin (sps_capture_stacks),
                            0 if none; see sps_stack_format */
    uint64_t seq;        /* record sequence number of its begin on its
                            thread: with thread, the span's exact identity
                            (see sps_thread_seq); SPS_SEQ_NONE for spans
                            that have no begin record (ProfilerStep#N) */
} sps_span_t;
/* ABI: sps_span_t is 56 bytes.  Its first eight fields (48 bytes) keep the
 * offsets they had before seq was appended after them; fields are only
 * ever appended.  Code that fills sps_span_t itself (sps_timeline_t)
 * should zero-initialise it, so that fields it does not know read 0. */
#define SPS_SEQ_NONE UINT64_MAX

/* Every span completed since the last finalize whose interval lies inside
 * [from_ns, to_ns] (use 0 and INT64_MAX for all), from every thread, in
 * order of start (an enclosing span before the spans it contains).  Nesting,
 * self time and parent links follow the one rule of the event model (a
 * child lies inside its parent on the same thread).  On success *out is a
 * malloc'd array the caller frees with sps_free, and *n its length (*out
 * may be NULL when *n is 0).  Returns 0, SPS_EINVAL (NULL arguments),
 * SPS_ENOSESSION, SPS_EMODE (aggregate sessions keep no spans) or
 * SPS_ENOMEM.  Cost: one pass over the period's events; memory: 56 bytes
 * per returned span.  A window with from_ns > to_ns returns no spans at
 * once (a cheap way to ask whether spans can be had).
 *
 * Steps (sps_step): every step that ended since the last finalize and
 * lies inside the window is one more span, region "ProfilerStep#N"
 * (interned, like any region name, when first returned),
 * on the thread that marked it, seq SPS_SEQ_NONE.  A step is the child of
 * the innermost span that contains it entirely, and the parent of the
 * spans lying entirely inside it whose parent was that same span (or
 * none); a span not entirely inside a step (one open across sps_step)
 * keeps its parent and is no child of the step.  Self times follow the
 * same rule: a step's self time is its duration minus its direct
 * children's, and its parent's self time no longer counts those children
 * but counts the step. */
SPS_API int sps_spans(int64_t from_ns, int64_t to_ns, sps_span_t **out,
                      size_t *n);
/* sps_spans, and the spans' values (cfg.track): *vals receives a malloc'd
 * array (free with sps_free) of *n * 2 * *nvals numbers, span i's own
 * values at [i * 2 * nvals, + nvals) and its self values after them, in
 * sps_value_name order (a peak's own is the span's peak of live bytes
 * above its begin, its self the peak outside its children).  Spans
 * without values (steps, calls carried in from an earlier period) have
 * zeros.  Without values in the session *nvals is 0 and *vals NULL.
 * Returns what sps_spans returns, or SPS_EINVAL for NULL vals/nvals. */
SPS_API int sps_spans_values(int64_t from_ns, int64_t to_ns, sps_span_t **out,
                             size_t *n, uint64_t **vals, uint32_t *nvals);

/* The calling thread's index in the running session and the record
 * sequence number of the last record it wrote: called right after
 * sps_begin, the (thread, seq) of that begin, which sps_spans reports as
 * the span's thread and seq -- an exact key for joining data kept beside
 * a span (the Python face's payloads) to it.  Lock-free, a few loads and
 * no system call (lost in the noise beside a begin/end pair).
 * Returns 0, SPS_EINVAL (NULL arguments), SPS_ENOSESSION (no session, or
 * this thread has recorded nothing in it), SPS_EMODE (aggregate session:
 * no records) or SPS_ETOOBIG (the thread is dropping events, see
 * sps_dropped: its last begin was not recorded). */
SPS_API int sps_thread_seq(uint32_t *thread, uint64_t *seq);

/* The session's clock anchor: CLOCK_REALTIME and CLOCK_MONOTONIC ns read
 * back to back at sps_setup, the pair every file and trace of the session
 * carries (HDF5 /metadata, JSON "spanscopeClock") so that merges can align
 * hosts.  Either pointer may be NULL.  Returns 0 or SPS_ENOSESSION (then
 * both are set to 0). */
SPS_API int sps_clock_anchor(int64_t *wall_ns, int64_t *mono_ns);

/* ------------------------------------------------------------------------ */
/* Steps and schedules (torch.profiler's schedule, in C)                    */
/* ------------------------------------------------------------------------ */

/* What a profiler does during one step, as torch.profiler.ProfilerAction. */
typedef enum {
    SPS_ACTION_NONE = 0,           /* not profiling */
    SPS_ACTION_WARMUP = 1,         /* profiling, results to be thrown away */
    SPS_ACTION_RECORD = 2,         /* recording */
    SPS_ACTION_RECORD_AND_SAVE = 3 /* recording; the cycle's last step */
} sps_action_t;

/* A step schedule, torch.profiler.schedule's parameters: the first
 * skip_first steps do nothing; then cycles of wait idle steps, warmup
 * warm-up steps and active recorded steps (the last of which is
 * SPS_ACTION_RECORD_AND_SAVE), repeat cycles in all (0: for ever).
 * skip_first_wait = 1 skips the first cycle's wait only.  All fields
 * >= 0, active >= 1, skip_first_wait 0 or 1, wait + warmup + active
 * within int64_t. */
typedef struct sps_schedule {
    int64_t wait, warmup, active, repeat, skip_first, skip_first_wait;
} sps_schedule_t;

/* 0 if s is a valid schedule, else SPS_EINVAL (also for NULL). */
SPS_API int sps_schedule_check(const sps_schedule_t *s);

/* The action of step (>= 0) under s, with torch's exact arithmetic:
 *     if step < skip_first: NONE; else step -= skip_first
 *     if skip_first_wait: step += wait
 *     n = wait + warmup + active
 *     if repeat > 0 and step / n >= repeat: NONE
 *     m = step % n: m < wait: NONE; m < wait + warmup: WARMUP;
 *     m < n - 1: RECORD; else RECORD_AND_SAVE
 * (computed without overflow for every int64_t step).  Returns the action
 * (an sps_action_t, >= 0) or SPS_EINVAL (invalid s, or step < 0).  Pure:
 * needs no session, any thread. */
SPS_API int sps_schedule_action(const sps_schedule_t *s, int64_t step);

/* Step boundaries.  A session keeps a step counter (0 at sps_setup) and
 * the times at which threads began and ended steps; sps_spans makes each
 * step a "ProfilerStep#N" span on the thread that marked it (see there).
 * Steps are kept apart from regions: a region open across a step boundary
 * is neither cut nor closed by it.
 *
 * sps_step ends the step the calling thread has open (if any), advances
 * the counter by one and begins that step on the calling thread, at one
 * instant: the call a training loop makes once per iteration.  Returns the
 * new step number (>= 1), or SPS_ENOSESSION, SPS_EMODE (aggregate
 * session: no spans), SPS_ETOOBIG (the counter is at INT64_MAX) or
 * SPS_ENOMEM.  Any thread; steps of different threads are paired per
 * thread, the counter is the session's.  Takes the session lock (about
 * 250 ns uncontended on our test VMs: a cost per step, none per region). */
SPS_API int64_t sps_step(void);

/* Sets the counter to step (>= 0) and begins that step on the calling
 * thread, ending the one it had open, at one instant: for a loop that
 * starts counting elsewhere than 0, or a profiler whose step number
 * outlives its sessions.  Returns 0, SPS_EINVAL, SPS_ENOSESSION, SPS_EMODE
 * or SPS_ENOMEM. */
SPS_API int sps_step_begin(int64_t step);

/* Ends the step the calling thread has open, beginning none (a loop's
 * end).  Returns 0 (also when no step was open), SPS_ENOSESSION,
 * SPS_EMODE or SPS_ENOMEM. */
SPS_API int sps_step_end(void);

/* Counters: named time series sampled by the program (memory in use, queue
 * depth, loss).  sps_counter_id interns a name (a counter is not a region:
 * it never appears in region tables); sps_counter records (now, value) in
 * the running session, under the session lock (about 50 ns: for samples,
 * not for hot loops).  Without a session it does nothing.  Samples are
 * written to the file's /counters group at finalize (and then start again)
 * and to timelines as counter tracks (Chrome "ph":"C").  A period keeps at
 * most 2^22 samples; later ones are dropped and counted. */
typedef struct sps_counter_sample {
    int64_t t_ns;          /* CLOCK_MONOTONIC ns */
    double value;
    sps_region_t counter;  /* from sps_counter_id */
    uint32_t reserved;
} sps_counter_sample_t;
/* Values per span (docs/values.md).  A session set up with
 * sps_config_t.track reads, at every sps_begin and sps_end of a thread,
 * the thread's cumulative values; each span then has its own value (end
 * minus begin) and a self value (own minus its direct children's), folded
 * like time, in every view.
 *
 * SPS_TRACK_MEMORY: the calling thread's allocation counters, which
 * allocators feed through sps_mem_alloc / sps_mem_free (spanscope's Python
 * allocator hooks, numpy's data handler and libspanscope_malloc do; a
 * custom C allocator calls them itself).  Per span: bytes allocated, bytes
 * freed, allocation and free counts, and the peak of the thread's live
 * bytes above their level at the span's begin.  Attribution is by thread:
 * an allocation counts for the innermost span open on the thread that
 * made it.
 * SPS_TRACK_COUNTERS: the perf_event counters named by sps_set_counters,
 * opened once per thread as a group. */
#define SPS_TRACK_MEMORY 1
#define SPS_TRACK_COUNTERS 2

/* Credit an allocation of `bytes` (sps_mem_alloc) or the release of a
 * block of `bytes` (sps_mem_free) to the calling thread.  A few plain
 * stores into thread-local counters: no lock, no allocation, safe in an
 * allocator and in a signal handler; cheap enough to call on every
 * allocation.  Callable with or without a session (without one, nothing
 * reads the counters).  A block freed on another thread than the one that
 * allocated it lowers that other thread's live bytes (counts may go below
 * zero there). */
SPS_API void sps_mem_alloc(size_t bytes);
SPS_API void sps_mem_free(size_t bytes);

/* The calling thread's memory counters since it started (what
 * sps_mem_alloc / sps_mem_free added up).  Never fails. */
typedef struct sps_mem_counts {
    uint64_t alloc_bytes, free_bytes;
    uint64_t allocs, frees;
    int64_t live_bytes;  /* alloc_bytes - free_bytes */
} sps_mem_counts_t;
SPS_API void sps_mem_thread_counts(sps_mem_counts_t *out);

/* The perf_event counters (comma-separated names, as perf stat -e takes
 * them: "task-clock,page-faults,cycles,instructions"; libpfm4 names where
 * the library is there) that sessions set up later with
 * SPS_TRACK_COUNTERS read.  NULL or "" clears the choice.  Returns 0 or
 * SPS_EINVAL (an unknown name; nothing changed).  An event the machine
 * cannot count (no PMU, perf_event_paranoid) is reported once on stderr
 * and reads 0. */
SPS_API int sps_set_counters(const char *names);

/* The name of value i of the running session (cfg.track): with
 * SPS_TRACK_MEMORY first "alloc_bytes", "free_bytes", "allocs", "frees",
 * "peak_bytes", then the counters' names in sps_set_counters order.  NULL
 * past the last, or without a session.  Valid until the session ends. */
SPS_API const char *sps_value_name(uint32_t i);

/* Region r's values summed over its completed calls since the last
 * finalize (cfg.track): own[i] and self[i] for i < cap, in sps_value_name
 * order (peaks: the largest), *calls the calls counted.  own, self may be
 * NULL.  Returns the number of values of the session (0: none tracked;
 * compare with cap), or a negative SPS_E code: SPS_ENOSESSION, SPS_EMODE
 * (aggregate), SPS_ENOMEM.  Cost: one pass over the period's events, as
 * sps_spans. */
SPS_API int sps_region_values(sps_region_t r, uint64_t *own, uint64_t *self, size_t cap,
                              uint64_t *calls);

SPS_API sps_region_t sps_counter_id(const char *name);
SPS_API void sps_counter(sps_region_t counter, double value);
/* The period's samples with from_ns <= t_ns <= to_ns, in time order, as a
 * malloc'd array (free with sps_free).  The samples of a pending period
 * (one whose finalize could not write its file) are included, as
 * sps_spans includes its spans.  Returns 0, SPS_EINVAL, SPS_ENOSESSION or
 * SPS_ENOMEM. */
SPS_API int sps_counter_samples(int64_t from_ns, int64_t to_ns,
                                sps_counter_sample_t **out, size_t *n);

/* Native call stacks.  sps_capture_stacks(1) makes every sps_begin of the
 * running session (events mode) also take its native stack (glibc's
 * backtrace(), about a microsecond, interned process-wide); sps_spans then
 * gives each such span a stack id.  sps_capture_stacks(0) stops it; a new
 * session starts without it.  While off it costs nothing: the hot path
 * does not look at it.  Returns 0, SPS_ENOSESSION or SPS_EMODE. */
SPS_API int sps_capture_stacks(int on);

/* Writes stack id's frames, innermost first (from the function that
 * called sps_begin), one "symbol+0xoff (object)" line each (dladdr:
 * exported and dynamic symbols; others as an address and offset in their
 * object), NUL-terminated, into buf[0..cap) (buf may be NULL) and
 * returns the length the whole text needs (excluding the NUL; call with
 * cap 0 to size a buffer).  Unknown ids give 0.  Thread-safe. */
SPS_API size_t sps_stack_format(uint32_t id, char *buf, size_t cap);

/* ------------------------------------------------------------------------ */
/* Stack sampling (src/ext/sampler.c, docs/sampling.md)                      */
/* ------------------------------------------------------------------------ */

/* Starts sampling every thread of the process, including threads started
 * later: each thread gets an event on its own CPU time that sends it
 * SIGPROF hz times per second of that CPU time (hz <= 0: 1000; at most
 * 10000): a perf_event task-clock event (exact periods, even when more
 * threads run than cores), else -- no perf events here, or
 * SPANSCOPE_SAMPLER=timer -- a POSIX timer on the thread's CPU-time clock
 * (timer_create, SIGEV_THREAD_ID), which the kernel checks only at its
 * tick.  The signal handler copies the native return addresses, the time
 * and (with a walker, below) a language runtime's frames into a
 * preallocated ring of the thread: no lock, no allocation.  A sampler
 * thread picks up new threads (within 20 ms) and empties the rings.
 * Samples belong to the innermost span open on their thread at their
 * time; sps_finalize writes them (/samples) and symbolises them then, not
 * while sampling.  Stopped by sps_sampling_stop, sps_shutdown, exit, and
 * in a forked child (which starts without samples).
 * A SIGPROF handler the program installed before is kept: a SIGPROF that
 * is not one of the sampler's (the program's own setitimer profiler, a
 * kill -PROF) goes to it.  Each sample carries the periods of CPU time it
 * stands for (its weight: the timers' overruns past the tick, the perf
 * event's count), so that weights, not sample counts, measure CPU time.
 * Returns 0, SPS_ENOSESSION, SPS_EMODE (aggregate session), SPS_EACTIVE
 * (already sampling), SPS_EINVAL (hz above 10000, or a SPANSCOPE_SAMPLER
 * other than timer or perf), SPS_ENOTSUP (no per-thread CPU timers here)
 * or SPS_ENOMEM. */
SPS_API int sps_sampling_start(int hz);
/* Stops sampling (timers deleted, the program's SIGPROF disposition put
 * back); the samples taken stay for the next finalize.  0 (also when not
 * sampling). */
SPS_API int sps_sampling_stop(void);
/* The rate sampling runs at, 0 when it does not. */
SPS_API int sps_sampling_hz(void);

/* Counts of the sampler since it started: samples written to the rings,
 * samples lost (a full ring), walks of a runtime's frames abandoned on a
 * memory fault, and threads sampled.  Any pointer may be NULL. */
SPS_API void sps_sampling_stats(uint64_t *taken, uint64_t *lost,
                                uint64_t *walk_faults, uint64_t *threads);

/* A language runtime's frames in the samples (the Python extension's,
 * python/spanscope/_sampler.c).  abi is SPS_FRAME_WALKER_ABI.
 *
 * walk runs in the sampled thread's SIGPROF handler: it writes up to max
 * words naming the runtime's frames running on this thread, innermost
 * first, and returns how many (0: none, e.g. the thread runs no Python).
 * It must be async-signal-safe: no lock, no allocation, no call into the
 * runtime that could.  A memory fault (SIGSEGV, SIGBUS) inside walk is
 * caught by the sampler: that walk is dropped (the sample keeps its native
 * frames) and counted in walk_faults.
 *
 * describe runs at finalize, in an ordinary thread: it writes word w's
 * function and file (NUL-terminated, truncated to their caps) and *line
 * (0 unknown), and returns 0, or -1 when it cannot (shown as "?").
 *
 * runtime_fn is any function of the runtime's own native code (NULL:
 * none): native frames of that object file run the runtime's frames and
 * are shown as those frames, not as themselves.  The struct is copied. */
#define SPS_FRAME_WALKER_ABI 1
typedef struct sps_frame_walker {
    int abi;
    int reserved_; /* 0 */
    int (*walk)(uint64_t *words, int max);
    int (*describe)(uint64_t w, char *func, size_t fcap, char *file,
                    size_t filecap, int64_t *line);
    const void *runtime_fn;
} sps_frame_walker_t;
/* A file's stack samples (its /samples group; docs/sampling.md), as read
 * and checked by sps_samples_read: per sample its time, thread (the
 * events' thread index, -1 for a thread without spans), OS thread id,
 * rank, region (index into region_names, -1 outside every span), call id
 * (the events' call ids, -1 none), stack (index into the stack table) and
 * weight (the timer periods it stands for, >= 1: the kernel checks CPU
 * timers at its tick, so a rate above it comes as weights); each stack k
 * lists frame indexes innermost first in stack_frames[stack_offsets[k] ..
 * stack_offsets[k + 1]); each frame has a function, file and line (a
 * runtime's such as Python: file and line; native: module and the offset
 * in it, file "" and line 0) and a kind (0 native, 1 runtime). */
typedef struct sps_samples {
    size_t n;
    const int64_t *times_ns, *threads, *tids, *ranks, *regions, *call_ids, *stacks, *weights;
    size_t nstacks;
    const int64_t *stack_offsets, *stack_frames;
    size_t nframes;
    const char *const *functions, *const *files, *const *modules;
    const int64_t *lines, *kinds, *addresses;
    size_t nregion_names;
    const char *const *region_names;
    int64_t hz, lost;  /* the rate sampled at; samples lost (full rings) */
    void *impl_;       /* owns everything above */
} sps_samples_t;
/* Reads the samples of the spanscope file at path into *out (a file
 * without samples gives n 0).  Returns 0, SPS_EINVAL, SPS_EIO,
 * SPS_EFORMAT (a bad index: the message says which) or SPS_ENOMEM; free
 * with sps_samples_free (also after a failure). */
SPS_API int sps_samples_read(const char *path, sps_samples_t *out);
SPS_API void sps_samples_free(sps_samples_t *s);

/* A file's device activity (its /device group; docs/device.md), as read
 * and checked by sps_device_read: one row per activity, every array [n].
 * kinds: SPS_DEVICE_KERNEL, _MEMCPY, _MEMSET (device rows: device, context,
 * stream, start/end on the host's CLOCK_MONOTONIC ns timeline, bytes of a
 * copy or set, grid and block of a kernel, copy_kinds/src_kinds/dst_kinds
 * CUPTI's memcpy and memory kinds) or SPS_DEVICE_RUNTIME, _DRIVER (the
 * CUDA API call on the host: device, context and stream -1).  names_idx
 * indexes names (a kernel's mangled name, "Memcpy HtoD (Pinned -> Device)",
 * "cudaLaunchKernel", ...); correlations join a device row to the API call
 * that launched it (CUPTI's correlation id); ranks, threads (the events'
 * thread index, -1 unknown) and tids (OS thread id, -1 unknown) name the
 * launching thread; regions (index into region_names, -1 none) and call_ids
 * (the events' call ids, as sps_samples_t's, -1 none) the launching span.
 * Every index is checked by the reader. */
#define SPS_DEVICE_KERNEL 1
#define SPS_DEVICE_MEMCPY 2
#define SPS_DEVICE_MEMSET 3
#define SPS_DEVICE_RUNTIME 4
#define SPS_DEVICE_DRIVER 5
typedef struct sps_device {
    size_t n;
    const int64_t *kinds, *names_idx, *devices, *contexts, *streams, *correlations;
    const int64_t *starts_ns, *ends_ns, *bytes, *ranks, *threads, *tids, *regions, *call_ids;
    const int64_t *grid_x, *grid_y, *grid_z, *block_x, *block_y, *block_z;
    const int64_t *copy_kinds, *src_kinds, *dst_kinds;
    size_t nnames;
    const char *const *names;        /* activity names */
    size_t nregion_names;
    const char *const *region_names; /* the file's region names */
    int present;                     /* 1 when the file has /device */
    const char *collector;           /* "cupti", "cuda_events" or "" */
    const char *clock;               /* "identity", "fitted" or "" */
    int64_t dropped;                 /* records CUPTI dropped */
    int64_t cupti_version;           /* CUPTI's API version, 0 unknown */
    void *impl_;                     /* owns everything above */
} sps_device_t;
/* Reads the device activity of the spanscope file at path into *out (a
 * file without /device gives present 0 and n 0).  Returns 0, SPS_EINVAL,
 * SPS_EIO, SPS_EFORMAT (a bad kind, index or time: sps_last_error says
 * which column and row) or SPS_ENOMEM; free with sps_device_free (also
 * after a failure).  Needs no session; any thread. */
SPS_API int sps_device_read(const char *path, sps_device_t *out);
SPS_API void sps_device_free(sps_device_t *d);
/* The CUPTI callback id of every row of d, as sps_device_read read it
 * (the file's /device/cbids: an API row's CUpti_CallbackId, the id of
 * cudaLaunchKernel, cuMemcpyAsync, ...; 0 for device rows), [d->n];
 * valid until sps_device_free(d).  NULL when the file has no cbids column
 * (files written before it), when d was filled by the caller (impl_ NULL)
 * and for d NULL.  A function rather than a field of sps_device_t, which
 * callers allocate: its size stays as it was. */
SPS_API const int64_t *sps_device_cbids(const sps_device_t *d);

/* Installs w (NULL removes the walker).  0, or SPS_EINVAL for a wrong abi
 * or a missing function; SPS_EACTIVE while sampling runs (set it first). */
SPS_API int sps_sampling_set_walker(const sps_frame_walker_t *w);

/* Frees memory the library handed out (sps_spans).  NULL is fine. */
SPS_API void sps_free(void *p);

/* Spans held by the caller, to be written as a timeline. */
typedef struct sps_timeline {
    size_t nnames;
    const char *const *names;        /* span.region indexes names[] */
    size_t nthreads;
    const int64_t *thread_ids;       /* span.thread indexes these ... */
    const char *const *thread_names; /* ... and these (NULL, or "" entries) */
    size_t nspans;
    const sps_span_t *spans;         /* in start order, nested per thread */
    const char *const *args;         /* NULL, or per span the text of a JSON
                                        object ("{...}") or NULL; JSON only,
                                        written as given (not validated) */
    const char *extra;               /* NULL, or top-level JSON members
                                        ("\"k\":1,\"j\":true"), JSON only */
    int64_t base_ns;                 /* CLOCK_MONOTONIC ns of time zero */
    const char *process_name;        /* NULL: "rank N" or "spanscope" */
    const char *trace_name;          /* NULL: none */
    int64_t rank, world_size;        /* rank < 0: not distributed */
    int64_t wall_anchor_ns;          /* CLOCK_REALTIME ns read together with */
    int64_t mono_anchor_ns;          /* this CLOCK_MONOTONIC ns (0: none), so
                                        that merges can align hosts (JSON) */
    const char *hostname;            /* NULL: none */
    size_t ncounters;                /* counter samples, time order; their */
    const struct sps_counter_sample *counters; /* .counter indexes names[] */
    int64_t pid;                     /* the process's id in the trace (torch
                                        writes the OS pid); <= 0: the
                                        calling process's (getpid) */
    const char *backend;             /* distributedInfo.backend ("nccl",
                                        "gloo", "mpi"), NULL: none known,
                                        the key left out */
} sps_timeline_t;

/* Writes t to path as a Chrome trace (.json, .json.gz) or a Perfetto trace
 * (.pftrace), chosen by the extension, through a temporary file renamed
 * into place.  Returns 0, SPS_EINVAL (unknown extension, or spans out of
 * order or out of range), SPS_EPATH, SPS_EIO or SPS_ENOMEM.  Needs no
 * session. */
SPS_API int sps_timeline_write(const char *path, const sps_timeline_t *t);

/* sps_timeline_write with stack samples the caller holds (samples NULL,
 * or n 0: the same file as sps_timeline_write).  The caller fills
 * *samples with its own arrays (impl_ NULL; nothing is kept after the
 * call): times_ns (CLOCK_MONOTONIC ns, as the spans), tids, stacks and
 * the stack table (stack_offsets [nstacks + 1], 0 first; stack_frames
 * innermost first), per frame functions, lines and kinds (files, modules
 * and addresses may be NULL, as may any string: ""), regions (index into
 * region_names, -1 outside every span; NULL: all -1) and weights (>= 1;
 * NULL: all 1); threads, ranks and call_ids are not read.  A sample's row
 * is the timeline's thread whose thread_ids entry is its tid; a tid that
 * is no thread gets a row of its own, "thread TID (samples)" (in a
 * .pftrace, whose tids are 32-bit, a TID outside 0..INT32_MAX is drawn
 * with a free tid in that range).  JSON gets
 * an instant event per sample (ph "i", cat "python_function", named after
 * its innermost frame's function; args.stack "file:line (function)"
 * innermost first, args.region, args.weight: as torch's traces write
 * them), Perfetto a PerfSample packet per timer period with an interned
 * callstack (perf_sample in trace processor), on the sample's thread.
 * Every index is checked before anything is written.  Returns 0,
 * SPS_EINVAL (sps_timeline_write's cases; a sample index out of range,
 * a stack_offsets entry that falls, a string that is not UTF-8, a time
 * too far from base_ns: sps_last_error names it), SPS_EPATH, SPS_EIO or
 * SPS_ENOMEM.  Needs no session; any thread. */
SPS_API int sps_timeline_write_samples(const char *path, const sps_timeline_t *t,
                                       const sps_samples_t *samples);

/* sps_timeline_write_samples with device activity the caller holds
 * (device NULL, or n 0: the same file as sps_timeline_write_samples).
 * The caller fills *device with its own arrays (impl_ NULL; nothing is
 * kept after the call), as sps_device_read hands a file's out: kinds,
 * names_idx and names, starts_ns/ends_ns (CLOCK_MONOTONIC ns, as the
 * spans), correlations, tids, and for device rows devices and streams
 * are needed; contexts, bytes, grid_*, block_*, copy_kinds, src_kinds and
 * dst_kinds may be NULL (0), regions too (-1: no launching span; else an
 * index into region_names, matched by name against the timeline's
 * names); threads, ranks and call_ids are not read.  An API row goes on
 * the timeline thread whose thread_ids entry is its tid (else a row of its
 * own, "thread TID (CUDA)"); its launching span is the innermost span of
 * its region on that thread that holds its start.  What is written:
 * export.h's device events (JSON: kineto's cuda_runtime / kernel /
 * gpu_memcpy / gpu_memset rows, "External id" on every span and on the
 * rows of the span that launched them, ac2g flows, "GPU N" processes with
 * "stream S" threads; Perfetto: a process per GPU, a track per stream,
 * flows from each API call to what it launched).  Every index is checked
 * before anything is written.  Returns sps_timeline_write_samples's codes
 * (SPS_EINVAL with sps_last_error naming a bad column and row).  Needs no
 * session; any thread. */
SPS_API int sps_timeline_write_device(const char *path, const sps_timeline_t *t,
                                      const sps_samples_t *samples,
                                      const sps_device_t *device);

/* A thread of the session, by its index (0, 1, ... in order of first use). */
typedef struct sps_thread {
    int64_t native_id;   /* the kernel's thread id (gettid) */
    int64_t first_ns;    /* first recorded event, CLOCK_MONOTONIC ns */
    char name[32];       /* pthread name at first use, may be "" */
} sps_thread_t;

/* Fills *out for thread index i of the running session.  Returns 0,
 * SPS_EINVAL (out NULL, or no thread i) or SPS_ENOSESSION (no session, or
 * a forked child). */
SPS_API int sps_thread_info(uint32_t i, sps_thread_t *out);

/* The calling thread's index in the running session, or -1 if it has
 * recorded nothing in this session (or there is none). */
SPS_API int64_t sps_thread_current(void);

/* Names the calling thread in every view of the recording (the HDF5 thread
 * table, timelines, tables) instead of its pthread name: for threads whose
 * names the OS cannot hold (pthread names stop at 15 bytes) or does not
 * know (a Python thread's threading name, a pool's worker).  Takes effect
 * at once, for the running session and later ones, whether or not the
 * thread has recorded yet; "" goes back to the name the namer gives
 * (sps_set_thread_namer), else the pthread name.  Names are kept to 31 bytes, cut between UTF-8
 * characters.  The name is copied.  Returns 0, or SPS_EINVAL for NULL.
 * Takes the session lock when the thread has recorded: not for hot paths. */
SPS_API int sps_thread_set_name(const char *name);

/* Installs namer, a function each thread calls once before its first
 * record in this process (its first in any session), outside every lock of
 * spanscope, to name itself with sps_thread_set_name -- as the Python
 * extension names Python threads after their threading names.  A thread
 * already named by sps_thread_set_name is not asked.  The namer runs on the
 * recording thread inside its first sps_begin (or step): it must be quick
 * and must not record; a record it makes anyway is not asked again.  NULL
 * removes it; the last call wins.  Thread-safe. */
SPS_API void sps_set_thread_namer(void (*namer)(void));

/* Name of region r (NULL for an unknown id).  Valid for the process life. */
SPS_API const char *sps_region_name(sps_region_t r);

/* Iteration.  sps_region_count() is the number of interned ids (ids run from
 * 1 to count).  sps_regions_registered / sps_regions_recorded write the ids
 * registered in (or with at least one completed call in) the active session
 * into out[0..cap) and return how many there are in all. */
SPS_API uint32_t sps_region_count(void);
SPS_API size_t sps_regions_registered(sps_region_t *out, size_t cap);
SPS_API size_t sps_regions_recorded(sps_region_t *out, size_t cap);

/* The calls open on the calling thread (begun, not yet ended), outermost
 * first: their region ids go to out[0..cap) and the count of all of them
 * is returned (call with cap 0 to size).  0 without a session or when this
 * thread has recorded nothing in it.  Takes the session lock and brings
 * this thread's analysis up to date: a query, not for hot loops. */
SPS_API size_t sps_open_calls(sps_region_t *out, size_t cap);

/* Region attributes, scope-profiler's columns of /rank_region_index that
 * are not statistics.  They belong to the session: sps_setup starts with
 * none.  Strings are copied; NULL clears.  Each returns 0, SPS_EINVAL (r is
 * not an id handed out) or SPS_ENOMEM; any thread (a lock of their own, not
 * the hot path's).
 *
 * sps_region_set_source: where r is defined -- file (source_files), line
 * (source_lines, -1 unknown), text of the definition (source_texts).
 * sps_region_set_tags: r's tags as a JSON list of strings, written as
 * given (the caller makes it: '["io","gpu"]'); unset: "[]".
 * sps_region_set_event_metadata: metadata of r's calls in the period the
 * next finalize writes, as a JSON list of ncalls objects, one per call in
 * the order of the file's rows (start order; sps_region_calls gives it),
 * written as given.  The writer uses it only when ncalls equals the calls
 * it writes for r (else "[]": a list of another length would misname the
 * calls), and a successful finalize consumes it. */
SPS_API int sps_region_set_source(sps_region_t r, const char *file, int64_t line,
                                  const char *text);
SPS_API int sps_region_set_tags(sps_region_t r, const char *tags_json);
SPS_API int sps_region_set_event_metadata(sps_region_t r, const char *json,
                                          uint64_t ncalls);

/* One asyncio task (or another cooperative lane) of the session, a row of
 * /task_table (scope-profiler's columns: index, thread_index, created_ns,
 * done_ns, steps, running_ns, suspended_ns, kind, name, coro_name).
 * Times are CLOCK_MONOTONIC ns (the events' timeline), done_ns -1 for a
 * task not finished; thread_index is given as the kernel thread id
 * (gettid; Python's threading.get_native_id()) of its last step, -1 if it
 * never ran, and written as that thread's session index (the
 * thread_table's index; -1 for a thread that recorded nothing); running_ns and
 * suspended_ns split its life between steps that held a thread and the
 * gaps between them. */
typedef struct sps_task {
    int64_t index, thread_index;
    int64_t created_ns, done_ns;
    int64_t steps, running_ns, suspended_ns;
    const char *kind;      /* "task" (asyncio), "greenlet", ... */
    const char *name;      /* the task's name */
    const char *coro_name; /* what it runs (the coroutine's qualname) */
} sps_task_t;

/* One step of a task: the stretch [start_ns, end_ns) (CLOCK_MONOTONIC
 * ns) during which task (an sps_task_t index) held thread (its kernel
 * thread id, as sps_task_t.thread_index is given). */
typedef struct sps_task_step {
    int64_t task, thread, start_ns, end_ns;
} sps_task_step_t;

/* Sets the session's task steps to steps[0..n) (copied; any order),
 * replacing what was set before.  From them each finalize of an events
 * session adds scope-profiler's per-call columns /events/task_ids (the
 * task whose step on the call's thread contains the call's start, -1 for
 * none) and /events/await_ns (the part of the call its task spent
 * suspended: the call's duration minus the task's steps inside it; 0
 * without a task), reading the period's starts, durations and threads
 * back from the file it wrote (40 bytes per call, 32 per step, while it
 * runs), when a task table is set too (sps_tasks_set).  Returns 0, SPS_EINVAL (steps NULL with n > 0, or a step ending
 * before it starts), SPS_ENOSESSION or SPS_ENOMEM.  Any thread. */
SPS_API int sps_task_steps_set(const sps_task_step_t *steps, size_t n);

/* Sets the session's task table to tasks[0..n) (copied, strings too; NULL
 * strings are ""), replacing what was set before: a binding that follows
 * tasks hands over its table before each finalize, which writes it to
 * /task_table (none when n is 0).  A new session starts with none.
 * Returns 0, SPS_EINVAL (tasks NULL with n > 0), SPS_ENOSESSION or
 * SPS_ENOMEM.  Any thread (a lock of its own). */
SPS_API int sps_tasks_set(const sps_task_t *tasks, size_t n);

/* Adds the string attribute key = value (both copied) to /metadata of
 * the files the session's finalizes write; the same key again replaces
 * it, value NULL removes it.  spanscope's own attributes (start_time_ns,
 * label, hostname, ...) win: a key that names one is not written.  A new
 * session starts with none.  Returns 0, SPS_EINVAL (key NULL or ""),
 * SPS_ENOSESSION or SPS_ENOMEM.  Any thread. */
SPS_API int sps_metadata_set(const char *key, const char *value);

/* Prints the summary table of the session so far (all periods) to a FILE*
 * (stdio's FILE, passed as void* to keep <stdio.h> out of this header). */
SPS_API int sps_print_summary(void *file);

/* ------------------------------------------------------------------------ */
/* Files: merging and reading recordings                                     */
/* ------------------------------------------------------------------------ */

/* Merges per-rank recordings into one file at out_path: each of the n files
 * in_paths[0..n) becomes one process of the output, labelled with its rank.
 * Needs no session and leaves the active one alone; may be called from any
 * thread (two calls must not write the same output).  in_paths and the
 * strings are borrowed for the call only.
 *
 * Output format by out_path's extension: .h5 (scope-profiler schema 3),
 * .json / .json.gz (Chrome trace JSON) or .pftrace (Perfetto), from any
 * mix of .h5, .json, .json.gz, .pftrace inputs (an .h5 from trace inputs:
 * the trace merge, then written as .h5 with call and parent ids from the
 * fold).
 *
 * Ranks come from the files (/metadata rank of an .h5, distributedInfo.rank
 * or a "rank N" process label of a trace), else from the position in
 * in_paths (0-based).  Two inputs with one rank are an error, and so is an
 * input that already holds several ranks (an earlier merge).
 *
 * Clocks: the output is on the monotonic clock of a reference input and
 * the others are shifted onto it.  An .h5 whose /metadata has
 * clock_offset_ns (ns to add to its times to put them on rank 0's clock,
 * measured by the MPI integration) is shifted by exactly that, the
 * reference then being the lowest rank (rank 0: the output is on rank 0's
 * clock); other .h5 inputs are shifted through their wall-clock anchors
 * (not at all when recorded on the reference's host and boot), and so are
 * JSON traces carrying spanscope's "spanscopeClock" anchor; other traces
 * are merged unshifted.  A JSON output records how
 * each rank was aligned in its top-level "spanscope" key.  docs/merge.md
 * gives the error bounds.
 *
 * Stack samples: the /samples of every .h5 input go along, shifted like
 * its spans: into an .h5 output's /samples (each sample with its input's
 * rank, its stacks, frames and regions re-indexed into the merged
 * tables), into a trace output on their thread's row (as sps_export's
 * "chrome" instants; Perfetto PerfSample packets).  Trace inputs carry no
 * samples.
 *
 * The output is written to "<out_path>.tmp-<pid>" and renamed into place;
 * on failure nothing is left behind.  The inputs are validated, but HDF5
 * itself may crash or hang on some corrupt .h5 files: to merge files you
 * do not trust, call this in a child process (as `spanscope merge` does).
 *
 * Returns 0, SPS_EINVAL (NULL or empty paths, n == 0, an unknown
 * extension, two inputs with one rank),
 * SPS_EIO (an input cannot be opened or read, or the output cannot be
 * finished), SPS_EFORMAT (an input is not a valid file, holds several
 * ranks, or a time leaves the 64-bit range once shifted; also an aggregate
 * .h5 input of a trace output), SPS_EMODE (an aggregate .h5 input of an
 * .h5 output: no spans), SPS_EPATH (the output path cannot be
 * created), SPS_EHDF5 or SPS_ENOMEM.  On failure one line, the reason
 * naming the file, is written to err_file (a stdio FILE*, passed as void*)
 * when it is not NULL; nothing is printed otherwise. */
SPS_API int sps_merge(const char *out_path, const char *const *in_paths,
                      size_t n, void *err_file);

/* Reads the HDF5 file at path (spanscope's, or scope-profiler's schema 2/3)
 * and prints its report to out_file (a FILE*): the very text of
 * `spanscope report PATH --sort SORT --top TOP` (one function makes both):
 * a line naming the file, its schema, layout, regions and calls; the tree
 * view; the flat view sorted by sort ("self" (NULL), "total", "calls",
 * "mean", "max" or "name"), at most top rows (0 = all); for a file of 2 or
 * more ranks the per-rank view (min / mean / max over the ranks of each
 * region's total time, slowest rank, imbalance); and the counters, if
 * any.  path and out_file are borrowed for the call; no session is
 * needed.  The input is validated, but HDF5 itself may crash on some
 * corrupt files (see sps_merge).  On failure returns
 * SPS_EIO (cannot open or read, or writing out_file failed), SPS_EFORMAT
 * (not a valid file), SPS_EINVAL (path or out_file NULL, or an unknown
 * sort key) or SPS_ENOMEM, and writes a one-line reason to err[0..errlen)
 * when err is not NULL. */
SPS_API int sps_report(const char *path, void *out_file, const char *sort,
                       size_t top, char *err, size_t errlen);

/* --- The HTML report (src/api/html_file.c, src/formats/html.c) ---------- *
 *
 * One self-contained page (inline CSS and JS: it loads nothing from the
 * network, whatever the options) for one recording -- a zoomable timeline,
 * a legend of the regions' colours, per-region bars of total and self
 * time, the summary table -- or comparing several: the runs, bars per
 * region and run, a comparison table and, when the runs differ in size,
 * the scaling section (speedup and efficiency per region over ranks,
 * nodes, threads or cores).  The options are scope-profiler 0.7.5's
 * create_html_report options (html_report.py), with its names.
 *
 *     sps_html_options_t o = SPS_HTML_OPTIONS_INIT;
 *     const char *inc[] = {"solve"};
 *     o.include = inc; o.ninclude = 1; o.sort = "total";
 *     rc = sps_html_write_files(paths, labels, n, "report.html", &o, err, sizeof err);
 */

/* How to write the page.  Start from SPS_HTML_OPTIONS_INIT (every field
 * its default) and set what differs; everything is borrowed for the call. */
typedef struct sps_html_options {
    /* one run: embed at most this many spans in the timeline (the
     * longest; 0: none, a page of the statistics), at most
     * SPS_HTML_MAX_SPANS_LIMIT.  Statistics cover every span. */
    size_t max_spans;
    /* region filters: a region is shown when its name matches one of
     * include (none: every region) and none of exclude -- POSIX extended
     * regular expressions matched at the name's start (scope-profiler's
     * re.match, for the syntax both share).  They select what the
     * timeline, the legend, the bars, the tables and the scaling section
     * show; nesting and self time are worked out over every region, so a
     * hidden child's time is never counted as its parent's self time (as
     * scope-profiler's report).  A pattern that matches nothing is no
     * error (as there): the page says that no region matched. */
    const char *const *include;
    size_t ninclude;
    const char *const *exclude;
    size_t nexclude;
    /* ranks to show (NULL or none: every rank).  A process of a trace
     * without a rank is rank "its index among the processes".  A rank
     * that a run does not hold is no error (as scope-profiler): the page
     * names it. */
    const int64_t *ranks;
    size_t nranks;
    /* the summary table's order: "start" (first call first), "total",
     * "calls", "avg", "min", "max", "first", "last", "std", "p50", "p95",
     * "p99", "imbalance" (descending), "name"; NULL: "total" (the page's
     * order before these options). */
    const char *sort;
    /* the summary table's columns, in order: "region" (or "name"),
     * "ranks", "calls", "total", "self", "percent" (% session), "avg",
     * "min", "max", "first", "last", "std", "p50", "p95", "p99",
     * "imbalance"; NULL with ncolumns 0: region, calls, total, self,
     * mean (avg), min, max.  p50/p95/p99 come from a histogram of the
     * durations (exact below 32 ns, within 2.2 % above). */
    const char *const *columns;
    size_t ncolumns;
    /* 0: no charts -- no timeline, legend, bars or scaling section, only
     * the tables (scope-profiler's include_charts=False).  Default 1. */
    int charts;
    /* scope-profiler's charts_cdn: accepted and without effect.  There it
     * loads its charting library from a CDN to make the file smaller; this
     * page draws with its own few kB of inline script and loads nothing,
     * so there is nothing to leave out. */
    int charts_cdn;
    /* the comparison's scaling section: "strong" (speedup T_base/T_n per
     * region, with the efficiency speedup / (x_n / x_base)), "weak"
     * (efficiency T_base/T_n), or "both"; NULL: "both". */
    const char *scaling;
    /* the scaling section's x axis: "ranks", "nodes" (an .h5's /metadata
     * num_nodes; a one-rank run is one node), "threads" (an .h5's
     * /metadata omp_num_threads, else the threads spanscope's writer saw
     * record, /metadata threads), "cores" (ranks x threads), or "auto"
     * (NULL): ranks when they differ, else threads when every run has a
     * count and they differ, else no section (scope-profiler's choice).
     * A named axis a run has no value for (a trace has no /metadata) is
     * SPS_EINVAL; one value in every run gives a note, no charts. */
    const char *speedup_x;
    /* one run: the page's title (NULL: the input's file name) */
    const char *title;
    /* called now and then while spans are read (done of total, total the
     * source's estimate or 0) and once at the end with final set for
     * large inputs; NULL: none.  The library prints nothing itself. */
    void (*progress)(uint64_t done, uint64_t total, int final);
} sps_html_options_t;

/* Spans the timeline embeds by default, and the most it can be asked to:
 * the page's heap numbers them in 32 bits, and the 48 bytes each takes
 * must fit in the address space. */
#define SPS_HTML_DEFAULT_MAX_SPANS 200000u
#define SPS_HTML_MAX_SPANS_LIMIT                                               \
    (SPS_CAST_(size_t, UINT32_MAX) < SIZE_MAX / 48 ? SPS_CAST_(size_t, UINT32_MAX) \
                                                   : SIZE_MAX / 48)

/* The defaults: 200000 spans, every region and rank, sorted by total,
 * the default columns, charts, "both", "auto". */
#define SPS_HTML_OPTIONS_INIT                                                  \
    {SPS_HTML_DEFAULT_MAX_SPANS, NULL, 0, NULL, 0, NULL, 0, NULL, NULL, 0, 1, 0, NULL, NULL, \
     NULL, NULL}

/* Writes to out_path, through a temporary name renamed into place, the
 * page of the recording at in_paths[0] (n 1) or the page comparing the n
 * recordings at in_paths[] (run 0 the baseline of the ratios), each .h5,
 * .json, .json.gz or .pftrace, as opts says (NULL: the defaults).
 * labels[k] names run k on a comparison (labels NULL: the file names);
 * unused for one run.  Needs no session; everything is borrowed.  The
 * page of `spanscope html` and of Python's create_html_report.
 *
 * Returns 0, SPS_EINVAL (a NULL path, n 0, an unknown input extension, an
 * unknown sort key, column, scaling mode or axis, no columns, a named
 * axis some run has no value for, max_spans over the limit), SPS_EIO,
 * SPS_EFORMAT (a bad input), SPS_EPATH (out_path cannot be created) or
 * SPS_ENOMEM, with a one-line reason in err[0..errlen) when err is not
 * NULL.  The input is validated, but HDF5 may crash on some corrupt files
 * (see sps_merge). */
SPS_API int sps_html_write_files(const char *const *in_paths, const char *const *labels,
                                 size_t n, const char *out_path,
                                 const sps_html_options_t *opts, char *err, size_t errlen);

/* sps_html_write_files of one recording with the defaults but max_spans
 * (0: SPS_HTML_DEFAULT_MAX_SPANS): the page of `spanscope html IN -o OUT --max-spans N`. */
SPS_API int sps_html_file(const char *in_path, const char *out_path, size_t max_spans,
                          char *err, size_t errlen);

/* sps_html_write_files of n (>= 2: else SPS_EINVAL) recordings labelled
 * labels[] (not NULL) with the defaults: the page of `spanscope html A B
 * ... -o OUT`. */
SPS_API int sps_html_compare_files(const char *const *in_paths, const char *const *labels,
                                   size_t n, const char *out_path, char *err, size_t errlen);

/* What one /metadata attribute holds. */
typedef enum {
    SPS_META_INT = 1,   /* integers (any width, read as int64) */
    SPS_META_FLOAT = 2, /* floating point (read as double) */
    SPS_META_TEXT = 3   /* strings (fixed or variable length) */
} sps_meta_kind_t;

/* One attribute of a file's /metadata group: a scalar (is_array 0, n 1)
 * or a 1-D array of n values.  Exactly one of ints, floats, texts is set,
 * by kind.  Everything lives in the array sps_metadata_read returns. */
typedef struct sps_meta_attr {
    const char *name;         /* valid UTF-8 */
    int kind;                 /* sps_meta_kind_t */
    int is_array;
    size_t n;
    const int64_t *ints;      /* SPS_META_INT (unsigned values above
                                 INT64_MAX read as INT64_MAX) */
    const double *floats;     /* SPS_META_FLOAT */
    const char *const *texts; /* SPS_META_TEXT: valid UTF-8 (bytes that are
                                 not become U+FFFD) */
} sps_meta_attr_t;

/* Reads every attribute of the /metadata group of the HDF5 file at path
 * (start_time_ns, rank, hostname, label, ... as spanscope writes them;
 * whatever scope-profiler or a user put there), in name order.  Integers,
 * floats and strings, scalar or 1-D, are read; attributes of other types
 * are left out.  A file without /metadata gives *n = 0.  On success *out
 * is an array of *n attributes (NULL when none) that the caller frees
 * with sps_metadata_free.  On failure returns SPS_EINVAL (NULL
 * arguments), SPS_EIO (cannot open), SPS_EFORMAT (not an HDF5 file) or
 * SPS_ENOMEM and writes a one-line reason to err[0..errlen) when err is
 * not NULL.  May be called from any thread. */
SPS_API int sps_metadata_read(const char *path, sps_meta_attr_t **out,
                              size_t *n, char *err, size_t errlen);
/* Frees what sps_metadata_read returned (NULL is fine). */
SPS_API void sps_metadata_free(sps_meta_attr_t *attrs, size_t n);
/* Sets one attribute of the /metadata group of the spanscope (or
 * scope-profiler) HDF5 file at path to the string value, replacing one of
 * that name (the group is made when the file has none): what a tool learns
 * only once the file is written, such as `spanscope run --follow`'s table
 * of processes in the merged file.  The file must be closed (no session
 * writing it).  path, key and value are borrowed.  Returns 0, SPS_EINVAL
 * (a NULL argument or an empty key), SPS_EIO (cannot open it for writing),
 * SPS_EFORMAT (not an HDF5 file HDF5 reads safely) or SPS_EHDF5, with the
 * one-line reason in err[0..errlen) when err is not NULL. */
SPS_API int sps_metadata_write(const char *path, const char *key, const char *value,
                               char *err, size_t errlen);

/* Hostile files.  libhdf5 1.10 crashes or loops on some corrupt files (a
 * broken global heap of variable-length strings, a broken attribute
 * message), and nothing can be validated before it parses them.  So every
 * reader of this library (sps_file_open, sps_report, sps_merge,
 * sps_metadata_read, sps_html_file, sps_export, the Python faces) first
 * has a forked child parse the file -- every hard link from the root,
 * every attribute, every variable-length or small dataset, every chunk
 * index -- under a time limit and a memory cap, and opens the file itself
 * only when that child ended normally; else it fails with SPS_EFORMAT
 * ("corrupt file: parsing it crashed libhdf5 (Segmentation fault) in an
 * isolated check").  A verdict is kept per file (device, inode, size,
 * times), so a file is checked once until it changes.
 * $SPANSCOPE_H5_ISOLATE=0 turns the check off; $SPANSCOPE_READ_TIMEOUT
 * sets its time limit in seconds (default 20 + 1 per 4 MiB).
 * docs/robustness.md says what it covers and what the fuzzing found.
 *
 * sps_h5_check runs that check on path alone: 0 (safe to read, or not a
 * file the readers would open: they report that), SPS_EFORMAT (refused),
 * SPS_EIO (no child process could be made), SPS_EINVAL (path NULL), with
 * a one-line reason in err[0..errlen) when err is not NULL.  Thread-safe. */
SPS_API int sps_h5_check(const char *path, char *err, size_t errlen);

/* How many files the check has parsed in a child process since the
 * library was loaded (a kept verdict does not count again), and how many
 * of them it refused.  Either pointer may be NULL. */
SPS_API void sps_h5_check_stats(uint64_t *checked, uint64_t *refused);

/* One row of a file's index: the calls of one region on one rank. */
typedef struct sps_file_row {
    uint32_t region;        /* index into sps_file_t.names */
    uint32_t rank;
    uint64_t first;         /* columnar: the row's calls are the events
                               [first, first + count) of sps_file_t's event
                               arrays, in the file's order (start order in
                               spanscope's files); aggregate: 0 */
    uint64_t count;         /* calls (aggregate: aggregate_counts) */
    int64_t total_ns;       /* sum of the durations (aggregate: as stored) */
    int64_t min_ns, max_ns; /* 0 without calls (aggregate: as stored) */
    int64_t self_ns;        /* columnar: the sum of the fold's self_ns over
                               the row's calls; aggregate: as stored
                               (aggregate_exclusives), -1 when absent */
    int64_t stored_self_ns; /* what the file's index says (exclusive_totals,
                               aggregate_exclusives), -1 when absent: for
                               comparison only, self_ns is the model's */
} sps_file_row_t;

/* One column of a file's lane table (sps_file_table_t): integers (any
 * integer type as stored, read as int64) or strings (valid UTF-8). */
typedef struct sps_file_column {
    const char *name;          /* the dataset's name, valid UTF-8 */
    int is_text;               /* 0: ints, 1: texts */
    const int64_t *ints;       /* nrows values when !is_text, else NULL */
    const char *const *texts;  /* nrows strings when is_text, else NULL */
} sps_file_column_t;

/* A table of equal-length 1-D columns: scope-profiler's /thread_table and
 * /task_table (its track_threads / track_async lanes; a "ranks" column
 * says whose row it is).  ncols 0 when the file lacks the group; columns
 * of other types (floats, compounds) are left out. */
typedef struct sps_file_table {
    size_t nrows, ncols;
    const sps_file_column_t *cols;
} sps_file_table_t;

/* One row of scope-profiler's rank_region_index/summary_statistics: the
 * fixed-size statistics of a region on a rank, ns (mean and m2 of the
 * durations by Welford: the variance is m2 / count). */
typedef struct sps_file_summary {
    int64_t total, minimum, maximum, first, last, start_minimum, end_maximum;
    uint64_t gpu_count;
    int64_t gpu_total;
    double mean, m2;
} sps_file_summary_t;

/* An event no row of the index covers (sps_file_t.row). */
#define SPS_FILE_NO_ROW UINT32_MAX

/* An HDF5 recording read and validated (spanscope's, or scope-profiler's
 * schema 1, 2 or 3): the one model of the file every view of it sees -- report,
 * diff, html, merge and the Python faces.  Nesting and self times are the
 * one fold's (docs/design.md, "The one fold"): parents from the file's
 * call_ids/parent_ids when it has both, else by the interval rule per rank
 * and thread (thread_ids when present); self time is each call's duration
 * minus the part of each direct child that lies inside it.
 *
 * Everything here belongs to the handle and lives until sps_file_close;
 * it is read-only.  An array may be NULL when its length is 0.  The
 * library allocates the struct, so fields are only ever appended. */
typedef struct sps_file {
    int schema;             /* scope_profiler_schema: 1 (no attribute:
                               rank<N>/regions/<name> groups), 2 or 3 */
    int aggregate;          /* storage_layout: 0 "columnar", 1 "aggregate"
                               (statistics per row, no events) */
    int nested_by_ids;      /* 1: parents from call_ids/parent_ids;
                               0: by the interval rule */
    uint64_t orphans;       /* parent ids naming no call of their rank:
                               those calls are roots */
    uint64_t cycles;        /* parent-id cycles cut (a call made a root) */
    size_t nnames;
    const char *const *names; /* region names, valid UTF-8 */
    size_t nrows;
    const sps_file_row_t *rows; /* in the file's index order */
    /* Per event of /events (nevents of each; none for aggregate files). */
    uint64_t nevents;
    const int64_t *start_ns;  /* absolute (schema 3's gaps decoded) */
    const int64_t *dur_ns;    /* durations (schema 2: end - start) */
    const int64_t *self_ns;   /* the fold's self time, >= 0 */
    const int32_t *parent;    /* the fold's parent: a FILE-WIDE event index
                                 (into these arrays; row[parent] is its row),
                                 -1 for a root */
    const uint32_t *row;      /* index into rows, SPS_FILE_NO_ROW for an
                                 event no row covers (parent -1, self its
                                 duration) */
    const int64_t *call_ids;   /* as stored; NULL when the file lacks it */
    const int64_t *parent_ids; /* as stored; NULL when absent */
    const int64_t *thread_ids; /* as stored; NULL when absent */
    /* /counters: nsamples samples in the file's order (time order in
     * spanscope's files) of ncounters named series. */
    size_t ncounters;
    const char *const *counter_names; /* valid UTF-8 */
    size_t nsamples;
    const int64_t *sample_counter;    /* index into counter_names */
    const int64_t *sample_rank;       /* 0 .. INT32_MAX */
    const int64_t *sample_t_ns;       /* CLOCK_MONOTONIC ns */
    const double *sample_value;
    uint64_t samples_dropped;         /* lost to the recording's cap */
    /* /metadata, as sps_metadata_read reads it */
    size_t nattrs;
    const sps_meta_attr_t *attrs;
    /* scope-profiler's per-row columns of /rank_region_index (schema 1:
     * the region group's attributes), nrows each, NULL when the file
     * lacks them: the region's call site (line -1 and file "" where
     * unknown), its source text, its tags and its per-call metadata, the
     * last two as JSON list text ("[]" where none), as stored. */
    const int64_t *row_source_lines;
    const char *const *row_source_files;
    const char *const *row_source_texts;
    const char *const *row_tags;
    const char *const *row_event_metadata;
    /* scope-profiler's optional per-event columns, as stored (nevents
     * each, NULL when absent): CUDA-event durations (-1 none), asyncio
     * task ids (-1 outside a task) and the ns a call's task was
     * suspended. */
    const int64_t *gpu_dur_ns;
    const int64_t *task_ids;
    const int64_t *await_ns;
    /* /thread_table and /task_table (empty tables when absent) */
    sps_file_table_t thread_table, task_table;
    /* 1 when /rank_region_index has scope-profiler's fixed-size
     * summary_statistics column (what its summary-only reader needs) */
    int has_summary_statistics;
    /* That column, nrows rows, from sps_file_open_index only (NULL from
     * sps_file_open, and when the file lacks it or is aggregate). */
    const sps_file_summary_t *row_summary;
    /* Which of scope-profiler's per-rank integration groups some
     * rank<N> group of the file has (SPS_FILE_HAS_* bits; 0 for none):
     * data spanscope does not read yet, so that its readers can say so
     * rather than pretend there is none. */
    unsigned rank_groups;
    /* /values (sps_config_t.track, docs/values.md): value_nrows rows,
     * each a region name (valid UTF-8), its rank and its calls, and per
     * value name its own sum and its self sum ([row * nvalue_names + k];
     * peak_bytes: the largest).  0 rows when the file has none; none from
     * sps_file_open_index.  (Appended: the fields above keep their
     * offsets.) */
    size_t nvalue_names;
    const char *const *value_names;
    size_t value_nrows;
    const char *const *value_regions;
    const int64_t *value_ranks, *value_calls;
    const int64_t *value_own, *value_self;
} sps_file_t;

/* Bits of sps_file_t.rank_groups: rank<N>/likwid, rank<N>/perf_events,
 * rank<N>/line_profile. */
#define SPS_FILE_HAS_LIKWID 1u
#define SPS_FILE_HAS_PERF_EVENTS 2u
#define SPS_FILE_HAS_LINE_PROFILE 4u

/* Reads and validates the HDF5 file at path (the reader behind
 * sps_report) into *out, a handle the caller closes with sps_file_close.
 * The handle holds the reader's own arrays: nothing is copied for the
 * caller.  Memory: 32 bytes per event (start, duration, self, parent,
 * row), 24 more with the three id columns, under 200 bytes per row, the
 * names, 32 bytes per counter sample and /metadata; while the fold runs,
 * working arrays of about 70 bytes per event more, freed before it
 * returns.
 *
 * path is borrowed for the call.  May be called from any thread, and
 * needs no session.  A handle never changes: any number of threads may
 * read it at once; close it once, when none does.  The input is
 * validated (sizes, bounds, ids), but HDF5 itself may crash or hang on
 * some corrupt files: read files you do not trust in a child process
 * (see sps_merge).
 *
 * Returns 0, SPS_EINVAL (path or out NULL), SPS_EIO (the file cannot be
 * opened or read: missing, unreadable, not a regular file), SPS_EFORMAT
 * (not HDF5, truncated or corrupt, or not a valid schema 1/2/3 file) or
 * SPS_ENOMEM; on failure *out is NULL and a one-line reason naming the
 * file is written to err[0..errlen) when err is not NULL. */
SPS_API int sps_file_open(const char *path, const sps_file_t **out,
                          char *err, size_t errlen);

/* Like sps_file_open, but reads only what does not grow with the calls:
 * names, the index (validated against /events without reading it), the
 * per-row columns, summary_statistics (row_summary), the lane tables and
 * /metadata.  The handle has no events (nevents 0, the per-event arrays
 * NULL) and no counters; its rows' count is the index's, and total_ns,
 * min_ns, max_ns come from summary_statistics when the file has it (else
 * 0), self_ns and stored_self_ns from exclusive_totals (-1 when absent);
 * aggregate files as sps_file_open gives them.  The file stays open until
 * sps_file_close.  Errors as sps_file_open; a schema 1 file gives
 * SPS_EFORMAT (it has no index to read alone). */
SPS_API int sps_file_open_index(const char *path, const sps_file_t **out,
                                char *err, size_t errlen);

/* Frees a handle of sps_file_open / sps_file_open_index and everything in
 * it (NULL is fine). */
SPS_API void sps_file_close(const sps_file_t *f);

/* One call path's calls on one rank of a file, pooled as scope-profiler's
 * region table pools them (see sps_file_paths).  Times in ns. */
typedef struct sps_file_path_rank {
    uint32_t path;           /* index into sps_file_paths_t's paths */
    uint32_t rank;
    uint64_t first_pos;      /* its first call's place in the rank's start order */
    uint64_t calls;
    int64_t total_ns;        /* durations of the calls not nested in one of
                                the same path (all of them without recursion) */
    int64_t duration_sum_ns; /* every call's duration */
    int64_t self_ns;         /* the fold's self times over every region */
    int64_t min_ns, max_ns;
    int64_t first_start_ns, first_ns; /* the first call in start order */
    int64_t last_end_ns, last_ns;     /* the first call with the latest end */
    int64_t coverage_ns;     /* union of the calls' intervals (touching merge) */
    int recursive;           /* a call of it ran directly in another of it */
} sps_file_path_rank_t;

/* sps_file_paths' result: the paths (parent path or -1, and the name, an
 * index into the file's names; parents first), the entries per (path,
 * rank) with calls, rank by rank, and the ranks whose calls do not nest
 * (a partial overlap or an end before a start on a lane: no call tree). */
typedef struct sps_file_paths {
    size_t npaths;
    int32_t *parent;
    uint32_t *name;
    size_t nentries;
    sps_file_path_rank_t *entries;
    size_t nbad;
    uint32_t *bad_ranks;
} sps_file_paths_t;

/* Pools the calls of a file opened by sps_file_open by call path, per
 * rank, with scope-profiler's region-table rule (what Python's
 * print_summary shows): per rank, the calls of the regions keep selects
 * (keep[g] for names[g], NULL: all) sorted by start (longer first, then
 * region by region in name order, each in file order), nested by the one
 * fold's interval rule per lane (the call's task when the file has task
 * ids and it ran in one, else its thread; one lane without thread ids);
 * a path is the names from a root with adjacent repeats collapsed; self
 * times from the same fold over every region of the rank.  *out is zeroed
 * first and owns its arrays (sps_file_paths_free).  Returns 0,
 * SPS_ENOMEM, or SPS_EINVAL (an aggregate file, no events, or two rows of
 * one region on one rank).  Any thread; the handle is not changed. */
SPS_API int sps_file_paths(const sps_file_t *f, const unsigned char *keep,
                           sps_file_paths_t *out);
/* Frees what sps_file_paths put in p and zeroes it (NULL is fine). */
SPS_API void sps_file_paths_free(sps_file_paths_t *p);

/* The one fold (the rule sps_file_open applies to a file's events) over n
 * spans held by the caller: span i runs from start_ns[i] to end_ns[i] (an
 * end before its start counts as the start) in the lane (rank[i],
 * thread[i]); spans nest by containment within a lane.  Writes each
 * span's parent (an index into these arrays, -1 for a root) to parent[i]
 * and its self time (its duration minus the part of each direct child
 * inside it, >= 0) to self_ns[i]; *overlaps (when not NULL) gets the
 * number of partial overlaps met (spans that cross without one holding
 * the other: not a call stack).  thread may be NULL (one thread per
 * rank); rank may be NULL (one rank).  All arrays are the caller's, n
 * elements each; n must be below INT32_MAX.  For spans that come from
 * elsewhere than a file: scope-profiler's JSON profiles, results built in
 * Python.  Returns 0, SPS_EINVAL (NULL arrays with n > 0, n too large, a
 * rank outside 0..UINT32_MAX) or SPS_ENOMEM.  Any thread; no session. */
SPS_API int sps_fold_spans(const int64_t *start_ns, const int64_t *end_ns,
                           const int64_t *rank, const int64_t *thread, size_t n,
                           int32_t *parent, int64_t *self_ns, uint64_t *overlaps);

/* ------------------------------------------------------------------------ */
/* Scoped regions (C with GCC/Clang cleanup attribute, and C++)              */
/* ------------------------------------------------------------------------ */

/* The scopes below are declarations, not statements, so that declarations
 * may follow them even under -Wdeclaration-after-statement; the names they
 * declare (sps_scope_<line>, sps_scope_id_<line>) contain no "__" and do
 * not start with "_", so they are not reserved in C or C++.  One scope per
 * source line.  Macros ending in "_" are the header's own. */
#define SPS_CAT2_(a, b) a##b
#define SPS_CAT_(a, b) SPS_CAT2_(a, b)

#if defined(__cplusplus)
namespace spanscope {
struct scope {
    sps_region_t r;
    explicit scope(sps_region_t id) : r(id) { sps_begin(r); }
    ~scope() { sps_end(r); }
    scope(const scope &) = delete;
    scope &operator=(const scope &) = delete;
};
} /* namespace spanscope */
#  define SPS_SCOPE_(name_expr, uniq)                                          \
    static const sps_region_t SPS_CAT_(sps_scope_id_, uniq) = sps_region(name_expr); \
    const spanscope::scope SPS_CAT_(sps_scope_, uniq)(SPS_CAT_(sps_scope_id_, uniq))
#elif defined(__GNUC__)
static inline __attribute__((no_instrument_function)) void sps__scope_end(const sps_region_t *r) {
    sps_end(*r);
}
/* Interns the name on first execution, cached in *slot (after that a scope
 * costs what sps_begin + sps_end cost), enters the region and returns its
 * id, which the cleanup variable keeps for sps__scope_end. */
static inline __attribute__((no_instrument_function)) sps_region_t sps__scope_begin(sps_region_t *slot,
                                            const char *name) {
    sps_region_t id = __atomic_load_n(slot, __ATOMIC_RELAXED);
    if (__builtin_expect(id == 0, 0)) {
        id = sps_region(name);
        __atomic_store_n(slot, id, __ATOMIC_RELAXED);
    }
    sps_begin(id);
    return id;
}
#  define SPS_SCOPE_(name_expr, uniq)                                          \
    static sps_region_t SPS_CAT_(sps_scope_id_, uniq);                         \
    __attribute__((cleanup(sps__scope_end), unused)) const sps_region_t         \
        SPS_CAT_(sps_scope_, uniq) =                                           \
            sps__scope_begin(&SPS_CAT_(sps_scope_id_, uniq), (name_expr))
#endif

#if defined(SPS_SCOPE_) && !defined(SPS_DISABLE)
/* A region from here to the end of the enclosing block.  A declaration:
 * code and declarations may follow it. */
#  define SPS_REGION(name) SPS_SCOPE_(name, __LINE__)
/* A region named after the enclosing function (__func__); put it first in
 * the function, before its declarations. */
#  define SPS_FUNCTION() SPS_SCOPE_(__func__, __LINE__)
#else
/* SPS_DISABLE (or a compiler without cleanup) compiles scopes out, into a
 * declaration of nothing (an empty enumeration constant), so that code
 * written for the scopes compiles unchanged. */
#  define SPS_REGION(name) enum { SPS_CAT_(sps_scope_off_, __LINE__) }
#  define SPS_FUNCTION() enum { SPS_CAT_(sps_scope_off_, __LINE__) }
#endif

/* ------------------------------------------------------------------------ */
/* Exports for other tools (src/api/export.c)                               */
/* ------------------------------------------------------------------------ */

/* What sps_export writes (scope-profiler 0.7.5's export options). */
typedef struct sps_export_opts {
    /* ranks to export; NULL or none: rank 0.  A process of a trace
     * without a rank is rank "its index among the processes".  speedscope
     * and chrome take several; prof and svg one (more: SPS_EINVAL). */
    const int64_t *ranks;
    size_t nranks;
    /* region filters: a region is exported when it matches one of
     * include (none: every region) and none of exclude.  POSIX extended
     * regular expressions matched at the start of the name (Python's
     * re.match for the syntax both share).  A region left out is skipped
     * before nesting is worked out, so its children count as children of
     * its parent. */
    const char *const *include;
    size_t ninclude;
    const char *const *exclude;
    size_t nexclude;
    /* prof, svg: one entry per call path ("a > b"; 1, the default) or
     * per region name (0) */
    int call_paths;
    int reserved0_; /* 0: explicit padding, as in sps_config_t */
    /* prof, svg: the synthetic root's name, caller of every top-level
     * call ("<run rank 0>"); NULL: none (svg: "all") */
    const char *root_name;
    /* speedscope, chrome: the document's name (NULL: the input's) */
    const char *doc_name;
    /* svg: width in px; smallest fraction of the root's time a frame
     * must take to be drawn; 1: a viewBox and no XML prolog (to inline) */
    unsigned width;
    int reserved1_; /* 0, as reserved0_ */
    double threshold;
    int scalable;
    /* svg: 1 draws the flame graph from the stack samples of an .h5
     * (docs/sampling.md; frame width by sample weight, each stack under
     * its innermost region when call_paths is 0) instead of the spans.
     * This int was the explicit padding reserved2_: the layout is
     * unchanged. */
    int from_samples;
} sps_export_opts_t;

/* Defaults: rank 0, every region, call paths, no root, width 1200,
 * threshold 0.001, scalable. */
#define SPS_EXPORT_OPTS_INIT                                                   \
    {NULL, 0, NULL, 0, NULL, 0, 1, 0, NULL, NULL, 1200, 0, 0.001, 1, 0}

/* Reads the recording at in_path (.h5 of spanscope or scope-profiler,
 * .json, .json.gz, .pftrace; validated) and writes at out_path, through a
 * temporary name renamed into place, the export named by format:
 *   "speedscope"  speedscope's JSON (one evented profile per thread of
 *                 each rank; https://www.speedscope.app), and from an .h5
 *                 with stack samples one sampled profile per sampled
 *                 thread of those ranks (stacks outermost first, weights
 *                 the samples' weights, unit "none")
 *   "prof"        cProfile's marshal'd stats (pstats.Stats, snakeviz)
 *   "svg"         a flame graph (one <rect> per frame; from the stack
 *                 samples with opts->from_samples)
 *   "folded"      the stack samples of an .h5 as folded stacks (see
 *                 sps_export_stacks; the selected ranks only; by region
 *                 when call_paths is 0)
 *   "chrome"      Chrome trace event JSON (Perfetto, chrome://tracing;
 *                 gzip when out_path ends in .gz): a process "rank R" per
 *                 rank, each call an X event whose args are
 *                 scope-profiler's: rank, call_index (within its region
 *                 and rank), duration_s, call_id (start order within the
 *                 rank, 0, 1, ...), parent_id (the enclosing call's id,
 *                 -1 for a root, kept when that call is filtered out),
 *                 and source_file / source_line when the .h5 has them;
 *                 the .h5's stack samples of those ranks as instant
 *                 events on their thread's row (ph "i", cat
 *                 "python_function", named after the innermost frame's
 *                 function, args.stack "file:line (function)" innermost
 *                 first, args.region, args.weight: as torch's traces
 *                 write them; a thread with samples and no spans gets a
 *                 row of its own)
 * Nesting and self times are the one fold's, as in every other view.
 * opts may be NULL (SPS_EXPORT_OPTS_INIT).  Returns 0, SPS_EINVAL (NULL
 * paths, unknown format or input extension, a rank the file does not
 * hold, a bad pattern, no region passing the filters, no calls in the
 * selection), SPS_EFORMAT, SPS_EIO, SPS_EPATH or SPS_ENOMEM; on failure a
 * one-line reason goes to err[0..errlen) when err is not NULL.  The input
 * is validated, but HDF5 itself may crash on some corrupt files (see
 * sps_merge).  May be called from any thread; no session needed. */
SPS_API int sps_export(const char *in_path, const char *out_path,
                       const char *format, const sps_export_opts_t *opts,
                       char *err, size_t errlen);

/* Writes the stack samples of the spanscope .h5 at h5_path (its /samples;
 * docs/sampling.md) as folded stacks at out_path (through a temporary
 * name renamed into place): one line per distinct stack, the frames
 * outermost first, separated by ';', then a space and its weight (the
 * timer periods its samples stand for, each 1/hz s of CPU):
 *     main (prog);solve (prog);burn (libm.so.6) 412
 * -- Brendan Gregg's format, as torch.profiler's export_stacks writes it,
 * read by flamegraph.pl, inferno and speedscope.  A frame reads
 * "function (file:line)" for a Python frame (and a native one whose file
 * has lines), else "function (module)"; in a name ';' becomes ':' and a
 * control character '?'.  by_region != 0 puts the name of the innermost
 * span open at the sample (its region; "[no region]" outside every span)
 * before each stack, so that a flame graph splits by region.  Every rank
 * of the file is written.  Returns 0, SPS_EINVAL (a NULL path; a file
 * without samples), SPS_EFORMAT, SPS_EIO, SPS_EPATH or SPS_ENOMEM, with
 * the reason in sps_last_error().  The same lines as sps_export's format
 * "folded".  Any thread; no session needed. */
SPS_API int sps_export_stacks(const char *h5_path, const char *out_path, int by_region);

/* Spans held by the caller (results built in memory: read from a JSON
 * profile, merged, filtered), for sps_spans_write_h5.  Span i is a call of
 * names[name[i]] on (rank[i], thread[i]) from start_ns[i] to end_ns[i]
 * (any clock, ns); rank and thread may be NULL (all 0).  Arrays are
 * borrowed for the call. */
typedef struct sps_span_set {
    size_t nnames;
    const char *const *names;
    size_t nspans;
    const uint32_t *name;
    const int64_t *rank, *thread;
    const int64_t *start_ns, *end_ns;
    /* Optional facts of the run (zero / NULL: none; the file then says
     * the first start and the last end): setup and finalize times in the
     * spans' clock, the label, and per name (NULL or nnames entries, each
     * may be NULL / -1) source file, line, source text and tags (a JSON
     * list of strings, as sps_region_set_tags takes). */
    int has_times;
    int64_t start_time_ns, finalize_time_ns;
    const char *label;
    const char *const *source_files, *const *source_texts, *const *tags;
    const int64_t *source_lines;
    /* More /metadata strings (nmeta pairs; keys the writer writes itself --
     * rank, label, start_time_ns, ... -- are left out), as a run's own
     * sps_metadata_set would have written them. */
    size_t nmeta;
    const char *const *meta_keys, *const *meta_values;
} sps_span_set_t;

/* Writes the spans as a schema-3 .h5 at path (through a temporary name
 * renamed into place), nesting, call and parent ids and self times from
 * the one fold, as `spanscope convert TRACE OUT.h5` does.  Returns 0,
 * SPS_EINVAL (a name index out of range, an end before its start, spans
 * of one thread that overlap without nesting), SPS_ENOMEM, SPS_EPATH or
 * SPS_EIO, with the reason in err[0..errlen) when err is not NULL.  No
 * session needed; any thread. */
SPS_API int sps_spans_write_h5(const char *path, const sps_span_set_t *spans,
                               char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif /* SPANSCOPE_H */
