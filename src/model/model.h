/*
 * model.h -- the model layer's internal interface (src/model/): what a
 * recording means.  Decoding records, THE fold (fold.c: nesting, self
 * time, statistics, the call tree; its rule is written there once), the
 * incremental analyzer, the merged pass, aggregate mode's recorder.  Uses
 * core and util only.
 */
#ifndef SPS_MODEL_H
#define SPS_MODEL_H

#include "core/core.h"

/* ======================================================================== */
/* model: statistics, the fold, calls and periods                            */
/* ======================================================================== */

/* Running statistics in ns (the per-thread ones of aggregate mode hold
 * ticks until sps__acc_to_ns).  Variance uses a shifted sum (shift = first
 * duration seen), merged across threads with Chan's formula. */
struct sps__acc {
    uint64_t count;
    uint64_t total, self, min, max;
    uint64_t first_start, first_dur; /* call with the earliest start */
    uint64_t last_start, last_dur;   /* call with the latest start */
    uint64_t end_max;                /* latest end */
    uint64_t shift;
    double s1, s2; /* sums of (d - shift) and (d - shift)^2 */
};

typedef struct sps__tree sps__tree_t;

/* A node of the live call tree (sps__tree_t): (parent node, region) and
 * its statistics, session-cumulative and of the current period. */
typedef struct sps__tree_node {
    int32_t parent;
    uint32_t region;
    sps__acc_t cum, per;
    uint64_t last; /* the child found last: (region + 1) << 32 | node; 0 none */
    uint32_t lanes_cum, lanes_per; /* threads that ran it: session, period */
} sps__tree_node_t;

struct sps__tree {
    sps__tree_node_t *n;
    size_t len, cap;
    sps__htab_t index; /* (parent, region) -> node index (util.h) */
    uint64_t root_last; /* as sps__tree_node_t's last, for the roots */
};

/* Statistics accumulators (src/model/fold.c).  add: one call [start, end)
 * with self time self (inline: the analysis adds every call twice, to its
 * region and to its tree node); merge: Chan's pairwise update (into +=
 * from). */
SPS__INLINE void sps__acc_add(sps__acc_t *a, uint64_t start, uint64_t end, uint64_t self) {
    uint64_t d = end > start ? end - start : 0;
    if (a->count == 0) {
        a->shift = d;
        a->min = a->max = d;
        a->first_start = a->last_start = start;
        a->first_dur = a->last_dur = d;
        a->end_max = end;
    }
    a->count++;
    a->total += d;
    a->self += self;
    if (d < a->min) a->min = d;
    if (d > a->max) a->max = d;
    if (start < a->first_start) { a->first_start = start; a->first_dur = d; }
    if (start >= a->last_start) { a->last_start = start; a->last_dur = d; }
    if (end > a->end_max) a->end_max = end;
    double x = (double)d - (double)a->shift;
    a->s1 += x;
    a->s2 += x * x;
}
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
    uint32_t nvals;        /* values read with the record (cfg.track), 0: none */
    const uint64_t *vals;  /* [nvals], the reader's: valid until its next event */
} sps__ev_t;

/* Reads the records of one thread's segments in order, decoding full
 * timestamps.  Spilled segments are read from the spill file and unpacked
 * a frame (SPS__PACK_FRAME records) at a time.
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
    sps__spill_rd_t *sp; /* their reader (core/spill.c), made on first use */
    uint32_t chunk_start; /* spilled: index in the segment where the packed
                             chunk of the current block starts */
    const sps__timemap_t *tm; /* ticks -> ns (NULL: records hold ns) */
    sps__tmcur_t cur;         /* where in tm */
    uint32_t npend;           /* values of the value group just read, for
                                 the record that follows it */
    uint64_t vals[SPS__VAL_MAX];
    /* delta groups (core.h, sps__mem_delta): a record without a group
     * has the readings of the last one, its peak excess 0 */
    uint32_t nlast;
    uint64_t last[SPS__VAL_MAX];
} sps__rd_t;
SPS__HIDDEN void sps__rd_init(sps__rd_t *r, const sps__seg_t *segs,
                              size_t nsegs, const sps__stack_t *inject,
                              const sps__timemap_t *tm);
