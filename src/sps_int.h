/*
 * sps_int.h -- spanscope's internal interfaces, shared between layers.
 *
 * Nothing here is public.  Every non-static symbol is prefixed sps__ and
 * marked SPS__HIDDEN (like Lua's LUAI_FUNC) so it does not leak from the .so.
 *
 * Layers (a layer uses only those above it in this file, and util):
 *   util     heap, hash, temp files, JSON, UTF-8, error message src/util/
 *   core     clock, registry, per-thread buffers, session       src/core/
 *   model    streams of records -> calls, nesting, statistics   src/model/
 *   formats  HDF5 writer/reader, tables                         src/formats/
 */
#ifndef SPS_INT_H
#define SPS_INT_H

#include "spanscope.h"
#include "util/util.h" /* the base layer: SPS__HIDDEN, heap, hash, ... */

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* ======================================================================== */
/* core: clock (src/core/clock.c)                                            */
/* ======================================================================== */

/* Raw timestamps ("ticks") come from rdtsc where the TSC is invariant, else
 * from CLOCK_MONOTONIC (then ticks are ns).  They are converted to
 * CLOCK_MONOTONIC ns only when read back, through anchors: pairs (ticks, ns)
 * taken at setup, now and then while recording, and at every query. */
typedef struct sps__anchor {
    uint64_t ticks;
    int64_t ns;
} sps__anchor_t;

SPS__HIDDEN extern int sps__use_tsc; /* read on the hot path */

static inline uint64_t sps__ticks(void);
SPS__HIDDEN uint64_t sps__mono_ns(void);

/* Once per process: picks the counter (env SPANSCOPE_CLOCK=tsc|monotonic
 * overrides) and measures its rate. */
SPS__HIDDEN void sps__clock_init(void);
/* A fresh anchor (best of a few reads). */
SPS__HIDDEN sps__anchor_t sps__anchor_now(void);

/* Piecewise-linear map ticks -> ns over a growing array of anchors. */
typedef struct sps__timemap {
    sps__anchor_t *a;
    double *k;      /* k[i]: ns per tick from anchor i to i+1 */
    size_t n, cap;
} sps__timemap_t;
SPS__HIDDEN int sps__timemap_add(sps__timemap_t *m, sps__anchor_t a);
SPS__HIDDEN int64_t sps__timemap_ns(const sps__timemap_t *m, uint64_t ticks);
SPS__HIDDEN int64_t sps__timemap_ns_hint(const sps__timemap_t *m,
                                         uint64_t ticks, size_t *hint);
/* ns per tick near the last anchor (1.0 with the monotonic clock). */
SPS__HIDDEN double sps__timemap_scale(const sps__timemap_t *m);
SPS__HIDDEN void sps__timemap_free(sps__timemap_t *m);

#if defined(__x86_64__) || defined(__i386__)
#  include <x86intrin.h>
static inline uint64_t sps__ticks(void) {
    if (SPS__LIKELY(sps__use_tsc)) return __rdtsc();
    return sps__mono_ns();
}
#else
static inline uint64_t sps__ticks(void) { return sps__mono_ns(); }
#endif

/* ======================================================================== */
/* core: records                                                             */
/* ======================================================================== */

/* One 8-byte record per sps_begin / sps_end:
 *   bits 63..33  region id (31 bits)
 *   bit  32      1 = end, 0 = begin
 *   bits 31..0   low 32 bits of the timestamp
 * A HI record (upper half all ones) carries the upper 32 bits of the
 * timestamp in its low half; every chunk starts with one and the hot path
 * writes one whenever the upper half changes. */
#define SPS__REC_HI_TAG 0xFFFFFFFFu
#define SPS__REGION_MAX 0x7FFFFFFEu

static inline uint64_t sps__rec_hi(uint32_t hi) {
    return ((uint64_t)SPS__REC_HI_TAG << 32) | hi;
}

/* ======================================================================== */
/* core: chunks and threads (src/core/buffer.c)                              */
/* ======================================================================== */

/* A chunk descriptor.  Its records live in memory (rec != NULL) or in the
 * spill file at file_off. */
typedef struct sps__chunk {
    struct sps__chunk *next; /* thread's retired list, or a free list */
    uint64_t *rec;           /* chunk memory, or NULL when spilled */
    int64_t file_off;        /* spill file offset, -1 when in memory */
    uint32_t n;              /* records written (set when retired) */
    uint32_t cap;            /* records the memory holds */
    uint32_t consumed;       /* records [0, consumed) already written out */
    uint64_t seq0;           /* per-thread sequence number of rec[0] */
} sps__chunk_t;

/* A frame: one open call on a lane's stack (the fold, model/fold.c).  Times
 * are in the stream's unit: ticks while the core analyzes live records, ns
 * once decoded. */
typedef struct sps__frame {
    uint32_t region;
    int32_t node;        /* call-tree node (model), -1 if none */
    uint64_t start;      /* ns (ticks on an aggregate-mode thread's stack) */
    uint64_t child;      /* time spent in direct children, same unit */
    uint64_t seq;        /* record sequence number of the begin (interval
                            streams: the caller's key of the span) */
    int64_t id;          /* merged pass: call id, -1 if not written */
    uint64_t ord;        /* merged pass: ordinal within its region */
    uint64_t end;        /* interval streams: the span's end; else 0 */
} sps__frame_t;

