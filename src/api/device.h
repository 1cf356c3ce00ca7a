/* device.h -- the api layer's side of the device collectors (src/api/
 * device.c; docs/device.md; issue 38 parts 3 and 4).
 *
 * The public functions (sps_device_available/start/stop) reach a collector
 * by its public bit (SPS_DEVICE_CUPTI, SPS_DEVICE_EVENTS) through an
 * operations table that the integration registers from a constructor with
 * sps__device_provide, so the api layer never names an integration
 * (src/ext/cupti_device.c registers SPS_DEVICE_CUPTI, src/ext/gpu_timing.c
 * SPS_DEVICE_EVENTS).
 *
 * What a collector hands over:
 * - CUPTI: rows of /device (sps__devrow_t) from its take, at every
 *   finalize while it is on and once more at its stop;
 * - gpu_timing: per-call device times (sps__device_pair_t) with
 *   sps__device_pairs_add, at any time from any thread (its take, if it
 *   has one, is where it flushes what it still holds).
 * finalize (src/api/finalize.c) attributes both to the spans of the
 * period it writes (sps__device_attribute) and writes /device, the
 * per-event /events/gpu_durations and summary_statistics' gpu_count /
 * gpu_total (sps__device_write).  A row or pair whose span is still open
 * at the checkpoint waits for the finalize that writes that span. */
#ifndef SPS_API_DEVICE_H
#define SPS_API_DEVICE_H

#include "formats/formats.h"

#include <stddef.h>
#include <stdint.h>

/* One activity, as /device stores it before the attribution.  Times are
 * CLOCK_MONOTONIC ns (the collector mapped its clock already). */
typedef struct sps__devrow {
    int64_t start_ns, end_ns;
    int64_t launch_ns;   /* the launching runtime/driver call's start (ns);
                            -1 unknown.  API rows: their own start */
    int64_t tid;         /* the launching thread's OS tid, -1 unknown */
    uint64_t ext;        /* the external correlation id: the region id
                            (sps_region_t) open at the launch, 0 none */
    int64_t bytes;       /* copies, sets; 0 */
    int64_t device, context, stream; /* -1 for API rows */
    int64_t correlation; /* CUPTI's correlation id */
    int32_t kind;        /* 1 kernel, 2 memcpy, 3 memset, 4 runtime, 5 driver */
    int32_t name;        /* index into the batch's names */
    int32_t grid[3], block[3];
    int32_t copy_kind, src_kind, dst_kind;
    int32_t cbid;        /* API rows: CUPTI's callback id (CUpti_CallbackId); 0 */
} sps__devrow_t;

/* What a collector's take hands over (every pointer malloc'd by it, owned
 * by the api layer after the take). */
typedef struct sps__devbatch {
    sps__devrow_t *rows;
    size_t n;
    char **names;        /* every name known so far, index = devrow.name (a
                            later take's names extend an earlier one's) */
    size_t nnames;
    const char *clock;   /* "identity" or "fitted" (a static string) */
    uint64_t dropped;    /* records the collector lost since its last take */
    int64_t version;     /* the collector library's version, 0 unknown */
} sps__devbatch_t;

/* An integration's operations (the table must live as long as the
 * process).  All called under device.c's lock, never under the session's. */
typedef struct sps__device_ops {
    const char *name;            /* /device's collector attribute:
                                    "cupti", "cuda_events" */
    int (*available)(void);      /* 0, or SPS_ENOTSUP with the reason set */
    int (*start)(void);          /* 0, SPS_ENOTSUP, SPS_EACTIVE (reason set) */
    int (*stop)(void);           /* flushes and stops; 0 or an SPS_E code */
    /* Moves what was collected since the last take into *b (zeroed by the
     * caller; leave it empty when there is nothing).  Called at every
     * finalize while on, and right after stop.  NULL: nothing to take. */
    int (*take)(sps__devbatch_t *b);
} sps__device_ops_t;

/* Registers ops for the public bit (one SPS_DEVICE_* bit), from the
 * integration's constructor.  A later call for the same bit replaces it. */
SPS__HIDDEN void sps__device_provide(unsigned bit, const sps__device_ops_t *ops);

/* ---- SPANSCOPE_DEVICE (the C auto-setup, src/api/setup.c) ------------------ */