/* 1 and *ev filled, 0 at the end, or a negative SPS_E* code.  Inline: the
 * analysis and the merged pass call it for every record, and finalize's
 * speed is theirs; the fast path takes a plain record of the current
 * block, sps__rd_next_slow (stream.c) everything else. */
SPS__HIDDEN int sps__rd_next_slow(sps__rd_t *r, sps__ev_t *ev);
/* The event of the plain record w, index idx of r's current segment (both
 * paths of sps__rd_next decode with it). */
SPS__INLINE void sps__rd_decode(sps__rd_t *r, uint64_t w, uint32_t idx, sps__ev_t *ev) {
    uint32_t tag = (uint32_t)(w >> 32);
    uint64_t raw = ((uint64_t)r->hi << 32) | (uint32_t)w;
    ev->ns = (uint64_t)sps__tmcur_ns(&r->cur, r->tm, raw);
    ev->seq = r->seg->seq0 + idx;
    ev->region = tag >> 1;
    ev->is_end = (int)(tag & 1u);
    ev->nvals = 0;
}
SPS__INLINE int sps__rd_next(sps__rd_t *r, sps__ev_t *ev) {
    if (SPS__LIKELY(r->i < r->n && !r->inject)) {
        uint32_t idx = r->base + r->i;
        uint64_t w = r->rec[r->i];
        /* not a HI record nor a value group (SPS__REC_VAL_TAG) */
        if (SPS__LIKELY((uint32_t)(w >> 32) < SPS__REC_VAL_TAG && idx >= r->seg->skip)) {
            r->i++;
            sps__rd_decode(r, w, idx, ev);
            if (r->nlast) { /* delta groups: the readings carried forward */
                ev->nvals = r->nlast;
                ev->vals = r->last;
            }
            return 1;
        }
    }
    return sps__rd_next_slow(r, ev);
}
SPS__HIDDEN void sps__rd_free(sps__rd_t *r);

/* The one fold (src/model/fold.c; the rule is written there once).  A
 * closed frame is reported to fn with its end, its self time and its depth
 * (its index in the stack: the parent, if any, is s->f[depth - 1]).  f
 * may be the stack's own slot just above the top: fn reads the stack but
 * never pushes onto it. */
typedef void (*sps__close_fn)(void *ctx, const sps__frame_t *f, uint64_t end,
                              uint64_t self, size_t depth);
/* Begin/end streams: applies end(region) at ts to s.  Returns the number of
 * repairs (misuse): 1 for an end with no open frame of region, else the
 * frames above it that were closed with it. */
static inline int sps__fold_end(sps__stack_t *s, uint32_t region, uint64_t ts,
                                sps__close_fn fn, void *ctx);
/* Pops the top frame of s, which ends at ts, and reports it to fn: the
 * parent's child time grows by the call's duration (a begin/end stream's
 * call lies inside its parent; interval streams close only what they
 * contain).  Inline, with sps__fold_end: aggregate mode runs them on the
 * recording thread for every end, where the callback inlines too. */
static inline void sps__fold_close(sps__stack_t *s, const sps__frame_t *f,
                                   uint64_t ts, sps__close_fn fn, void *ctx);
static inline void sps__fold_close_top(sps__stack_t *s, uint64_t ts,
                                       sps__close_fn fn, void *ctx) {
    /* the popped slot itself, not a copy: a leaf pushed moments before,
     * read back 16 bytes at a time, stalled on its 8-byte stores (a fifth
     * of the view index's build); fn never pushes onto s (sps__close_fn) */
    const sps__frame_t *f = &s->f[--s->n];
    sps__fold_close(s, f, ts, fn, ctx);
}
/* Closes f, a frame just above the top of s (popped, or never pushed: the
 * merged pass's leaf calls), at ts: the rule of sps__fold_close_top. */
