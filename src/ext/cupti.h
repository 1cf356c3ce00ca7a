/* cupti.h -- the CUDA activity collector's foundation (src/ext/cupti.c,
 * docs/device.md; issue 38 part 3): libcupti loaded at run time, activity
 * buffers recycled through a pool, records parsed into a compact array of
 * device activities, external correlation ids joined to the spans that
 * launched them, CUPTI's clock mapped onto CLOCK_MONOTONIC.
 *
 * Wired into a recording by src/ext/cupti_device.c (the SPS_DEVICE_CUPTI
 * collector of src/api/device.c: start/stop, the push/pop emitter, the
 * activities handed to finalize).  The build needs no CUDA:
 * with CUPTI's headers (CMake defines SPS_HAVE_CUPTI_HEADERS) the parser
 * reads CUPTI's own record structs; without them every function that
 * needs them answers SPS_ENOTSUP, "built without CUPTI headers".
 *
 * Threads: a collector is not locked by its readers; sps__cupti_buffer_*
 * and the parse take the collector's lock (CUPTI calls the completed
 * callback on its own thread), the readers (activities, join, clock) are
 * for after sps__cupti_stop or for a single-threaded caller (the tests). */
#ifndef SPS_EXT_CUPTI_H
#define SPS_EXT_CUPTI_H

#include "util/util.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* The kinds of device activity the collector keeps. */
typedef enum {
    SPS__DEV_KERNEL = 1,  /* CUPTI_ACTIVITY_KIND_(CONCURRENT_)KERNEL */
    SPS__DEV_MEMCPY = 2,  /* CUPTI_ACTIVITY_KIND_MEMCPY */
    SPS__DEV_MEMSET = 3,  /* CUPTI_ACTIVITY_KIND_MEMSET */
    SPS__DEV_RUNTIME = 4, /* CUPTI_ACTIVITY_KIND_RUNTIME (host side) */
    SPS__DEV_DRIVER = 5   /* CUPTI_ACTIVITY_KIND_DRIVER (host side) */
} sps__dev_kind_t;

/* One device activity, as parsed.  Times are CUPTI's nanoseconds as the
 * record gave them (map them with sps__cupti_clock_map).  name indexes
 * the collector's string table (sps__cupti_name): a kernel's (mangled)
 * name, "Memcpy HtoD (Pinned -> Device)" / "Memset (Device)" as kineto
 * names copies and sets, an API's function ("cudaLaunchKernel").
 * span is the external id joined to the correlation id (0: none; set by
 * sps__cupti_join).  For API records device/context/stream are ~0u and
 * tid is the calling thread CUPTI saw; cbid is the API's callback id. */
typedef struct sps__dev_act {
    uint64_t start, end; /* CUPTI ns */
    uint64_t bytes;      /* memcpy / memset; 0 otherwise */
    uint64_t span;       /* the launching span's id (external id), 0 none */
    uint32_t kind;       /* sps__dev_kind_t */
    uint32_t name;       /* index into the collector's names */
    uint32_t device, context, stream;
    uint32_t correlation; /* CUPTI's correlation id */
    uint32_t grid[3], block[3]; /* kernels; 0 otherwise */
    uint32_t cbid, tid;         /* API records; 0 otherwise */
    uint8_t copy_kind;          /* CUpti_ActivityMemcpyKind for copies */
    uint8_t src_kind, dst_kind; /* CUpti_ActivityMemoryKind (copy / set: dst) */
    uint8_t pad_;
} sps__dev_act_t;

/* Per span: the device time of the kernels, copies and sets joined to it
 * (sum of end - start, CUPTI ns) and how many there were. */
typedef struct sps__dev_span {
    uint64_t span;
    uint64_t device_ns;
    uint32_t count;
    uint32_t pad_;
} sps__dev_span_t;

/* A map from CUPTI's timestamps to CLOCK_MONOTONIC ns: host = y0 +
 * offset + slope * (t - x0).  identity: CUPTI's clock is the host's (the
 * timestamp callback was registered). */
typedef struct sps__clockmap {
    int identity;
    uint64_t x0, y0;
    double slope, offset;
} sps__clockmap_t;

/* A record walker, cuptiActivityGetNextRecord's contract: *rec NULL on
 * entry gives the first record, else the one after *rec.  Returns 0 (a
 * record in *rec), 1 at the end of the valid bytes, or a negative value
 * (the rest cannot be read: an unknown kind or a truncated record). */
typedef int (*sps__cupti_next_fn)(void *ctx, uint8_t *buf, size_t valid,
                                  const void **rec);

/* The buffer pool: buffers of one size, reused; `allocated` counts the
 * buffers ever made (it stays small in steady state). */
typedef struct sps__cupti_pool {
    size_t buf_size;
    uint8_t **free_list;
    size_t n_free, cap_free;
    size_t allocated; /* buffers made */
    size_t handed;    /* buffers handed out and not back */
} sps__cupti_pool_t;