/* A stack of frames (core/frames.c: a plain container). */
typedef struct sps__stack {
    sps__frame_t *f;
    size_t n, cap;
} sps__stack_t;
/* Appends f; 0 or SPS_ENOMEM (s unchanged). */
SPS__HIDDEN int sps__stack_push(sps__stack_t *s, sps__frame_t f);
SPS__HIDDEN void sps__stack_free(sps__stack_t *s);
/* Makes dst a copy of src (dst's memory reused); 0 or SPS_ENOMEM. */
SPS__HIDDEN int sps__stack_copy(sps__stack_t *dst, const sps__stack_t *src);

/* Running statistics in ns (the per-thread ones of aggregate mode hold
 * ticks until sps__acc_to_ns).  Variance uses a shifted sum (shift = first
 * duration seen), merged across threads with Chan's formula. */
typedef struct sps__acc {
    uint64_t count;
    uint64_t total, self, min, max;
    uint64_t first_start, first_dur; /* call with the earliest start */
    uint64_t last_start, last_dur;   /* call with the latest start */
    uint64_t end_max;                /* latest end */
    uint64_t shift;
    double s1, s2; /* sums of (d - shift) and (d - shift)^2 */
} sps__acc_t;

/* Per-thread state.  pos/end/hi are the hot fields. */
typedef struct sps__thr {
    _Atomic(uint64_t *) pos; /* next free record in cur */
    uint64_t *end;           /* one past the last usable record */
    uint32_t hi;             /* upper timestamp half last written */
    uint32_t index;          /* 0, 1, ... in order of first use */
    uint64_t epoch;          /* session epoch this state belongs to */
    sps__chunk_t *cur;       /* chunk being written */
    sps__chunk_t *head, *tail; /* retired chunks, oldest first */
    uint64_t dropped;        /* events dropped under SPS_OVERFLOW_DROP */
    int dropping;
    int exited;
    uint64_t seq_next;       /* while dropping: sequence number of the next
                                record (numbering never restarts in a
                                session; stacks and carried calls use it) */
    pid_t tid;
    char name[32];
    int64_t first_ns, last_ns; /* first/last use, CLOCK_MONOTONIC ns */
    /* aggregate mode (owner thread writes, readers use relaxed loads) */
    void *agg_acc;           /* the model's accumulators (model/aggregate.c) */
    size_t agg_bytes;        /* allocated, zero-filled */
    uint32_t agg_seq;        /* seqlock over agg_acc: odd while updating */
    sps__stack_t agg_stack;  /* open calls (ticks) */
    /* analyzer cursor (under the session lock): records [0, an_pos) of
     * an_chunk are analyzed, and every chunk before it */
    sps__chunk_t *an_chunk;
    uint32_t an_pos;
    sps__stack_t stack;      /* open calls as of the analyzer cursor */
    sps__stack_t carried;    /* open calls at the last finalize */
    struct sps__thr *next_all;
} sps__thr_t;

/* ======================================================================== */
/* core: registry (src/core/registry.c)                                      */
/* ======================================================================== */

/* Process-wide name interning.  Ids start at 1; 0 is SPS_REGION_INVALID. */
SPS__HIDDEN sps_region_t sps__registry_intern(const char *name);
SPS__HIDDEN uint32_t sps__registry_count(void); /* ids are 1..count-1... */
/* Display name (valid UTF-8, never NULL for ids < count; "(invalid)" for 0). */
SPS__HIDDEN const char *sps__registry_name(sps_region_t r);

/* ======================================================================== */
/* model: calls and periods (src/model/)                                    */
/* ======================================================================== */

typedef struct sps__tree sps__tree_t;

/* A node of the live call tree (sps__tree_t): (parent node, region) and
 * its statistics, session-cumulative and of the current period. */
typedef struct sps__tree_node {
    int32_t parent;
    uint32_t region;
    sps__acc_t cum, per;
} sps__tree_node_t;

struct sps__tree {
    sps__tree_node_t *n;
    size_t len, cap;
    sps__htab_t index; /* (parent, region) -> node index (util.h) */
};

/* A stretch of one thread's records: chunk memory or a spill-file range.
 * Records [0, skip) only update the timestamp's upper half. */
typedef struct sps__seg {
    uint32_t thread;
    const uint64_t *rec; /* NULL: read n records at file_off from spill fd */
    int64_t file_off;
    uint32_t n, skip;
    uint64_t seq0;
} sps__seg_t;

/* Statistics accumulators (src/model/fold.c).  add: one call [start, end)
 * with self time self; merge: Chan's pairwise update (into += from). */
SPS__HIDDEN void sps__acc_add(sps__acc_t *a, uint64_t start, uint64_t end,
                              uint64_t self);
SPS__HIDDEN void sps__acc_merge(sps__acc_t *into, const sps__acc_t *from);
/* Mean and sum of squared deviations of a's durations. */
SPS__HIDDEN void sps__acc_moments(const sps__acc_t *a, double *mean, double *m2);
/* Converts to public stats.  Accumulators hold ns, except the per-thread
 * ones of aggregate mode, which hold ticks until sps__acc_to_ns. */
SPS__HIDDEN void sps__acc_stats(const sps__acc_t *a, sps_stats_t *out);
SPS__HIDDEN void sps__acc_to_ns(sps__acc_t *a, const sps__timemap_t *tm);

/* A decoded record. */
typedef struct sps__ev {
    uint64_t ns;    /* CLOCK_MONOTONIC ns (the reader converts the ticks) */
    uint64_t seq;
    uint32_t region;
    int is_end;
} sps__ev_t;

/* Reads the records of one thread's segments in order, decoding full
 * timestamps.  Spilled segments are read from the spill file in blocks.
 * Frames in `inject` (open calls carried in from the previous period) come
 * first, as begin events with their original timestamps and seqs. */