/* Parses SPANSCOPE_DEVICE's value: "cupti", "events", "cupti,events"
 * (either order, spaces around the names allowed), "" or "none" for none,
 * into SPS_DEVICE_* bits.  0, or SPS_EINVAL with the reason set naming
 * the bad word. */
SPS__HIDDEN int sps__device_env_parse(const char *value, unsigned *bits);
/* The auto-setup's start of the collectors value names, after its
 * sps_setup: a value that does not parse is SPS_EINVAL (the reason set);
 * a collector that cannot start here (no GPU, another CUPTI subscriber) is
 * a one-line warning on stderr, "spanscope: SPANSCOPE_DEVICE=cupti: ...",
 * and the session records without it (returns 0). */
SPS__HIDDEN int sps__device_env_start(const char *value);

/* ---- the per-call hook (gpu_timing; docs/device.md, device-hooks) ------ */

/* One region call's device time, as a CUDA event pair measured it. */
typedef struct sps__device_pair {
    int64_t tid;       /* OS tid (gettid) of the thread that ran the call */
    uint32_t region;   /* its region id (the sps_region_t begin/end got) */
    uint32_t pad_;
    int64_t t0_ns;     /* CLOCK_MONOTONIC ns read just before the begin */
    int64_t t1_ns;     /* CLOCK_MONOTONIC ns read just after the end */
    int64_t device_ns; /* the pair's elapsed device time, ns (>= 0) */
} sps__device_pair_t;

/* Hands n pairs to the next finalize: each lands on the outermost span of
 * its region on its thread lying inside [t0_ns, t1_ns], as that span's
 * /events/gpu_durations value (replacing what CUPTI summed for it), and
 * in its (rank, region)'s gpu_count / gpu_total.  A pair whose span is
 * not in the period being written waits one finalize when its t1_ns is
 * past that period's end, else it is dropped (counted in /device's
 * dropped).  Any thread, any time; copies the pairs.  0, SPS_EINVAL
 * (p NULL with n > 0) or SPS_ENOMEM. */
SPS__HIDDEN int sps__device_pairs_add(const sps__device_pair_t *p, size_t n);

/* ---- finalize (src/api/finalize.c) --------------------------------------- */

/* A finalize's device data: what the collectors handed over and the
 * attribution to the period's spans. */
typedef struct sps__devfin {
    int any;                 /* write /device (a collector ran) */
    int events;              /* write /events/gpu_durations */
    sps__devbatch_t b;       /* rows to write (b.rows[0, b.n)) */
    int64_t *regions, *call_ids, *threads; /* [b.n] the attribution */
    int64_t *gpu_dur;        /* [nevents] per event, -1 none */
    uint64_t nevents;
    const char *collector;
    sps__devrow_t *later;    /* rows for the next finalize */
    size_t nlater;
    sps__device_pair_t *pairs_later; /* pairs for the next finalize */
    size_t npairs_later;
    sps__device_pair_t *pairs_all;   /* every pair taken (back after a failure) */
    size_t npairs_all;
    uint64_t pairs_dropped;
    uint64_t dropped_taken;  /* the drop counts moved into this file */
} sps__devfin_t;

/* Takes what the collectors hold, attributes it to the calls of s (the
 * snapshot being written; nevents its events), and sets rows[i].s.gpu_count
 * / gpu_total (call before the index is written: before sps__h5w_close).
 * file_region maps a region id to its row in rows (UINT32_MAX: none);
 * first_call_id: the period's first call id in the file.  Does nothing
 * (d->any 0) when no collector ran since the last finalize.  0 or an SPS_E
 * code (then sps__device_done(d, 0) puts everything back). */
SPS__HIDDEN int sps__device_attribute(sps__snap_t *s, const uint32_t *file_region,
                                      sps__row_t *rows, size_t nrows, uint64_t nevents,
                                      int64_t first_call_id, sps__devfin_t *d);
/* Writes /device and /events/gpu_durations into the closed file tmp. */
SPS__HIDDEN int sps__device_write(const char *tmp, int rank, const sps__devfin_t *d);
/* After the write: written != 0 keeps the rows and pairs that wait for a
 * later period; written == 0 (a failed finalize) puts everything back, so
 * the next finalize writes it.  Frees d. */
SPS__HIDDEN void sps__device_done(sps__devfin_t *d, int written);

#endif /* SPS_API_DEVICE_H */