/* A collector: its activities, names, correlation map and join. */
typedef struct sps__cupti {
    pthread_mutex_t lock;
    uint32_t api_version; /* the CUPTI API version whose layouts the walker uses */
    uint32_t ext_kind;    /* the external correlation kind joined (CUSTOM0) */
    sps__cupti_pool_t pool;
    sps__dev_act_t *acts;
    size_t n_acts, cap_acts;
    /* names: a NUL-separated arena, offsets per index, a hash for interning */
    char *arena;
    size_t arena_n, arena_cap;
    uint32_t *name_off;
    size_t n_names, cap_names;
    uint32_t *name_hash; /* open addressing: index + 1, 0 empty */
    size_t hash_cap;
    /* correlation id -> external id */
    uint32_t *corr_key;
    uint64_t *corr_val;
    size_t corr_n, corr_cap;
    /* the join (sps__cupti_join) */
    sps__dev_span_t *spans;
    size_t n_spans;
    /* counts */
    uint64_t records;   /* records read */
    uint64_t skipped;   /* records of kinds not kept */
    uint64_t truncated; /* buffers whose rest could not be read */
    uint64_t dropped;   /* records CUPTI dropped (its count) */
    uint64_t ext_other; /* external correlation records of another kind */
    int oom;            /* an allocation failed: some records were lost */
    sps__clockmap_t clock;
    uint32_t *cbid_name[2]; /* API name index + 1 per cbid: driver, runtime */
} sps__cupti_t;

/* ---- the collector (no library needed) ---------------------------------- */

/* Initialises c for records in the layouts of CUPTI API version
 * api_version (cuptiGetVersion's value: 13 .. 28 for CUDA 11.0 .. 12.9,
 * 130000 on for 13.x), buffers of buf_size bytes (0: 4 MiB; rounded up
 * to 8).  Returns 0 or SPS_ENOMEM. */
SPS__HIDDEN int sps__cupti_init(sps__cupti_t *c, uint32_t api_version, size_t buf_size);
/* Frees everything c holds (pool included); c may be initialised again. */
SPS__HIDDEN void sps__cupti_free(sps__cupti_t *c);

/* The requested-buffer callback's work: a buffer from the pool (a new one
 * only when none is free), 8-byte aligned, *size its bytes.  0, or
 * SPS_ENOMEM (*buf NULL: CUPTI then drops records and counts them). */
SPS__HIDDEN int sps__cupti_buffer_request(sps__cupti_t *c, uint8_t **buf, size_t *size);
/* The completed-buffer callback's work: parses buf[0..valid) with next
 * (NULL: the built-in walker, sps__cupti_walk) and gives buf back to the
 * pool.  Returns the number of activities kept, or SPS_ENOTSUP without
 * CUPTI headers. */
SPS__HIDDEN int sps__cupti_buffer_complete(sps__cupti_t *c, uint8_t *buf, size_t valid,
                                           sps__cupti_next_fn next, void *next_ctx);
/* Parses the records of buf[0..valid) into c (under c's lock), without
 * touching the pool: kernels, copies, sets, runtime/driver API records,
 * external correlation records (their correlation -> external id kept for
 * the join); other kinds counted in c->skipped; a walker error counted in
 * c->truncated (the records before it kept).  Returns the number of
 * activities kept, SPS_ENOMEM (c->oom set) or SPS_ENOTSUP. */
SPS__HIDDEN int sps__cupti_parse(sps__cupti_t *c, uint8_t *buf, size_t valid,
                                 sps__cupti_next_fn next, void *next_ctx);
/* The built-in walker (ctx: the sps__cupti_t whose api_version gives the
 * layouts): records lie one after another, each of its kind's struct size
 * for that version, 8-byte aligned, as CUPTI lays them out.  Used where
 * libcupti's cuptiActivityGetNextRecord is not (tests). */
SPS__HIDDEN int sps__cupti_walk(void *ctx, uint8_t *buf, size_t valid, const void **rec);
/* The size of a record of CUPTI activity kind `kind` in the layouts of
 * api_version, or 0 for a kind the walker does not know. */
SPS__HIDDEN size_t sps__cupti_record_size(uint32_t api_version, uint32_t kind);

/* The activities parsed so far (c->n_acts of them, in arrival order). */
SPS__HIDDEN const sps__dev_act_t *sps__cupti_acts(const sps__cupti_t *c, size_t *n);
/* The string of name index i ("" out of range). */
SPS__HIDDEN const char *sps__cupti_name(const sps__cupti_t *c, uint32_t i);
/* Interns s (once per distinct string): its index in *idx.  0 or SPS_ENOMEM. */
SPS__HIDDEN int sps__cupti_intern(sps__cupti_t *c, const char *s, uint32_t *idx);

/* The join: sets every activity's span from the correlation -> external
 * id records, then sums per span the device time of its kernels, copies
 * and sets.  Call after the last buffer (again after more: it redoes
 * everything).  0 or SPS_ENOMEM. */