typedef struct sps__rd {
    const sps__seg_t *seg, *seg_end;
    const sps__stack_t *inject;
    size_t ninjected;
    const uint64_t *rec; /* current block */
    uint32_t i, n;       /* index in block, block length */
    uint32_t base;       /* index of rec[0] within the segment */
    uint32_t hi;
    uint64_t *buf;       /* block buffer for spilled segments */
    const sps__timemap_t *tm; /* ticks -> ns (NULL: records hold ns) */
    size_t hint;
} sps__rd_t;
SPS__HIDDEN void sps__rd_init(sps__rd_t *r, const sps__seg_t *segs,
                              size_t nsegs, const sps__stack_t *inject,
                              const sps__timemap_t *tm);
/* 1 and *ev filled, 0 at the end, or a negative SPS_E* code. */
SPS__HIDDEN int sps__rd_next(sps__rd_t *r, sps__ev_t *ev);
SPS__HIDDEN void sps__rd_free(sps__rd_t *r);

/* The one fold (src/model/fold.c; the rule is written there once).  A
 * closed frame is reported to fn with its end, its self time and its depth
 * (its index in the stack: the parent, if any, is s->f[depth - 1]). */
typedef void (*sps__close_fn)(void *ctx, const sps__frame_t *f, uint64_t end,
                              uint64_t self, size_t depth);
/* Begin/end streams: applies end(region) at ts to s.  Returns the number of
 * repairs (misuse): 1 for an end with no open frame of region, else the
 * frames above it that were closed with it. */
SPS__HIDDEN int sps__fold_end(sps__stack_t *s, uint32_t region, uint64_t ts,
                              sps__close_fn fn, void *ctx);
/* Interval streams: places span f (f.start, f.end set; spans of one lane
 * in start order, longer first on ties), closing the frames it outlives.
 * Returns the number of partial overlaps it met, or -1 (SPS_ENOMEM: f not
 * placed). */
SPS__HIDDEN int sps__fold_span(sps__stack_t *s, sps__frame_t f,
                               sps__close_fn fn, void *ctx);
/* Interval streams: closes every frame still open, each at its own end. */
SPS__HIDDEN void sps__fold_flush(sps__stack_t *s, sps__close_fn fn, void *ctx);
/* Interval streams, for outputs whose spans must nest strictly (timelines:
 * Perfetto's slices): closes the frames that ended at or before start and
 * returns 1 when a span [start, end) would overlap the innermost open one
 * partially (the reader then leaves it out and counts it), else 0 (place
 * it with sps__fold_span). */
SPS__HIDDEN int sps__fold_overlaps(sps__stack_t *s, uint64_t start, uint64_t end,
                                   sps__close_fn fn, void *ctx);
/* The nesting filter of timeline readers, over sps__fold_overlaps: spans of
 * one lane in start order (longer first on ties).  1: [start, end) nests
 * and was placed; 0: it overlaps an open span partially and is left out;
 * -1: out of memory. */
SPS__HIDDEN int sps__fold_keep(sps__stack_t *s, int64_t start, int64_t end);
/* A close callback that does nothing. */
SPS__HIDDEN void sps__fold_ignore(void *ctx, const sps__frame_t *f, uint64_t end,
                                  uint64_t self, size_t depth);
/* The part of a child [cs, ce) that lies inside its parent [ps, pe): what
 * the child takes from the parent's self time (never negative). */
SPS__HIDDEN int64_t sps__fold_clip(int64_t cs, int64_t ce, int64_t ps, int64_t pe);

/* The fold over a stream of timeline spans (start order across lanes, as
 * the timeline readers deliver them): per-region statistics (ns, self time
 * by the interval rule), for views that read traces (diff, html).  init:
 * nlanes lanes (threads), regions 0..nregions-1, and with with_tree the
 * call tree (one node per path of regions, statistics in node.cum); 0 or
 * SPS_ENOMEM.  add:
 * the span's depth on its lane (>= 0), or SPS_EINVAL (lane or region out
 * of range) or SPS_ENOMEM.  finish: closes every open span (then acc[r]
 * holds region r's statistics).  free: releases everything. */
typedef struct sps__fold_tl {
    sps__stack_t *lanes;
    size_t nlanes;
    sps__acc_t *acc;
    size_t nacc;
    uint64_t overlaps;   /* partial overlaps met (none from a reader that
                            filters them) */
    int with_tree;
    sps__tree_t tree;    /* with_tree: the call tree */
} sps__fold_tl_t;
SPS__HIDDEN int sps__fold_tl_init(sps__fold_tl_t *t, size_t nlanes, size_t nregions,
                                  int with_tree);
SPS__HIDDEN int64_t sps__fold_tl_add(sps__fold_tl_t *t, uint32_t lane, uint32_t region,
                                     int64_t start, int64_t end);
SPS__HIDDEN void sps__fold_tl_finish(sps__fold_tl_t *t);
SPS__HIDDEN void sps__fold_tl_free(sps__fold_tl_t *t);

/* The fold over an array of spans in any order (files, traces, Python). */
typedef struct sps__ival {
    int64_t start, end;  /* ns; end < start counts as end == start */
    uint32_t rank;       /* spans nest within a lane: (rank, thread) */
    uint32_t region;
    int64_t thread;
    size_t index;        /* set by sps__fold_ivals */
} sps__ival_t;
typedef struct sps__fold_out {
    int64_t parent;      /* index of the parent span, -1 for a root */
    int64_t self;        /* ns */
    uint32_t depth;
} sps__fold_out_t;
/* Folds v[0..n) (reordered while it runs, restored before it returns):
 * out[i] gets span i's parent, self time and depth; *overlaps (if not NULL)
 * the partial overlaps met.  0 or SPS_ENOMEM. */