static inline void sps__fold_close(sps__stack_t *s, const sps__frame_t *f,
                                   uint64_t ts, sps__close_fn fn, void *ctx) {
    uint64_t d = ts > f->start ? ts - f->start : 0;
    if (s->n > 0) s->f[s->n - 1].child += d;
    fn(ctx, f, ts, d > f->child ? d - f->child : 0, s->n);
}
static inline int sps__fold_end(sps__stack_t *s, uint32_t region, uint64_t ts,
                                sps__close_fn fn, void *ctx) {
    size_t k = s->n;
    while (k > 0 && s->f[k - 1].region != region) k--;
    if (k == 0) return 1;
    int misuse = (int)(s->n - k);
    while (s->n >= k) sps__fold_close_top(s, ts, fn, ctx);
    return misuse;
}
/* Interval streams: places span f (f.start, f.end set; spans of one lane
 * in start order, longer first on ties), closing the frames it outlives.
 * Returns the number of partial overlaps it met, or -1 (SPS_ENOMEM: f not
 * placed). */
static inline int sps__fold_span(sps__stack_t *s, sps__frame_t f,
                                 sps__close_fn fn, void *ctx) {
    /* inline: the frame is built in place; passed by value to a function
     * of its own, its 64 bytes were stored field by field and read back
     * at once 16 at a time, a store-forwarding stall that made this call
     * a quarter of the viewer's index build and of the timeline readers */
    int overlaps = 0;
    if (f.end < f.start) f.end = f.start;
    while (s->n) {
        const sps__frame_t *top = &s->f[s->n - 1];
        if (top->end <= f.start) {
            sps__fold_close_top(s, top->end, fn, ctx);
        } else if (f.end > top->end) {
            overlaps++;
            sps__fold_close_top(s, top->end, fn, ctx);
        } else {
            break;
        }
    }
    f.child = f.prior; /* what a carried call's earlier children took */
    return sps__stack_push(s, f) ? -1 : overlaps;
}
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
 * SPS_ENOMEM.  add (prior: the ns a carried call's children spent in an
 * earlier file, sps__tl_span_t.prior_ns, taken from its self time):
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
                                     int64_t start, int64_t end, int64_t prior);
SPS__HIDDEN void sps__fold_tl_finish(sps__fold_tl_t *t);
SPS__HIDDEN void sps__fold_tl_free(sps__fold_tl_t *t);

/* A histogram of durations (src/model/hist.c): the median and a rank test
 * for comparisons that a few outliers must not sway (diff, check).
 * Buckets exact below 32 ns, then 32 per octave (2.2% wide at most), kept
 * only over the range of buckets seen (a region's durations span a few
 * octaves: a few KiB).  Zero it to start; add: one duration (0, or
 * SPS_ENOMEM: not counted); quantile: q in [0, 1], interpolated within
 * its bucket, NaN when empty; mann_whitney_z: the normal score of
 * Mann-Whitney's U for "b's durations are larger than a's" (ties within a
 * bucket counted half, tie-corrected variance), > 0 when b is slower, NaN
 * when either is empty; free: its memory (zeroed again). */
#define SPS__HIST_BUCKETS (32 + 59 * 32)
typedef struct sps__hist {
    uint64_t n;
    uint32_t lo, len;  /* count[k] is bucket lo + k */
    uint64_t *count;
} sps__hist_t;
SPS__HIDDEN int sps__hist_add(sps__hist_t *h, uint64_t ns);
SPS__HIDDEN void sps__hist_free(sps__hist_t *h);
/* Adds from's counts to into (0 or SPS_ENOMEM: into unchanged). */
SPS__HIDDEN int sps__hist_merge(sps__hist_t *into, const sps__hist_t *from);
SPS__HIDDEN double sps__hist_quantile(const sps__hist_t *h, double q);
SPS__HIDDEN double sps__hist_mann_whitney_z(const sps__hist_t *a, const sps__hist_t *b);

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
SPS__HIDDEN int32_t sps__tree_find(sps__tree_t *t, int32_t parent,
                                   uint32_t region);
/* The node of region under node parent (-1: a root) of t, made when new;
 * -1 on ENOMEM.  Inline with a one-entry cache per parent: a loop calls
 * the same child of the same parent again and again. */
