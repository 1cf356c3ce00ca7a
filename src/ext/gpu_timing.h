/* gpu_timing.h -- CUDA-event timing per region call (src/ext/gpu_timing.c,
 * docs/device.md "gpu_timing"; issue 38 part 4; scope-profiler's
 * use_gpu_timing).
 *
 * While it runs, every region begin records a CUDA event on the calling
 * thread's stream (the legacy default stream, or the per-thread default
 * stream with SPS__GPU_PER_THREAD_STREAM) and the matching end records a
 * second one: the pair's elapsed device time is the time the GPU spent on
 * the work queued on that stream between the two.  libcudart is loaded at
 * run time (dlopen): the build needs no CUDA.  It is an emitter
 * (core/emit.h): it sees every begin and end on every thread.
 *
 * Events come from a pool (one per device) and go back to it once their
 * pair is resolved; pairs are resolved lazily (cudaEventQuery on the
 * oldest completed pairs every so often; cudaEventSynchronize at
 * sps__gpu_timing_take(sync=1), which the finalize calls), into per-call
 * results the finalize joins to its spans: (OS tid, region, host
 * CLOCK_MONOTONIC ns just before the begin's timestamp and just after the
 * end's, device ns).
 *
 * Threads: every function here may be called from any thread; the
 * emitter's begin/end run on the recording threads, concurrently. */
#ifndef SPS_EXT_GPU_TIMING_H
#define SPS_EXT_GPU_TIMING_H

#include "spanscope.h"
#include "util/util.h"

#include <stddef.h>
#include <stdint.h>

/* sps__gpu_timing_start's flags. */
#define SPS__GPU_SYNC_ON_EXIT 1u       /* wait for the end event at every region end
                                          (scope-profiler's gpu_sync_on_exit) */
#define SPS__GPU_PER_THREAD_STREAM 2u  /* record on cudaStreamPerThread, not stream 0 */

/* One resolved region call.  device_ns: cudaEventElapsedTime in ns, -1
 * when CUDA refused to time the pair (the error is counted). */
typedef struct sps__gpu_pair {
    uint64_t host_begin_ns; /* CLOCK_MONOTONIC, just before the begin's timestamp */
    uint64_t host_end_ns;   /* CLOCK_MONOTONIC, just after the end's timestamp */
    int64_t device_ns;
    int32_t tid;            /* the recording thread's OS tid */
    uint32_t region;        /* sps_region_t */
} sps__gpu_pair_t;

/* Counts, for tests and messages. */
typedef struct sps__gpu_stats {
    uint64_t created;   /* cudaEventCreateWithFlags calls that succeeded */
    uint64_t destroyed; /* cudaEventDestroy calls */
    uint64_t pooled;    /* events in the pools now */
    uint64_t open;      /* pairs begun and not ended, on every thread */
    uint64_t pending;   /* pairs ended and not resolved */
    uint64_t resolved;  /* pairs resolved (since the load) */
    uint64_t results;   /* resolved pairs not taken yet */
    uint64_t errors;    /* CUDA calls that failed while recording or resolving */
    uint64_t queries;   /* cudaEventQuery calls (lazy resolution) */
} sps__gpu_stats_t;

/* Loads libcudart (once; kept until sps__gpu_timing_unload): the file
 * $SPANSCOPE_CUDART_LIB names, else a libcudart already loaded in the
 * process (torch's, cupy's), else libcudart.so, .so.13, .so.12, .so.11.0
 * on the loader's path, then under $CUDA_HOME (else $CUDA_PATH),
 * /usr/local/cuda and /usr/local/cuda-* (newest first), in lib64, lib and
 * targets/x86_64-linux/lib.  0, or SPS_ENOTSUP with sps_last_error's one
 * line saying why. */
SPS__HIDDEN int sps__gpu_timing_load(void);
/* The path of the library loaded, or NULL. */
SPS__HIDDEN const char *sps__gpu_timing_lib_path(void);

/* Whether CUDA-event timing can run here: the library loads and
 * cudaGetDeviceCount finds a device.  0, or SPS_ENOTSUP with the reason
 * in sps_last_error ("gpu_timing: no CUDA device: cudaGetDeviceCount:
 * CUDA driver version is insufficient for CUDA runtime version (35)"). */
SPS__HIDDEN int sps__gpu_timing_available(void);

/* Starts recording an event pair per region call (flags: SPS__GPU_*):
 * 0, SPS_ENOTSUP (as sps__gpu_timing_available), SPS_EINVAL (an unknown
 * flag), SPS_EACTIVE (already running with other flags).  Starting again
 * with the same flags is 0. */
SPS__HIDDEN int sps__gpu_timing_start(unsigned flags);
/* Stops: begins and ends after it record nothing; pairs still open are
 * dropped at their thread's next begin, or at exit (their events go back
 * to the pool).  What was recorded stays for sps__gpu_timing_take.  0
 * (also when not running). */
SPS__HIDDEN int sps__gpu_timing_stop(void);
/* Whether it is running. */
SPS__HIDDEN int sps__gpu_timing_running(void);

/* Resolves the pairs ended so far (sync: waits for each with
 * cudaEventSynchronize; else only those cudaEventQuery finds complete)
 * and hands over every resolved pair not taken yet: *out (malloc'd,
 * the caller frees it; NULL when *n is 0), in the order they were
 * resolved.  0 or SPS_ENOMEM (nothing taken). */
SPS__HIDDEN int sps__gpu_timing_take(int sync, sps__gpu_pair_t **out, size_t *n);

/* The counts now. */
SPS__HIDDEN void sps__gpu_timing_stats(sps__gpu_stats_t *s);

/* Stops, resolves and drops every pair (sync), destroys every pooled
 * event, and closes the library (tests; a later load starts afresh).
 * 0, or SPS_EACTIVE while a thread has pairs open (nothing done). */
SPS__HIDDEN int sps__gpu_timing_unload(void);

#endif /* SPS_EXT_GPU_TIMING_H */