SPS__HIDDEN int sps__fold_ivals(sps__ival_t *v, size_t n, sps__fold_out_t *out,
                                uint64_t *overlaps);
SPS__HIDDEN int32_t sps__tree_node(sps__tree_t *t, int32_t parent,
                                   uint32_t region);
SPS__HIDDEN void sps__tree_free(sps__tree_t *t);
SPS__HIDDEN int sps__acc_reserve(uint32_t r);
SPS__HIDDEN int sps__analyze_thread(sps__thr_t *t);

/* A completed call as every consumer sees it.  Times in CLOCK_MONOTONIC ns. */
typedef struct sps__call {
    uint32_t region;
    uint32_t thread;
    uint64_t start, end, self;
    int64_t call_id;   /* start order among the period's written calls */
    int64_t parent_id; /* call_id of the enclosing call, -1 if none */
    uint32_t depth;
    uint64_t ordinal;  /* start order among the period's written calls of
                          this region */
    uint64_t seq;      /* per-thread sequence number of its begin record */
} sps__call_t;

/* Native stacks (stacks.c).  note: called by the recording thread t right
 * after it wrote the begin record number seq (state SPS__EVENTS_STACKS);
 * caller is the user's call site (sps__begin's return address), where the
 * stack is cut, or NULL; lookup: the stack id of that begin in session epoch, 0 if none. */
SPS__HIDDEN void sps__stack_note(const sps__thr_t *t, uint64_t seq, void *caller);
SPS__HIDDEN uint32_t sps__stack_lookup(uint32_t thread, uint64_t epoch, uint64_t seq);
/* Non-zero once capture was switched on in this process (sps_spans skips
 * the lookups otherwise). */
SPS__HIDDEN int sps__stacks_used(void);
/* In a fork child: re-initialises the locks of stacks.c. */
SPS__HIDDEN void sps__stacks_atfork_child(void);

/* Steps (schedule.c, model/fold.c).  A completed step of the session: thread
 * index, CLOCK_MONOTONIC ns, its number, and (set by sps_spans before
 * sps__steps_nest) the region id of its name "ProfilerStep#N". */
typedef struct sps__step_span {
    int64_t start_ns, end_ns, step;
    uint32_t thread, region;
} sps__step_span_t;
/* Under the session lock: the steps that ended in the periods sps_spans
 * returns (the pending one and the current one) and lie inside
 * [from_ns, to_ns], as a malloc'd array (*out NULL when *n is 0).  Needs
 * the time map refreshed (every mark before its last anchor).  Returns 0
 * or SPS_ENOMEM. */
SPS__HIDDEN int sps__steps_window(int64_t from_ns, int64_t to_ns,
                                  sps__step_span_t **out, size_t *n);
/* model/fold.c: merges nsteps step spans into the *n spans of *spans
 * (see the contract there).  0 or SPS_ENOMEM (then *spans is unchanged). */
SPS__HIDDEN int sps__steps_nest(sps_span_t **spans, size_t *n,
                                const sps__step_span_t *steps, size_t nsteps);
/* buffer.c: joins the calling thread to the running events session if it
 * has not recorded in it yet (as its first record would) and returns its
 * index, or SPS_ENOSESSION, SPS_EMODE (aggregate) or SPS_ENOMEM.  Takes
 * the session lock unless the thread has joined already. */
SPS__HIDDEN int64_t sps__thread_join(void);

/* The merged pass (period.c).  begin gets calls with end == 0 in start
 * order; end gets completed calls in end order.  Either may be NULL; a
 * non-zero return stops the pass. */
typedef struct sps__pass_cb {
    void *ctx;
    int (*begin)(void *ctx, const sps__call_t *c);
    int (*end)(void *ctx, const sps__call_t *c);
} sps__pass_cb_t;
typedef struct sps__snap sps__snap_t;
SPS__HIDDEN int sps__pass_run(const sps__snap_t *snap,
                              const sps__pass_cb_t *cb, uint64_t *misuse);
SPS__HIDDEN size_t sps__collect_calls(const sps__snap_t *snap, uint32_t r,
                                      int64_t *starts, int64_t *durs,
                                      size_t cap);

/* ======================================================================== */
/* formats: one row of the HDF5 index, the period's shape                    */
/* ======================================================================== */

/* Statistics in ns as written to rank_region_index/summary_statistics. */
typedef struct sps__summary {
    int64_t total, minimum, maximum, first, last, start_minimum, end_maximum;
    uint64_t gpu_count;
    int64_t gpu_total;
    double mean, m2;
} sps__summary_t;

/* The summary of accumulator a (ns), as a row of the index stores it. */
SPS__HIDDEN void sps__summary_of(const sps__acc_t *a, sps__summary_t *o);

typedef struct sps__row {
    uint32_t file_region; /* index into names[] of the file */
    uint32_t rank;
    uint64_t offset, count; /* slice of /events */
    int64_t exclusive_total; /* self ns, -1 if unknown */
    sps__summary_t s;
} sps__row_t;

typedef struct sps__thread_info {
    int64_t index, ident, native_id;
    int64_t start_ns, end_ns, cpu_ns;
    const char *name;
} sps__thread_info_t;