SPS__INLINE int32_t sps__tree_node(sps__tree_t *t, int32_t parent, uint32_t region) {
    uint64_t c = parent >= 0 ? t->n[parent].last : t->root_last;
    if ((uint32_t)(c >> 32) == region + 1) return (int32_t)(uint32_t)c;
    int32_t i = sps__tree_find(t, parent, region);
    if (i >= 0) { /* t->n may have moved */
        uint64_t *slot = parent >= 0 ? &t->n[parent].last : &t->root_last;
        *slot = (uint64_t)(region + 1) << 32 | (uint32_t)i;
    }
    return i;
}
SPS__HIDDEN void sps__tree_free(sps__tree_t *t);
SPS__HIDDEN int sps__acc_reserve(uint32_t r);
/* Under the lock: adds an anchor and brings thread t's analysis up to
 * where t wrote just before it (sps__analyze_all: every thread's). */
SPS__HIDDEN int sps__analyze_thread(sps__thr_t *t);
/* The background analysis the spill writer runs in its spare time
 * (analyze.c; the api layer registers it as sps__bg_ops at setup). */
SPS__HIDDEN extern const sps__bg_ops_t sps__bg_analyze_ops;
/* When the background analysis runs (analyze.c says why): SPS__BG_TRIAL
 * (the default) while the recorders are quiet, and while they are busy if
 * a trial shows that it does not slow them (bg_trial.c); SPS__BG_ALWAYS
 * whenever the writer is idle; SPS__BG_QUIET only while they are quiet. */
enum { SPS__BG_TRIAL, SPS__BG_ALWAYS, SPS__BG_QUIET };
SPS__HIDDEN extern int sps__bg_mode;

/* model/bg_trial.c: a trial of the background analysis while the
 * recorders are busy.  Zero-initialized: no trial yet. */
typedef struct sps__bg_trial {
    int64_t t0;      /* the current window's start (ns) */
    uint64_t r0;     /* records retired then */
    uint64_t rec[2]; /* records retired in the windows without [0] and with [1] analysis */
    int64_t ns[2];   /* those windows' lengths */
    int on;          /* the current window allows analysis */
    int windows;     /* windows done in this trial */
    int verdict;     /* the last trial's: 1 allowed, 0 refused; -1 while one runs */
    int64_t until;   /* the verdict holds until then */
    uint64_t trials, allowed; /* trials ended, and how many allowed (verbose, tests) */
} sps__bg_trial_t;
/* Whether the background analysis may run now, at now (ns, monotonic),
 * with `retired` records retired by the recorders so far (a count that
 * only grows), while they are busy: 1 or 0.  Call it each time the
 * writer would analyze; it runs the trials. */
SPS__HIDDEN int sps__bg_trial_allow(sps__bg_trial_t *t, int64_t now, uint64_t retired);
/* Under the lock: the session's trials so far, and how many allowed. */
SPS__HIDDEN void sps__bg_trials(uint64_t *trials, uint64_t *allowed);
/* Records to analyze from which an analysis uses a second core:
 * sps__analyze_all splits the threads between two cores, and one
 * thread's analysis reads on a helper while it folds (analyze.c; the api
 * layer sets it at setup, from the default or SPANSCOPE_ANALYSIS_THREADS;
 * tests lower it). */
SPS__HIDDEN extern uint64_t sps__an_split_min;
SPS__HIDDEN extern const uint64_t sps__an_split_default;
SPS__HIDDEN extern uint64_t sps__an_splits; /* analyses split so far (tests) */
SPS__HIDDEN extern uint64_t sps__an_readaheads; /* ... read on a helper (tests) */

/* Reading on a helper thread while the caller folds (model/ahead.c).
 * fill decodes at most max events into blk, *n of them, and returns 1
 * (more to come), 0 (the end) or a negative SPS_E* code; the helper calls
 * it until it returns <= 0, and it alone touches ctx's reader meanwhile.
 * sps__ahead_allowed: whether this process may start a helper (two CPUs
 * or more; none in a forked child of a threaded process, as the spill
 * writer's rule).  sps__ahead_start: NULL when no helper could start (the
 * caller reads for itself).  sps__ahead_take: the next block of events,
 * *n of them, valid until the next take; NULL once every block is taken.
 * sps__ahead_end: stops the helper if it is still reading, joins and
 * frees it; returns fill's last code, or 1 when it was stopped before the
 * end (ctx's reader is the caller's again). */