SPS__HIDDEN int sps__cupti_join(sps__cupti_t *c);
/* The join's per-span rows, sorted by span id (n of them). */
SPS__HIDDEN const sps__dev_span_t *sps__cupti_spans(const sps__cupti_t *c, size_t *n);
/* Device ns joined to span (0 when none); *count the activities when not NULL. */
SPS__HIDDEN uint64_t sps__cupti_span_device_ns(const sps__cupti_t *c, uint64_t span,
                                               uint32_t *count);
/* Records that correlation id corr belongs to external id ext (what an
 * external correlation record says; a later record for the same corr
 * replaces it; corr 0 is ignored).  Takes no lock: the parser calls it
 * under c's.  0 or SPS_ENOMEM. */
SPS__HIDDEN int sps__cupti_corr_put(sps__cupti_t *c, uint32_t corr, uint64_t ext);
/* Forgets the correlations below `below` (CUPTI's ids grow: a recording
 * drops those of activities handed over two finalizes ago).  Takes no
 * lock. */
SPS__HIDDEN void sps__cupti_corr_prune(sps__cupti_t *c, uint32_t below);
/* The external id CUPTI joined to correlation id corr, 0 when none. */
SPS__HIDDEN uint64_t sps__cupti_corr_span(const sps__cupti_t *c, uint32_t corr);

/* ---- the clock ------------------------------------------------------------ */

/* Fits host = a + b * cupti by least squares over n >= 1 pairs (n == 1:
 * slope 1).  SPS_EINVAL for n == 0 or all cupti values equal with n > 1. */
SPS__HIDDEN int sps__clockmap_fit(sps__clockmap_t *m, const uint64_t *cupti,
                                  const uint64_t *host, size_t n);
/* The identity map (CUPTI's timestamps are already CLOCK_MONOTONIC ns). */
SPS__HIDDEN void sps__clockmap_identity(sps__clockmap_t *m);
/* Maps one CUPTI timestamp to CLOCK_MONOTONIC ns. */
SPS__HIDDEN uint64_t sps__clockmap_apply(const sps__clockmap_t *m, uint64_t t);
/* CLOCK_MONOTONIC now, ns (the function the timestamp callback returns). */
SPS__HIDDEN uint64_t sps__cupti_host_ns(void);

/* ---- the library (libcupti at run time) ---------------------------------- */

/* Loads libcupti once: $SPANSCOPE_CUPTI_LIB when set (that file only),
 * else libcupti.so, libcupti.so.13, .12, .11 from the loader's paths, then
 * $CUDA_HOME/lib64, /usr/local/cuda/lib64, /usr/local/cuda*\/lib*; and the
 * functions the collector calls.  0, or SPS_ENOTSUP with the reason in
 * sps__err_msg() (not found, a function missing, built without headers).
 * Thread-safe; a failure is not cached (the environment may change). */
SPS__HIDDEN int sps__cupti_load(void);
/* The path the library was loaded from ("" when not loaded). */
SPS__HIDDEN const char *sps__cupti_lib_path(void);
/* Forgets the loaded library (dlclose), so that the next load looks again
 * (tests; a long-lived process that wants it gone).  0, or SPS_EACTIVE
 * while a collector is started. */
SPS__HIDDEN int sps__cupti_unload(void);

/* Starts collecting into c (one collector at a time): checks for the
 * driver (libcuda.so.1, or $SPANSCOPE_CUDA_LIB) and another CUPTI subscriber, registers the
 * buffer callbacks and (CUDA >= 11.6) the timestamp callback, takes clock
 * pairs, enables kernels, copies, sets, runtime and driver API and
 * external correlation records.  0; SPS_ENOTSUP (no libcupti, no driver,
 * CUPTI refused: the reason in sps__err_msg()); SPS_EACTIVE (another
 * collector of this process is on, or another CUPTI subscriber such as
 * Nsight Systems: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED). */
SPS__HIDDEN int sps__cupti_start(sps__cupti_t *c);
/* Stops: flushes every buffer (so nothing is lost), disables the kinds,
 * reads the dropped count, fits the clock map (unless identity) and joins.
 * 0, or a negative code with the reason. */
SPS__HIDDEN int sps__cupti_stop(sps__cupti_t *c);
/* Whether a collector could start here (libcupti loads, the driver
 * opens, CUPTI is new enough): 0 or SPS_ENOTSUP with the reason.  Starts
 * nothing, subscribes to nothing. */
SPS__HIDDEN int sps__cupti_probe(void);
/* While c is started: flushes every buffer CUPTI holds into c (a forced
 * flush: nothing in flight stays behind) and, with a fitted clock, takes
 * another set of clock pairs and refits c->clock over the start's pairs
 * and these (a checkpoint's finalize).  0 or a negative code. */
SPS__HIDDEN int sps__cupti_sync(sps__cupti_t *c);
/* At a span's begin/end on a recording thread: pushes / pops span_id as
 * the external correlation id of this thread's CUDA calls.  No-ops unless
 * a collector is started. */
SPS__HIDDEN void sps__cupti_push(uint64_t span_id);
SPS__HIDDEN void sps__cupti_pop(void);

#endif /* SPS_EXT_CUPTI_H */