/* Everything a writer needs besides the per-call columns. */
typedef struct sps__layout {
    int aggregate;                /* storage_layout "aggregate" */
    size_t nnames;
    const char *const *names;     /* file region id -> name */
    size_t nrows;
    const sps__row_t *rows;       /* in file region id order */
    uint64_t nevents;             /* total rows of /events */
    int with_tree;                /* write call_ids/parent_ids/thread_ids */
    long compress_threshold;      /* see sps_config_t */
    size_t nthreads;
    const sps__thread_info_t *threads;
    /* /metadata attributes */
    int64_t start_time_ns, finalize_time_ns;
    int64_t wall_anchor_ns;   /* CLOCK_REALTIME ns taken with mono_anchor_ns */
    int64_t mono_anchor_ns;
    const char *label;
    int rank, size;
    uint64_t dropped, misuse, open_calls;
    const char *clock_source; /* "tsc" or "monotonic" */
    /* MPI clock alignment (src/ext/mpi.c): when has_clock_offset, /metadata
     * gets int64 clock_offset_ns (ns to ADD to this file's times to put them
     * on rank 0's clock) and clock_offset_error_ns (its error bound). */
    int has_clock_offset;
    int64_t clock_offset_ns, clock_offset_error_ns;
} sps__layout_t;

/* HDF5 writer (src/formats/h5.c).  Usage: open (creates every dataset at
 * its final size), write_rows any number of times, write_durations for late
 * durations, close.  Rows are addressed by their position in /events. */
typedef struct sps__h5w sps__h5w_t;
SPS__HIDDEN int sps__h5w_open(sps__h5w_t **out, const char *path,
                              const sps__layout_t *lay);
/* Writes n consecutive rows starting at first.  parent_ids/call_ids/
 * thread_ids may be NULL when !lay->with_tree. */
SPS__HIDDEN int sps__h5w_rows(sps__h5w_t *w, uint64_t first, size_t n,
                              const int64_t *start_deltas,
                              const int64_t *durations,
                              const int64_t *call_ids,
                              const int64_t *parent_ids,
                              const int64_t *thread_ids);
/* Writes durations at scattered positions (calls that completed after their
 * row was written with a placeholder). */
SPS__HIDDEN int sps__h5w_durations(sps__h5w_t *w, size_t n,
                                   const uint64_t *pos, const int64_t *dur);
/* Writes the index, names, metadata and thread table and closes the file.
 * Frees w even on error. */
SPS__HIDDEN int sps__h5w_close(sps__h5w_t *w);
/* Writes every call of a snapshot as rows (period.c). */
SPS__HIDDEN int sps__write_events(const sps__snap_t *snap, sps__h5w_t *w,
                                  const sps__layout_t *lay,
                                  const uint32_t *file_region);
/* Closes an HDF5 handle (an hid_t) of any kind if it is valid and sets it
 * to -1 (h5_read.c; shared by the writer and the readers). */
SPS__HIDDEN void sps__h5_close(int64_t *id);
/* Closes and removes the file without finishing it. */
SPS__HIDDEN void sps__h5w_abort(sps__h5w_t *w);

/* ======================================================================== */
/* formats: summary table (src/formats/table.c)                              */
/* ======================================================================== */

/* One row of the tree view: a distinct path of nested regions, as the
 * table prints it (from the live tree, api/finalize.c, or a file, h5_read.c). */
typedef struct sps__tree_row {
    int32_t parent;   /* index of the parent row, -1 for a root */
    const char *name;
    uint64_t calls;
    int64_t total_ns, self_ns, min_ns, max_ns;
} sps__tree_row_t;

/* A region's flat statistics. */
typedef struct sps__tflat {
    const char *name;
    uint64_t calls;
    int64_t total_ns, self_ns, min_ns, max_ns;
    double mean_ns;
} sps__tflat_t;

typedef enum {
    SPS__SORT_SELF = 0, SPS__SORT_TOTAL, SPS__SORT_CALLS, SPS__SORT_MEAN,
    SPS__SORT_MAX, SPS__SORT_NAME
} sps__sort_t;

/* The one parser of sort keys ("self", "total", "calls", "mean", "max",
 * "name"; NULL reads as "self"): 0 and *out set, or SPS_EINVAL for an
 * unknown key (*out left alone; table.c).  The tool's --sort, sps_report
 * and Python's summary(sort=...) all use it.  sps__sort_name gives a key's name back ("self" for a value
 * out of range). */
SPS__HIDDEN int sps__sort_parse(const char *s, sps__sort_t *out);
SPS__HIDDEN const char *sps__sort_name(sps__sort_t by);

typedef struct sps__table_opts {
    int tree;          /* print the tree view */
    int flat;          /* print the flat view */
    sps__sort_t sort;  /* flat view order (tree: children by total) */
    size_t top;        /* flat view rows, 0 = all */
    int64_t session_ns; /* 100 % (wall time of the session period) */
} sps__table_opts_t;

/* Prints the tree view (nodes, any order; children sorted by total) and/or
 * the flat view.  Never fails on odd input (cycles in parent links are
 * printed as roots). */
SPS__HIDDEN int sps__table_print(FILE *fp, const sps__tree_row_t *nodes,
                                 size_t nnodes, const sps__tflat_t *flat,
                                 size_t nflat, const sps__table_opts_t *opt);
/* Prints the per-rank view: for each of nregions regions (names[g]), the
 * min / mean / max over the nranks ranks (ranks[k]) of its total time
 * totals[g * nranks + k], the slowest rank and the imbalance (max - mean) /
 * max, sorted by imbalance (by the sum over ranks for SPS__SORT_TOTAL),
 * the first top rows (all when 0).  Returns 0, SPS_EINVAL, SPS_ENOMEM or
 * SPS_EIO. */
