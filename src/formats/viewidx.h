/*
 * viewidx.h -- the level-of-detail index of a recording for the local
 * viewer (`spanscope view`; docs/view.md, "How the index works").
 *
 * Built by streaming a timeline reader (formats/timeline.h) once, in
 * memory bounded by lanes, levels and call paths (never by spans), and
 * written to a file that the viewer reads with pread (its directories, sums and
 * names in memory, blocks read as queries need them).
 * A lane is (thread, depth): on one lane spans are disjoint and in start
 * order, so a window of a lane is a binary search over its block
 * directory.  Level 0 holds every span (start, duration, call path, self
 * time), in blocks of up to SPS__VIX_BLOCK spans with per-path sums (so a
 * window sums block records and decodes only its two edge blocks); level
 * k >= 1 merges runs of spans shorter than its bucket w_k = w_1 * 4^(k-1)
 * whose extent fits in w_k into one entry (count, extent, the longest
 * one's name).
 *
 * The index file is untrusted input: every offset, length, count and id
 * is checked before use; a corrupt or hostile file gives SPS_EFORMAT
 * (never a crash, a hang or an allocation out of proportion to its size).
 */
#ifndef SPS_FORMATS_VIEWIDX_H
#define SPS_FORMATS_VIEWIDX_H

#include "formats/timeline.h"

#include <stddef.h>
#include <stdint.h>

/* The format version written into every index; an index of another
 * version is stale (rebuilt). */
#define SPS__VIX_VERSION 5u
/* Most spans (entries) per block. */
#define SPS__VIX_BLOCK 4096u
/* Most levels per lane (level 0 included). */
#define SPS__VIX_MAXLEV 20u
/* Bucket of level 1 in ns (level k: w_1 * 4^(k-1)). */
#define SPS__VIX_W1 1024u

/* What an index remembers of its source, to tell a stale index. */
typedef struct sps__vix_src {
    uint64_t size;     /* st_size */
    int64_t mtime_ns;  /* st_mtim in ns */
} sps__vix_src_t;

/* Stats the file at path into *s.  0, or SPS_EIO with the message set. */
SPS__HIDDEN int sps__vix_src_stat(const char *path, sps__vix_src_t *s);

/* Builds the index of the recording src (format fmt) into ixpath (written
 * under a temporary name, renamed into place).  progress: a progress line
 * on stderr (formats.h, sps__pline).  Returns 0 or an SPS_E* code with
 * the message set (a hostile source: SPS_EFORMAT from its reader). */
SPS__HIDDEN int sps__vix_build(const char *src, sps__tl_format_t fmt,
                               const char *ixpath, int progress);

typedef struct sps__vix_proc {
    int64_t pid, rank;
    char *name;
} sps__vix_proc_t;

typedef struct sps__vix_thread {
    int64_t pid, tid;
    uint32_t proc;    /* index into procs */
    uint32_t depths;  /* max depth + 1 (0: no spans) */
    char *name;
} sps__vix_thread_t;

/* A call path: the path of its parent (UINT32_MAX: a root) and its
 * region's name.  A parent's id is always below its child's. */
typedef struct sps__vix_path {
    uint32_t parent, name;
} sps__vix_path_t;

/* One counter series: the samples of one (name, process), in time
 * order, and its levels of detail (clevels[lev .. lev + nlev), finest
 * first). */
typedef struct sps__vix_series {
    uint32_t name, proc;
    uint64_t n;    /* samples */
    uint64_t off;  /* file offset of n (int64 t_ns, double value) pairs */
    uint32_t nlev, lev;
} sps__vix_series_t;

/* One level of detail of a counter series: per non-empty bucket of
 * sps__vix_bucket(k) ns (aligned to multiples of it), one 40-byte record
 * (the first sample's time, min, max, last value, the index of its first
 * record in the next finer level, or of its first sample for the finest
 * level).  A level is kept only when it has at most a quarter of the
 * records of the next finer one (samples for the finest), so the levels
 * of a series hold at most a third as many records as it has samples. */
typedef struct sps__vix_clevel {
    uint32_t k;    /* bucket sps__vix_bucket(k), 1 <= k < SPS__VIX_MAXLEV */
    uint64_t n;    /* records */
    uint64_t off;  /* file offset of n records */
} sps__vix_clevel_t;