typedef int (*sps__ahead_fill_fn)(void *ctx, sps__ev_t *blk, uint32_t max, uint32_t *n);
typedef struct sps__ahead sps__ahead_t;
SPS__HIDDEN int sps__ahead_allowed(void);
SPS__HIDDEN sps__ahead_t *sps__ahead_start(sps__ahead_fill_fn fill, void *ctx);
SPS__HIDDEN const sps__ev_t *sps__ahead_take(sps__ahead_t *a, uint32_t *n);
SPS__HIDDEN int sps__ahead_end(sps__ahead_t *a);

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
    uint64_t prior_child; /* a call carried across a checkpoint: the time its
                             children spent in earlier periods (in self's
                             account already); else 0 */
    uint32_t nvals;       /* at its end: values (cfg.track), 0 none */
    const uint64_t *vown, *vself; /* [nvals] own and self values (model.h,
                                    values per span) */
    const uint64_t *vend;         /* [nvals] the readings at its end
                                     (cumulative; the peak slot: 0) */
} sps__call_t;

/* model/fold.c: merges nsteps step spans into the *n spans of *spans
 * (see the contract there).  0 or SPS_ENOMEM (then *spans is unchanged). */
SPS__HIDDEN int sps__steps_nest(sps_span_t **spans, size_t *n,
                                const sps__step_span_t *steps, size_t nsteps);
/* The merged pass (period.c).  begin gets calls with end == 0 in start
 * order; end gets completed calls in end order.  Either may be NULL; a
 * non-zero return stops the pass. */
typedef struct sps__pass_cb {
    void *ctx;
    int (*begin)(void *ctx, const sps__call_t *c);
    int (*end)(void *ctx, const sps__call_t *c);
} sps__pass_cb_t;
SPS__HIDDEN int sps__pass_run(const sps__snap_t *snap,
                              const sps__pass_cb_t *cb, uint64_t *misuse);
SPS__HIDDEN size_t sps__collect_calls(const sps__snap_t *snap, uint32_t r,
                                      int64_t *starts, int64_t *durs,
                                      size_t cap);

/* model/paths.c: a period's calls pooled by call path (adjacent repeats
 * of a region collapsed), scope-profiler's region table rows.  Times ns. */
typedef struct sps__path {
    int32_t parent;          /* index of the parent path, -1 for a root */
    uint32_t region;         /* region id of the path's last name */
    uint64_t calls;
    int64_t total_ns;        /* durations of the calls not nested in one of
                                the same path (all of them without recursion) */
    int64_t duration_sum_ns; /* every call's duration */
    int64_t self_ns;         /* what the interval rule over the file gives */
    int64_t min_ns, max_ns;
    int64_t first_start_ns, first_ns; /* the earliest call: start, duration */
    int64_t last_end_ns, last_ns;     /* the latest-ending call: end, duration */
    int64_t coverage_ns;     /* union of the calls' intervals, all threads */
    int recursive;           /* a call of it ran inside another of it */
    uint32_t active;         /* while the pass runs: calls open */
    int64_t block_start;     /* while the pass runs: start of the union's block */
} sps__path_t;
/* Runs the merged pass over s into its call paths: *out (malloc'd, the
 * caller frees it; NULL when *n is 0), *n of them, parents before
 * children, in order of their first begin.  0 or SPS_ENOMEM. */
SPS__HIDDEN int sps__paths_pass(const sps__snap_t *s, sps__path_t **out, size_t *n);

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
    sps__acc_t *cum, *per;    /* [acc_cap] by region id, ns: the periods
                                 taken, and the current one (tree nodes
                                 alike); the session's = cum merged with per */
    uint32_t acc_cap;
    /* [acc_cap] threads that ran each region, in the session and in the
     * period, and those that ran any (thr_t's an_seen) */
    uint32_t *lanes_cum, *lanes_per;
    uint32_t threads_cum, threads_per;
    sps__tree_t tree;
} sps__analysis_t;
SPS__HIDDEN extern sps__analysis_t sps__an;
SPS__HIDDEN void sps__analysis_reset(void);
SPS__HIDDEN void sps__analyze_all(void);
SPS__HIDDEN sps__acc_t sps__cum_acc(sps_region_t r);
/* Node i of sps__an.tree over the whole session (cum merged with per). */
SPS__HIDDEN sps__acc_t sps__node_cum(size_t i);
SPS__HIDDEN int sps__analysis_take(sps__snap_t *s);
SPS__HIDDEN void sps__analysis_merge(sps__snap_t *s, const sps__snap_t *older);
SPS__HIDDEN int sps__analysis_describe(sps__snap_t *s);