/* The tree (opt->tree: one row per node in print order, its path of names
 * joined by ';') or else the flat view (sorted and cut by opt->sort and
 * opt->top) as CSV (RFC 4180), times in exact ns.  0, SPS_EINVAL, SPS_ENOMEM
 * or SPS_EIO. */
SPS__HIDDEN int sps__table_csv(FILE *fp, const sps__tree_row_t *nodes,
                               size_t nnodes, const sps__tflat_t *flat,
                               size_t nflat, const sps__table_opts_t *opt);
SPS__HIDDEN int sps__rank_table_print(FILE *fp, const char *const *names,
                                      size_t nregions, const uint32_t *ranks,
                                      size_t nranks, const int64_t *totals,
                                      sps__sort_t sort, size_t top);

/* ======================================================================== */
/* core: session state (src/core/session.c, buffer.c)                        */
/* ======================================================================== */

/* SPS__EVENTS_STACKS: events, plus a native stack per begin (stacks.c);
 * the hot path only knows SPS__EVENTS, so this state takes the slow path. */
enum { SPS__OFF = 0, SPS__EVENTS = 1, SPS__AGGREGATE = 2, SPS__EVENTS_STACKS = 3 };

/* Read on every sps_begin/sps_end; on its own cache line. */
/* sps__active (spanscope.h) holds SPS__OFF / SPS__EVENTS / SPS__AGGREGATE;
 * always accessed with __atomic builtins (it is a plain int in the public
 * header so that C++ can include it). */
/* Accessed through the GOT even inside the library: an executable that
 * reads sps__active inline gets a copy relocation, and the library must
 * write that copy, not its own. */
static inline int sps__state_load(void) {
    return __atomic_load_n(&sps__active, __ATOMIC_RELAXED);
}
static inline void sps__state_store(int s) {
    __atomic_store_n(&sps__active, s, __ATOMIC_SEQ_CST);
}
SPS__HIDDEN extern __thread sps__thr_t *sps__tls;
SPS__HIDDEN extern sps__thr_t sps__dummy_thr;


/* What a finalize takes out of the session to write, without the lock. */
struct sps__snap {
    uint32_t nthreads;
    sps__seg_t *segs;      /* all segments, grouped by thread, in order */
    size_t nsegs, capsegs;
    sps__chunk_t *owned;   /* in-memory chunks to give back after writing */
    uint64_t **copies;     /* copies of current chunks */
    size_t ncopies, capcopies;
    sps__stack_t *carried; /* [nthreads] open calls at the previous period end */
    sps__stack_t *open;    /* [nthreads] open calls at this period end */
    sps__acc_t *per;       /* [nregions] period statistics (ns) */
    uint32_t nregions;
    sps__acc_t *node_per;  /* [nnodes] period statistics of tree nodes */
    size_t nnodes;
    sps__timemap_t tm;
    int64_t start_ns, end_ns;
    /* copied under the lock for the writer and the table */
    uint32_t *regs;        /* region ids in the file's region table */
    size_t nregs;
    int32_t *node_parent;  /* [nnodes] */
    uint32_t *node_region; /* [nnodes] */
    sps__thread_info_t *threads; /* [nthreads] */
    char (*tnames)[32];
    int aggregate, rank, size;
    long compress_threshold;
    uint64_t dropped, misuse, open_calls;
    int64_t wall_anchor_ns, mono_anchor_ns;
    char *label;
    int has_clock_offset;  /* MPI clock alignment (see sps__layout_t) */
    int64_t clock_offset_ns, clock_offset_error_ns;
    sps_counter_sample_t *counters; /* the period's counter samples */
    size_t ncounters;
    uint64_t counters_dropped;
};

/* ======================================================================== */
/* integrations: distributed sessions (api: src/api/dist.c; the MPI one:   */
/* src/ext/mpi.c, its own library libspanscope_mpi)                          */
/* ======================================================================== */

/* A distributed integration (MPI) lives in a library of its own, so that a
 * program that does not use it never loads it (nor libmpi).  It plugs in
 * through an operations table it registers with sps__dist_register, from
 * its library's constructor; the core calls the table, never the
 * integration by name.  libspanscope_mpi is another shared object, where
 * the core's hidden symbols are out of reach: registering gives it a table
 * of the core's services instead (one exported internal entry point, not
 * one per service).  docs/mpi.md describes the arrangement. */

/* What a distributed setup found. */
typedef struct sps__dist {
    int on;                  /* 1: sessions are collective over a communicator */
    int rank, size;
    int has_clock_offset;
    int64_t clock_offset_ns;       /* ns to add to put times on rank 0's clock */
    int64_t clock_offset_error_ns; /* half the best round trip */
} sps__dist_t;

/* Both tables start with the ABI version they were built with; a table of
 * another version is refused (a libspanscope_mpi of another spanscope). */
#define SPS__DIST_ABI 1

/* What an integration gives the core.  Every function is called without
 * the session lock held; none may be NULL. */
typedef struct sps__dist_ops {
    int abi;          /* SPS__DIST_ABI */
    const char *name; /* "mpi" */
    /* sps_setup (no session live, cfg->local not set): when the runtime is
     * up (MPI initialised, or sps_mpi_setup named a communicator) it is
     * collective and fills *out (on = 1, rank, size, clock offset);
     * otherwise it zeroes *out (on = 0).  0 or a negative SPS_E* code. */
    int (*setup)(sps__dist_t *out);
    /* A finalize of a session whose setup gave on = 1: the collective
     * finalize, which writes this rank's period with the core's
     * finalize_local.  Every rank returns the same code. */
    int (*finalize)(const char *path, FILE *table_fp);
    /* sps_shutdown of such a session (in the process that set it up). */
    void (*shutdown)(void);
} sps__dist_ops_t;