/* What an open index knows of its recording (valid until close). */
typedef struct sps__vix_info {
    uint32_t fmt;          /* sps__tl_format_t of the source */
    uint64_t nspans;
    uint64_t file_bytes;   /* size of the index file */
    double build_s;        /* seconds the build took */
    int64_t t_min, t_max;  /* first start, last end (absolute ns; 0, 0 when empty) */
    uint32_t nlevels;      /* most levels of any lane */
    size_t nnames;
    char **names;
    size_t nprocs;
    sps__vix_proc_t *procs;
    size_t nthreads;
    sps__vix_thread_t *threads;
    size_t npaths;
    sps__vix_path_t *paths;
    size_t nseries;
    sps__vix_series_t *series;
    size_t nclevels;
    sps__vix_clevel_t *clevels; /* every series' levels (series[i].lev) */
    size_t nlanes;
    /* device activity (an .h5's /device): threads dev_thread0.. are its
     * streams ("stream S", under processes "GPU N"), nthreads when none;
     * ndev activities on their lanes (not counted in nspans), nrev of them
     * with a launching span */
    uint32_t dev_thread0;
    uint64_t ndev, nrev;
    uint64_t dev_off, rev_off; /* file offsets of the records, reverse records */
} sps__vix_info_t;

typedef struct sps__vix sps__vix_t;

/* Opens the index at ixpath and checks it: when src is not NULL,
 * an index of another source size or mtime, or of another version, is
 * stale: SPS_EFORMAT with the message saying so.  A corrupt index:
 * SPS_EFORMAT.  Returns 0 with *out set, or an SPS_E* code. */
SPS__HIDDEN int sps__vix_open(sps__vix_t **out, const char *ixpath,
                              const sps__vix_src_t *src);
SPS__HIDDEN const sps__vix_info_t *sps__vix_info(const sps__vix_t *x);
/* Frees x (NULL is fine). */
SPS__HIDDEN void sps__vix_close(sps__vix_t *x);

/* The lane of (thread, depth), or -1 when it has no spans. */
SPS__HIDDEN int64_t sps__vix_lane_find(const sps__vix_t *x, uint32_t thread,
                                       uint32_t depth);
/* Lane i's thread, depth and number of levels (lanes are in (thread,
 * depth) order). */
SPS__HIDDEN void sps__vix_lane(const sps__vix_t *x, size_t i, uint32_t *thread,
                               uint32_t *depth, uint32_t *nlevels);
/* The bucket of level k in ns (0 for level 0). */
SPS__HIDDEN uint64_t sps__vix_bucket(uint32_t k);

/* One entry of a lane's level: a span (level 0, count 1) or a merged
 * block (count spans; start/dur its extent, name the longest one's). */
typedef struct sps__vix_ent {
    int64_t start, dur;  /* absolute ns */
    uint32_t name;       /* index into names */
    uint32_t path;       /* level 0: call path; else UINT32_MAX */
    uint64_t count;
    int64_t self;        /* level 0: self time; else 0 */
    int64_t longest;     /* duration of the longest span in it */
} sps__vix_ent_t;

/* Called per entry; non-zero stops the scan (returned by it). */
typedef int (*sps__vix_ent_fn)(void *ctx, const sps__vix_ent_t *e);

/* Calls fn for every entry of lane's level (clamped to the lane's top
 * level) that overlaps [t0, t1) (a zero-length entry at t0 counts), in
 * start order.  path_on (level 0 only, may be NULL): only entries whose
 * path is on, and blocks whose sums name no such path are skipped
 * undecoded.  Returns 0, fn's non-zero value, or SPS_EFORMAT (corrupt
 * index; message set). */
SPS__HIDDEN int sps__vix_scan(sps__vix_t *x, size_t lane, uint32_t level,
                              int64_t t0, int64_t t1, const uint8_t *path_on,
                              sps__vix_ent_fn fn, void *ctx);

/* Per-path sums of a window. */
typedef struct sps__vix_sum {
    uint64_t count;
    int64_t total, self, min, max;
} sps__vix_sum_t;

/* Adds to sums[path] (npaths entries, zeroed by the caller; min valid
 * where count > 0) the spans of lane that start in [t0, t1): whole blocks
 * from their sums, the edge blocks decoded.  0 or SPS_EFORMAT. */
SPS__HIDDEN int sps__vix_window(sps__vix_t *x, size_t lane, int64_t t0,
                                int64_t t1, sps__vix_sum_t *sums);

/* Sample i of series s: *t (absolute ns) and *v.  0, SPS_EINVAL (s or i
 * out of range), or SPS_EFORMAT / SPS_EIO (unreadable; *t, *v 0). */
SPS__HIDDEN int sps__vix_sample(sps__vix_t *x, size_t s, uint64_t i, int64_t *t,
                                double *v);