/* ======================================================================== */
/* model: the per-call queries' collector (src/model/collect.c)              */
/* ======================================================================== */

/* Under the session lock, for sps_region_calls.  The calls of every region
 * asked for in the period are kept, per thread in begin order, and brought
 * up to date by each query from the records written since the previous
 * one; what a query returns is what a merged pass over the period
 * (sps__collect_calls) would return.  Memory: 16 bytes per call of the
 * regions asked for, dropped with the period and the session.
 *
 * mark: before the query's anchor, records where each thread's records
 * end (the query reads up to there).  region: then, after the anchor,
 * brings region r's calls up to date and copies the first cap of them
 * (starts and durs in ns, either may be NULL; the pending period's first,
 * as sps_region_calls documents) and sets *n to how many there are; 0 or
 * an SPS_E code (then nothing is kept: the caller falls back to a full
 * pass).  reset: forgets everything (the session's recording is
 * forgotten).  info: the collector's counters and memory. */
SPS__HIDDEN void sps__collect_mark(void);
SPS__HIDDEN int sps__collect_region(uint32_t r, int64_t *starts, int64_t *durs,
                                    size_t cap, size_t *n);
SPS__HIDDEN void sps__collect_reset(void);
SPS__HIDDEN void sps__collect_info(sps_query_info_t *out);

/* ======================================================================== */
/* model: values per span (src/model/values.c)                              */
/* ======================================================================== */

/* The value fold: what the one fold does for time, for the values read
 * with each record (cfg.track).  A span's own value is its end's reading
 * minus its begin's and its self value its own minus its direct
 * children's (SPS__VAL_SUM); a peak (SPS__VAL_EXCESS) is the highest the
 * thread's live bytes rose above their level at the span's begin, own
 * over the whole span, self outside its children.  A lane keeps one
 * sps__vframe_t per open frame, by depth, beside the fold's stack; its
 * consumer calls sps__vlane_begin for each begin at the depth it is
 * pushed at and sps__vlane_close from its close callback (same depth),
 * with the event being handled.  A frame whose begin had no values (a
 * call carried in from an earlier period, or a session without track)
 * has none: own and self 0, and nothing added to its parent. */
typedef struct sps__vframe {
    uint64_t begin[SPS__VAL_MAX];
    uint64_t child[SPS__VAL_MAX];
    int64_t live0;      /* live bytes at the begin */
    int64_t peak_self;  /* highest live bytes outside the children */
    int64_t peak;       /* highest live bytes, children included */
    int has;
} sps__vframe_t;

typedef struct sps__vlane {
    uint32_t n;          /* values per record (0: the lane has none) */
    int excess;          /* index of the SPS__VAL_EXCESS value, -1: none */
    sps__vframe_t *f;    /* by depth */
    size_t cap;
    int64_t last_live;   /* live bytes at the lane's last record */
    uint64_t seg_seq;    /* the event whose segment was credited last */
    int seg_done;
    uint64_t own[SPS__VAL_MAX], self[SPS__VAL_MAX]; /* the last close's */
} sps__vlane_t;

/* Starts v for n values (n == 0: an inert lane) of the running session's
 * kinds (sps__values_kind). */
SPS__HIDDEN void sps__vlane_init(sps__vlane_t *v, uint32_t n);
SPS__HIDDEN void sps__vlane_free(sps__vlane_t *v);
/* A begin (event e) pushed at depth.  0 or SPS_ENOMEM. */
SPS__HIDDEN int sps__vlane_begin(sps__vlane_t *v, size_t depth, const sps__ev_t *e);
/* The frame at depth closes at event e (an end): fills v->own and
 * v->self and credits the parent.  Returns 1 when the frame has values. */
SPS__HIDDEN int sps__vlane_close(sps__vlane_t *v, size_t depth, const sps__ev_t *e);

#endif /* SPS_MODEL_H */