/* What the core gives an integration (sps__dist_register fills a pointer
 * to its one static table, valid for the life of the process). */
typedef struct sps__dist_core {
    int abi; /* SPS__DIST_ABI */
    /* The finalize of this process alone (sps__finalize_local). */
    int (*finalize_local)(const char *path, FILE *table_fp);
    /* Copies the live session's distributed state into *out under the
     * session lock (zeroed when no session of this process is live, or it
     * is not distributed); returns 1 when such a session is live, else 0. */
    int (*dist_info)(sps__dist_t *out);
    /* The live session's mode (SPS__EVENTS or SPS__AGGREGATE), SPS__OFF
     * when none is live in this process.  Read under the session lock. */
    int (*session_mode)(void);
    /* sps__h5_add_table (formats/h5.c, below). */
    int (*h5_add_table)(const char *path, const char *group, const char *desc,
                        size_t n, const char *strname, const char *const *strcol,
                        size_t ncols, const char *const *colname,
                        const int64_t *const *cols);
} sps__dist_core_t;

/* Registers ops as the process's distributed integration and points *core
 * (may be NULL) at the core's services: set before ops is published (a
 * setup on another thread may call ops at once), NULL again when refused.
 * ops must stay valid for the life of the process (libspanscope_mpi is
 * linked with -z nodelete).  Registering the same table again is a no-op.
 * Thread-safe.  Returns 0, SPS_EINVAL (ops NULL or of another
 * SPS__DIST_ABI) or SPS_EACTIVE (another table is registered: one
 * distributed runtime per process).  Exported (SPS_API)
 * because the integration is another shared object; internal all the same:
 * not in spanscope.h, no promise beyond SPS__DIST_ABI. */
SPS_API int sps__dist_register(const sps__dist_ops_t *ops,
                               const sps__dist_core_t **core);

/* The api layer's side (api/dist.c), called by setup and finalize only.  sps__dist_setup (from
 * sps_setup): when no integration is registered and MPI is initialised in
 * the process (PMPI_Initialized found with dlsym: the core links no MPI),
 * first loads libspanscope_mpi from libspanscope's own directory (see
 * dist.c); then calls the registered setup, or zeroes *out when there is
 * none.  sps__dist_finalize: the registered finalize (sps__finalize_local
 * when there is none).  sps__dist_shutdown: the registered shutdown. */
SPS__HIDDEN int sps__dist_setup(sps__dist_t *out);
SPS__HIDDEN int sps__dist_finalize(const char *path, FILE *table_fp);
SPS__HIDDEN void sps__dist_shutdown(void);
/* api/finalize.c: the finalize of this process alone (what sps__finalize_ex does
 * without a distributed session). */
SPS__HIDDEN int sps__finalize_local(const char *path, FILE *table_fp);
/* h5.c: adds group `group` to an existing, closed HDF5 file: n rows of an
 * optional vlen UTF-8 column strname (none when strcol is NULL) and ncols
 * int64 columns, and a "description" attribute.  0, SPS_EHDF5 or SPS_EIO. */
SPS__HIDDEN int sps__h5_add_table(const char *path, const char *group,
                                  const char *desc, size_t n,
                                  const char *strname,
                                  const char *const *strcol, size_t ncols,
                                  const char *const *colname,
                                  const int64_t *const *cols);

typedef struct sps__session {
    pthread_mutex_t lock;
    uint64_t epoch;
    int pid;
    int mode;                 /* SPS__EVENTS or SPS__AGGREGATE */
    sps_config_t cfg;         /* strings below are owned copies */
    char *file_path, *label, *spill_dir;
    uint32_t chunk_recs;
    size_t budget_chunks, mem_chunks;
    sps__chunk_t *free_mem;   /* descriptors holding free chunk memory */
    sps__thr_t *threads;      /* every thread state (all epochs) */
    uint32_t nthreads;        /* threads of this epoch */
    int spill_fd;
    int64_t spill_end;
    size_t spilled_live;
    sps__timemap_t tm;
    int64_t start_ns, period_start_ns;
    int64_t wall_anchor_ns, mono_anchor_ns;
    uint8_t *registered;      /* [registered_cap] by region id */
    uint32_t registered_cap;
    uint64_t misuse;
    sps__snap_t *pending;     /* a period whose write failed */
    sps__dist_t dist;         /* MPI: rank, size, clock offset (ext/mpi.c) */
} sps__session_t;

SPS__HIDDEN extern sps__session_t sps__g;

/* counters.c, under the session lock: moves the period's samples into s
 * (the log starts again); puts them back in front (a failed write); forgets
 * them (session end). */
SPS__HIDDEN void sps__counters_take(sps__snap_t *s);
SPS__HIDDEN void sps__counters_reset(void);
/* h5.c: adds /counters to the closed file at path (see docs/design.md). */
SPS__HIDDEN int sps__h5_add_counters(const char *path, size_t nnames,
                                     const char *const *names, size_t n,
                                     const int64_t *series, const int64_t *ranks,
                                     const int64_t *t_ns, const double *values,
                                     uint64_t dropped);

/* buffer.c */
SPS__HIDDEN void sps__slow_record(sps__thr_t *t, uint32_t payload,
                                  uint64_t now);