/* The first sample of series s at or after t (n when none or unreadable). */
SPS__HIDDEN uint64_t sps__vix_sample_lb(sps__vix_t *x, size_t s, int64_t t);

/* One pixel column of a counter series: the time of its first sample, the
 * least and greatest value (the earliest of equals) and the last one. */
typedef struct sps__vix_cpoint {
    int64_t t;
    double min, max, last;
} sps__vix_cpoint_t;

/* Called per non-empty column, in time order; non-zero stops (returned). */
typedef int (*sps__vix_cpoint_fn)(void *ctx, const sps__vix_cpoint_t *p);

/* The samples of series s in [t0, t1) (t0 < t1) binned into px >= 1
 * columns: the column of a sample at t is
 * (long)((double)(t - t0) * px / ((double)t1 - (double)t0)), at most px - 1.
 * With levels (use_levels 1) it answers from the coarsest level whose
 * bucket is <= (t1 - t0) / px, descending to finer levels and to the
 * samples only for buckets that straddle a column's edge or the range's,
 * so it reads O(px) records per series (and the window's samples
 * themselves when they are fewer than that walk's estimate, 4 records a
 * level at each column's edge); the columns are exactly those of the walk
 * over every sample (use_levels 0).  *reads (may be NULL) gets
 * how many records and samples it read.  Returns 0, fn's non-zero value,
 * SPS_EINVAL (s out of range), or SPS_EFORMAT / SPS_EIO (corrupt or
 * unreadable index; message set). */
SPS__HIDDEN int sps__vix_counter_cols(sps__vix_t *x, size_t s, int64_t t0, int64_t t1,
                                      uint32_t px, int use_levels, sps__vix_cpoint_fn fn,
                                      void *ctx, uint64_t *reads);

/* ------------------------------------------------------------------------ */
/* Device activity (issue 38: device tracks in every timeline)              */
/* ------------------------------------------------------------------------ */

/* An .h5 with /device gets, besides its threads, one process per GPU
 * ("GPU N", as device_tl.c names it) and one thread per stream ("stream
 * S"; a stream whose activities overlap in time gets more depths, each
 * activity on the first depth free at its start) whose level 0 holds the
 * kernels, copies and sets (path: the activity's name as a root; levels of
 * detail as any lane's).  The runtime and driver API rows are not drawn:
 * they are the device activity's "api" below.  Per activity one 144-byte
 * record, in (thread, depth, start) order, and per activity with a
 * launching span one 24-byte reverse record, in (launching thread, depth,
 * start) order.  The launching span is device_tl.c's
 * (sps__tl_device_place and sps__tl_device_claim while the spans stream
 * by: the innermost span of the activity's region on the launching thread
 * that holds the launch). */
typedef struct sps__vix_dev {
    uint32_t thread, depth;  /* its lane (thread >= info.dev_thread0) */
    int64_t start, end;      /* absolute ns */
    uint32_t kind;           /* SPS_DEVICE_KERNEL 1, _MEMCPY 2, _MEMSET 3 */
    uint32_t name;           /* index into names */
    int64_t device, stream, correlation, bytes;
    uint32_t grid[3], block[3];
    /* the launching span: lthread UINT32_MAX when none */
    uint32_t lthread, ldepth, lname;
    int64_t lstart, lend;
    /* the runtime/driver API call (same correlation): api_name UINT32_MAX
     * when none; api_thread UINT32_MAX when its thread has no lane */
    uint32_t api_name, api_thread;
    int64_t api_start, api_end;
} sps__vix_dev_t;

/* The activity on lane (thread, depth) that starts at start (absolute
 * ns): 0 with *out set, 1 when there is none, or SPS_EFORMAT / SPS_EIO
 * (corrupt index; message set). */
SPS__HIDDEN int sps__vix_dev_at(sps__vix_t *x, uint32_t thread, uint32_t depth, int64_t start,
                                sps__vix_dev_t *out);

/* The activities launched by the span on lane (thread, depth) starting
 * at start (absolute ns): the first max of them (in their start order
 * within each device lane) into out, their number into *total.  Returns
 * how many went into out, or SPS_EFORMAT / SPS_EIO (negative). */
SPS__HIDDEN long sps__vix_dev_launched(sps__vix_t *x, uint32_t thread, uint32_t depth,
                                       int64_t start, sps__vix_dev_t *out, size_t max,
                                       uint64_t *total);

#endif /* SPS_FORMATS_VIEWIDX_H */