/* Aggregate mode's recorder: core hands it each begin and end (ticks);
 * the model's (model/aggregate.c: sps__agg_fold_ops), registered by the
 * api layer at setup, so core calls no statistics code by name. */
typedef struct sps__agg_ops {
    void (*begin)(sps_region_t r, uint64_t now);
    void (*end)(sps_region_t r, uint64_t now);
} sps__agg_ops_t;
SPS__HIDDEN extern const sps__agg_ops_t *sps__agg_ops;
/* The calling thread's state joined to the session, with at least bytes of
 * zero-filled aggregate storage (t->agg_acc); NULL if impossible
 * (buffer.c; takes the session lock). */
SPS__HIDDEN sps__thr_t *sps__agg_thread(size_t bytes);

/* session.c: process-wide set-up (once), liveness, the config check. */
SPS__HIDDEN void sps__process_init(void);
SPS__HIDDEN int sps__session_live(void);
SPS__HIDDEN int sps__config_check(const sps_config_t *cfg);
/* Called under the session lock when a session's recording is forgotten
 * (the model's analysis: sps__analysis_reset). */
typedef void (*sps__reset_fn)(void);
/* Opens a session (cfg checked; dist: what an MPI setup found, zeroed
 * without).  0 or SPS_EACTIVE. */
SPS__HIDDEN int sps__session_open(const sps_config_t *cfg, const sps__dist_t *dist,
                                  sps__reset_fn reset);
/* Closes the session; returns 1 when it was collective (the caller shuts the
 * integration down), else 0. */
SPS__HIDDEN int sps__session_close(sps__reset_fn reset);
/* Snapshots, under the lock.  build: the period's records and stacks (take:
 * move them out of the session; else reference live memory while the lock
 * is held); describe: threads and metadata; stash: keep a period whose
 * write failed as pending (merge merges the model's part, older first);
 * absorb_pending: the pending period into s; release: chunks back to the
 * pool; free: frees s and what it owns. */
typedef void (*sps__snap_merge_fn)(sps__snap_t *s, const sps__snap_t *older);
SPS__HIDDEN sps__snap_t *sps__snap_build(int take);
SPS__HIDDEN int sps__snap_describe(sps__snap_t *s);
SPS__HIDDEN void sps__snap_stash(sps__snap_t *s, sps__snap_merge_fn merge);
SPS__HIDDEN void sps__snap_absorb_pending(sps__snap_t *s, sps__snap_merge_fn merge);
SPS__HIDDEN void sps__snap_release(sps__snap_t *s);
SPS__HIDDEN void sps__snap_free(sps__snap_t *s);

/* model/aggregate.c */
SPS__HIDDEN extern const sps__agg_ops_t sps__agg_fold_ops;
/* Thread t's accumulator of r, read consistently (seqlock), in ticks. */
SPS__HIDDEN sps__acc_t sps__agg_read(const sps__thr_t *t, sps_region_t r);
/* model/analyze.c, under the session lock: the analysis's part of sessions
 * and snapshots.  reset: forget it; analyze_all: catch up with every
 * thread; cum_acc: r's statistics over the session so far (ns); take: move
 * the period's statistics into s; merge: add older's into s; describe: the
 * file's region list and the tree's shape into s.  0 or SPS_ENOMEM. */
/* The analysis of the live session (analyze.c), under the session lock:
 * the session-cumulative and the period's statistics by region id, and the
 * call tree.  Reset with the session's recording (sps__analysis_reset). */
typedef struct sps__analysis {
    sps__acc_t *cum, *per;    /* [acc_cap] by region id, ns */
    uint32_t acc_cap;
    sps__tree_t tree;
} sps__analysis_t;
SPS__HIDDEN extern sps__analysis_t sps__an;
SPS__HIDDEN void sps__analysis_reset(void);
SPS__HIDDEN void sps__analyze_all(void);
SPS__HIDDEN sps__acc_t sps__cum_acc(sps_region_t r);
SPS__HIDDEN int sps__analysis_take(sps__snap_t *s);
SPS__HIDDEN void sps__analysis_merge(sps__snap_t *s, const sps__snap_t *older);
SPS__HIDDEN int sps__analysis_describe(sps__snap_t *s);
/* Under the lock: release every chunk of every thread (session end). */
SPS__HIDDEN void sps__buffers_reset(void);
/* Under the lock: give a chunk's memory back to the pool. */
SPS__HIDDEN void sps__chunk_release(sps__chunk_t *c);
SPS__HIDDEN void sps__thread_key_init(void);
/* Reads n records at off of the spill file into out. 0 or SPS_EIO. */
SPS__HIDDEN int sps__spill_read(int64_t off, uint32_t n, uint64_t *out);

/* api/finalize.c: writes a finalized period to path (NULL: no file) and prints
 * the table to verbose if not NULL.  Does not take the lock. */
SPS__HIDDEN int sps__finalize_write(sps__snap_t *s, const char *path,
                                    FILE *verbose);
/* api/finalize.c: sps_finalize_to with the table printed to table_fp (or none). */
SPS__HIDDEN int sps__finalize_ex(const char *path, FILE *table_fp);

/* api/finalize.c: builds table input from accumulators (ns) and prints it. */
SPS__HIDDEN int sps__print_accs(FILE *fp, const sps__acc_t *per_region,
                                uint32_t nregions, const sps__acc_t *nodes,
                                const int32_t *node_parent,
                                const uint32_t *node_region, size_t nnodes,
                                int64_t session_ns);

#endif /* SPS_INT_H */
