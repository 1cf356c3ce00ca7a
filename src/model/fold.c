/* fold.c -- THE fold: how spans nest, what their self time is, and the
 * per-region statistics.  Every consumer of a recording (the incremental
 * analyzer, the merged pass of a finalize, aggregate mode, the HDF5 and
 * trace readers, merge, report, diff, html, both Python faces) gives its
 * spans to the functions here; none decides nesting on its own.
 *
 * The rule, in one place (docs/design.md, "The one fold"):
 *
 *   Calls nest on their lane (a thread of a rank).  A call's parent is the
 *   innermost call open on its lane when it starts; self time is its
 *   duration minus the time its direct children spent inside it.
 *
 *   Begin/end streams (the core's records, sps__fold_end): begin pushes a
 *   frame; end(r) closes the innermost open frame of r, and every frame
 *   above it ends at the same time (each counted as a repair: misuse);
 *   an end with no open frame of r is ignored (misuse).  Calls still open
 *   when a stream stops (a checkpoint) stay open: the caller carries them
 *   into the next period, which writes them whole, with the time their
 *   children spent in the earlier period (/carried in the file), so their
 *   self time is the same live and in every file view.
 *
 *   Interval streams (files and traces, sps__fold_span): spans come in
 *   start order per lane, longer first on equal starts.  Before a span is
 *   placed, every open span that ended at or before its start is closed.
 *   A span that ends after the innermost open span is not its child (a
 *   partial overlap: torch's event-tree rule): that open span is closed
 *   and counted as an overlap, and the test repeats one level out.  So a
 *   child always lies inside its parent and self time is never negative.
 *   Zero-length spans are spans: one at its parent's start is its child,
 *   one at its parent's end is not.
 *
 *   Steps (ProfilerStep#N, sps__steps_nest) are placed after the fold among
 *   its spans: a step's parent is the innermost span containing it
 *   entirely; spans inside it whose parent was the step's parent (or none)
 *   become its children; a span open across a step boundary stays whole
 *   and keeps its parent.
 *
 *   Statistics per region: count, total, self, min, max, first/last,
 *   mean and variance by a shifted sum merged with Chan's formula. */
#include "model/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Accumulators                                                              */
/* ------------------------------------------------------------------------ */

/* Mean and sum of squared deviations (m2) of a, in a's unit. */
static void acc_moments(const sps__acc_t *a, double *mean, double *m2) {
    double n = (double)a->count;
    *mean = n ? (double)a->shift + a->s1 / n : 0.0;
    *m2 = n ? a->s2 - a->s1 * a->s1 / n : 0.0;
    if (*m2 < 0) *m2 = 0;
}

void sps__acc_moments(const sps__acc_t *a, double *mean, double *m2) {
    acc_moments(a, mean, m2);
}

void sps__acc_merge(sps__acc_t *into, const sps__acc_t *from) {
    if (from->count == 0) return;
    if (into->count == 0) {
        *into = *from;
        return;
    }
    double ma, m2a, mb, m2b;
    acc_moments(into, &ma, &m2a);
    acc_moments(from, &mb, &m2b);
    double na = (double)into->count, nb = (double)from->count, n = na + nb;
    double delta = mb - ma, mean = ma + delta * nb / n;
    double m2 = m2a + m2b + delta * delta * na * nb / n;
    into->count += from->count;
    into->total += from->total;
    into->self += from->self;
    if (from->min < into->min) into->min = from->min;
    if (from->max > into->max) into->max = from->max;
    if (from->first_start < into->first_start) {
        into->first_start = from->first_start;
        into->first_dur = from->first_dur;
    }
    if (from->last_start >= into->last_start) {
        into->last_start = from->last_start;
        into->last_dur = from->last_dur;
    }
    if (from->end_max > into->end_max) into->end_max = from->end_max;
    /* re-express as shifted sums around the merged mean */
    into->shift = (uint64_t)llround(mean);
    double off = mean - (double)into->shift;
    into->s1 = off * n;
    into->s2 = m2 + off * off * n;
}

void sps__acc_stats(const sps__acc_t *a, sps_stats_t *out) {
    double mean, m2;
    acc_moments(a, &mean, &m2);
    out->num_calls = a->count;
    out->total_ns = (int64_t)a->total;
    out->self_ns = (int64_t)a->self;
    out->min_ns = a->count ? (int64_t)a->min : 0;
    out->max_ns = a->count ? (int64_t)a->max : 0;
    out->mean_ns = mean;
    out->var_ns2 = a->count > 1 ? m2 / (double)(a->count - 1) : 0.0;
}

void sps__acc_to_ns(sps__acc_t *a, const sps__timemap_t *tm) {
    if (!a->count || !sps__use_tsc) return;
    double k = sps__timemap_scale(tm);
    a->total = (uint64_t)llround((double)a->total * k);
    a->self = (uint64_t)llround((double)a->self * k);
    a->min = (uint64_t)llround((double)a->min * k);
    a->max = (uint64_t)llround((double)a->max * k);
    a->first_dur = (uint64_t)llround((double)a->first_dur * k);
    a->last_dur = (uint64_t)llround((double)a->last_dur * k);
    a->shift = (uint64_t)llround((double)a->shift * k);
    a->s1 *= k;
    a->s2 *= k * k;
    a->first_start = (uint64_t)sps__timemap_ns(tm, a->first_start);
    a->last_start = (uint64_t)sps__timemap_ns(tm, a->last_start);
    a->end_max = (uint64_t)sps__timemap_ns(tm, a->end_max);
}

/* ------------------------------------------------------------------------ */
/* Begin/end streams                                                         */
/* ------------------------------------------------------------------------ */

/* sps__fold_end and its close_top are inline in model.h: aggregate mode
 * runs them on the recording thread for every end. */

/* ------------------------------------------------------------------------ */
/* Interval streams                                                          */
/* ------------------------------------------------------------------------ */

void sps__fold_flush(sps__stack_t *s, sps__close_fn fn, void *ctx) {
    while (s->n) sps__fold_close_top(s, s->f[s->n - 1].end, fn, ctx);
}

int sps__fold_overlaps(sps__stack_t *s, uint64_t start, uint64_t end,
                       sps__close_fn fn, void *ctx) {
    while (s->n && s->f[s->n - 1].end <= start) sps__fold_close_top(s, s->f[s->n - 1].end, fn, ctx);
    return s->n && end > s->f[s->n - 1].end;
}

int sps__fold_keep(sps__stack_t *s, int64_t start, int64_t end) {
    uint64_t a = (uint64_t)start - (uint64_t)INT64_MIN; /* order-preserving */
    uint64_t b = (uint64_t)(end > start ? end : start) - (uint64_t)INT64_MIN;
    if (sps__fold_overlaps(s, a, b, sps__fold_ignore, NULL)) return 0;
    /* nothing left to close (sps__fold_span's loop would stop at once):
     * the frame goes on top, written in place */
    if (sps__stack_grow(s)) return -1;
    s->f[s->n++] = (sps__frame_t){.node = -1, .start = a, .end = b, .id = -1};
    return 1;
}

/* Frames of interval streams close at their own end; callers that only
 * need the stack's shape (timelines) pass this. */
void sps__fold_ignore(void *ctx, const sps__frame_t *f, uint64_t end,
                      uint64_t self, size_t depth) {
    (void)ctx, (void)f, (void)end, (void)self, (void)depth;
}

int64_t sps__fold_clip(int64_t cs, int64_t ce, int64_t ps, int64_t pe) {
    int64_t s = cs > ps ? cs : ps, e = ce < pe ? ce : pe;
    return e > s ? (int64_t)((uint64_t)e - (uint64_t)s) : 0;
}

/* ------------------------------------------------------------------------ */
/* Arrays of intervals                                                       */
/* ------------------------------------------------------------------------ */

/* qsort order: lane, start ascending, end descending (outer first), then
 * the caller's order. */
static int ival_cmp(const void *a, const void *b) {
    const sps__ival_t *x = a, *y = b;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (x->end != y->end) return x->end > y->end ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

typedef struct ival_out {
    sps__fold_out_t *out;
    const sps__stack_t *st;
} ival_out_t;

static void ival_close(void *ctx, const sps__frame_t *f, uint64_t end,
                       uint64_t self, size_t depth) {
    ival_out_t *o = ctx;
    (void)end;
    sps__fold_out_t *x = &o->out[f->seq];
    x->self = (int64_t)self;
    x->depth = (uint32_t)depth;
    x->parent = depth ? (int64_t)o->st->f[depth - 1].seq : -1;
}

int sps__fold_ivals(sps__ival_t *v, size_t n, sps__fold_out_t *out,
                    uint64_t *overlaps) {
    uint64_t ov = 0;
    for (size_t i = 0; i < n; i++) v[i].index = i;
    qsort(v, n, sizeof *v, ival_cmp);
    sps__stack_t st = {0};
    ival_out_t o = {out, &st};
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (i && (v[i].rank != v[i - 1].rank || v[i].thread != v[i - 1].thread))
            sps__fold_flush(&st, ival_close, &o);
        /* seq holds the caller's index of the span; times are shifted to
         * unsigned keeping their order */
        uint64_t s = (uint64_t)v[i].start - (uint64_t)INT64_MIN;
        uint64_t e = (uint64_t)v[i].end - (uint64_t)INT64_MIN;
        sps__frame_t f = {.region = v[i].region, .node = -1, .start = s, .end = e,
                          .seq = v[i].index, .id = -1};
        int k = sps__fold_span(&st, f, ival_close, &o);
        if (k < 0) rc = SPS_ENOMEM;
        else ov += (uint64_t)k;
    }
    if (!rc) sps__fold_flush(&st, ival_close, &o);
    sps__stack_free(&st);
    /* back to the caller's order */
    for (size_t i = 0; i < n;) {
        size_t j = v[i].index;
        if (j == i) { i++; continue; }
        sps__ival_t t = v[j];
        v[j] = v[i];
        v[i] = t;
    }
    if (overlaps) *overlaps = ov;
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Streams of timeline spans into statistics                                 */
/* ------------------------------------------------------------------------ */

/* int64 ns <-> the unsigned, order-preserving unit of frames. */
static uint64_t ns_key(int64_t t) { return (uint64_t)t - (uint64_t)INT64_MIN; }
static uint64_t key_ns(uint64_t k) { return k + (uint64_t)INT64_MIN; }

static void tl_close(void *ctx, const sps__frame_t *f, uint64_t end,
                     uint64_t self, size_t depth) {
    sps__fold_tl_t *t = ctx;
    (void)depth;
    if (f->region < t->nacc)
        sps__acc_add(&t->acc[f->region], key_ns(f->start), key_ns(end), self);
    if (f->node >= 0)
        sps__acc_add(&t->tree.n[f->node].cum, key_ns(f->start), key_ns(end), self);
}

int sps__fold_tl_init(sps__fold_tl_t *t, size_t nlanes, size_t nregions,
                      int with_tree) {
    memset(t, 0, sizeof *t);
    t->with_tree = with_tree;
    t->lanes = calloc(nlanes ? nlanes : 1, sizeof *t->lanes);
    t->acc = calloc(nregions ? nregions : 1, sizeof *t->acc);
    t->nlanes = nlanes;
    t->nacc = nregions;
    if (t->lanes && t->acc) return 0;
    sps__fold_tl_free(t);
    return SPS_ENOMEM;
}

int64_t sps__fold_tl_add(sps__fold_tl_t *t, uint32_t lane, uint32_t region,
                         int64_t start, int64_t end, int64_t prior) {
    if (lane >= t->nlanes || region >= t->nacc) return SPS_EINVAL;
    sps__stack_t *s = &t->lanes[lane];
    sps__frame_t f = {.region = region, .node = -1, .start = ns_key(start),
                      .end = ns_key(end > start ? end : start), .id = -1};
    f.prior = prior > 0 ? (uint64_t)prior : 0; /* children in an earlier file */
    int k = sps__fold_span(s, f, tl_close, t);
    if (k < 0) return SPS_ENOMEM;
    t->overlaps += (uint64_t)k;
    if (t->with_tree) { /* the node of its path: (parent's node, region) */
        int32_t parent = s->n >= 2 ? s->f[s->n - 2].node : -1;
        if ((s->f[s->n - 1].node = sps__tree_node(&t->tree, parent, region)) < 0)
            return SPS_ENOMEM;
    }
    return (int64_t)s->n - 1;
}

void sps__fold_tl_finish(sps__fold_tl_t *t) {
    for (size_t i = 0; i < t->nlanes; i++) sps__fold_flush(&t->lanes[i], tl_close, t);
}

void sps__fold_tl_free(sps__fold_tl_t *t) {
    for (size_t i = 0; t->lanes && i < t->nlanes; i++) sps__stack_free(&t->lanes[i]);
    free(t->lanes);
    free(t->acc);
    sps__tree_free(&t->tree);
    memset(t, 0, sizeof *t);
}

/* ------------------------------------------------------------------------ */
/* Spans placed after the fold: ProfilerStep#N                               */
/* ------------------------------------------------------------------------ */

/* Steps (sps_step) are not records, so the begin/end fold never sees them:
 * they are placed among the spans it folded by the interval rule, and the
 * parents it gave stay, except where a step comes between a span and its
 * parent (sps__steps_nest's contract says exactly how). */

/* Steps in start order, the longer first at one start. */
static int step_cmp(const void *a, const void *b) {
    const sps__step_span_t *x = *(const sps__step_span_t *const *)a;
    const sps__step_span_t *y = *(const sps__step_span_t *const *)b;
    if (x->start_ns != y->start_ns) return x->start_ns < y->start_ns ? -1 : 1;
    return x->end_ns > y->end_ns ? -1 : x->end_ns < y->end_ns;
}

/* Whether step s goes before folded span in[i] in the merged order: it
 * starts earlier, or at the same instant unless a span of its thread
 * starting then ends later (that span encloses the step, so comes first;
 * the fold ordered the spans of one start parent first). */
static int step_first(const sps__step_span_t *s, const sps_span_t *in, size_t i, size_t n) {
    if (s->start_ns != in[i].start_ns) return s->start_ns < in[i].start_ns;
    for (; i < n && in[i].start_ns == s->start_ns; i++)
        if (in[i].thread == s->thread && in[i].end_ns > s->end_ns) return 0;
    return 1;
}

/* An open span on a thread's stack, with the innermost step and the
 * innermost folded span at or below it (output indexes, -1: none). */
typedef struct open {
    int64_t end;
    int64_t step_below, span_below;
} open_t;

typedef struct ostack {
    open_t *v;
    size_t n, cap;
} ostack_t;

/* Merges steps[0..nsteps) into the n spans of *spans.
 *
 * In:  *spans, malloc'd, n spans in start order (an enclosing span before
 *      the spans inside it) as the fold made them: parent (index or -1),
 *      self, depth; steps, any order, each with its region id set; step
 *      intervals of one thread do not overlap (they come from one
 *      thread's successive marks).
 * Out: on success *spans is a new malloc'd array (the old one is freed) of
 *      *n = n + nsteps spans in start order, enclosing first; the steps
 *      have stack 0 and seq SPS_SEQ_NONE.  On failure (SPS_ENOMEM) *spans
 *      and *n are unchanged.
 *
 * The merged start order keeps the folded spans as given and puts each
 * step (sorted by start, then end descending) before the first span that
 * starts after it, or with it unless that span's thread's span of that
 * start ends later (step_first): linear, no sort of the spans.  Then the
 * rule, per thread, over that order, with a stack of the open spans, each
 * containing the next:
 *   - pop what ended at or before the span's start, and while the top ends
 *     before the span at hand does (the fold's interval rule: a span ending
 *     after the innermost open span's end is not its child);
 *   - a step's parent is the innermost folded span left on the stack: the
 *     innermost span containing it entirely;
 *   - a folded span lying inside a step S (S on the stack) becomes S's
 *     child if its folded parent is S's parent or none; otherwise it keeps
 *     its folded parent -- a parent inside S (then the parent is S's child
 *     or deeper), or one that crosses S's boundary (a span open across
 *     sps_step stays whole, and is no child of the step).
 * Self time, the model's rule: a step's is its duration minus its direct
 * children's; its parent's loses the step's duration and gets back its
 * adopted children's.  A folded span's depth grows by the steps among its
 * ancestors; a step's depth is its parent's + 1, or 0.
 *
 * When a folded span crosses the boundary of a step inside their common
 * parent, the two overlap as siblings and the parent's self time counts the
 * overlap twice (duration minus each direct child): the cost of keeping
 * spans whole. */
int sps__steps_nest(sps_span_t **spans, size_t *n_io,
                    const sps__step_span_t *steps, size_t nsteps) {
    if (!nsteps) return 0;
    const sps_span_t *in = *spans;
    size_t n = *n_io, m = n + nsteps;
    uint32_t nthreads = 0;
    for (size_t i = 0; i < n; i++)
        if (in[i].thread + 1 > nthreads) nthreads = in[i].thread + 1;
    for (size_t k = 0; k < nsteps; k++)
        if (steps[k].thread + 1 > nthreads) nthreads = steps[k].thread + 1;
    size_t *src = malloc(m * sizeof *src); /* output -> folded (< n) or n + step */
    const sps__step_span_t **sorted = malloc(nsteps * sizeof *sorted);
    int64_t *out_of = malloc((n + 1) * sizeof *out_of); /* folded -> output */
    uint8_t *adopted = calloc(m, 1);                   /* by output index */
    uint32_t *above = malloc(m * sizeof *above); /* steps among ancestors */
    sps_span_t *out = malloc(m * sizeof *out);
    ostack_t *st = calloc(nthreads, sizeof *st);
    int rc = SPS_ENOMEM;
    if (!src || !sorted || !out_of || !adopted || !above || !out || !st) goto done;
    /* the merged order: the folded spans as given, the steps sorted among them */
    for (size_t k = 0; k < nsteps; k++) sorted[k] = &steps[k];
    qsort(sorted, nsteps, sizeof *sorted, step_cmp);
    for (size_t o = 0, i = 0, k = 0; o < m; o++)
        src[o] = k < nsteps && (i == n || step_first(sorted[k], in, i, n))
                     ? n + (size_t)(sorted[k++] - steps)
                     : i++;

    /* parents; self as the fold gave it (steps: their whole duration) */
    for (size_t o = 0; o < m; o++) {
        int is_step = src[o] >= n;
        const sps__step_span_t *p = is_step ? &steps[src[o] - n] : NULL;
        const sps_span_t *f = is_step ? NULL : &in[src[o]];
        int64_t end = is_step ? p->end_ns : f->end_ns;
        int64_t start = is_step ? p->start_ns : f->start_ns;
        ostack_t *s = &st[is_step ? p->thread : f->thread];
        /* the fold's interval rule: close what ended at or before the start,
         * and what the span outlives (a partial overlap) */
        while (s->n && (s->v[s->n - 1].end <= start || s->v[s->n - 1].end < end)) s->n--;
        const open_t *top = s->n ? &s->v[s->n - 1] : NULL;
        if (is_step) {
            out[o] = (sps_span_t){p->start_ns, p->end_ns, p->end_ns - p->start_ns,
                                  top ? top->span_below : -1, p->region, p->thread,
                                  0, 0, SPS_SEQ_NONE};
        } else {
            out_of[src[o]] = (int64_t)o;
            out[o] = *f;
            int64_t p = f->parent >= 0 ? out_of[f->parent] : -1;
            int64_t step = top ? top->step_below : -1;
            if (step >= 0 && (p < 0 || p == out[step].parent)) {
                p = step;
                adopted[o] = 1;
            }
            out[o].parent = p;
        }
        if (s->n == s->cap) {
            size_t cap = s->cap ? s->cap * 2 : 16;
            open_t *v = realloc(s->v, cap * sizeof *v);
            if (!v) goto done;
            s->v = v;
            s->cap = cap;
        }
        s->v[s->n++] = (open_t){end, is_step ? (int64_t)o : (top ? top->step_below : -1),
                                is_step ? (top ? top->span_below : -1) : (int64_t)o};
    }
    /* self and depth, in output order: parents come before children */
    for (size_t o = 0; o < m; o++) {
        sps_span_t *x = &out[o];
        int64_t d = x->end_ns - x->start_ns, p = x->parent;
        int is_step = src[o] >= n;
        if (adopted[o]) {
            out[p].self_ns -= d; /* the step's direct child now ... */
            if (in[src[o]].parent >= 0) /* ... no longer its fold parent's */
                out[out[p].parent].self_ns += d;
        }
        if (is_step && p >= 0) out[p].self_ns -= d;
        above[o] = p < 0 ? 0 : above[p] + (src[p] >= n);
        if (is_step) x->depth = p >= 0 ? out[p].depth + 1 : 0;
        else x->depth += above[o]; /* the fold's depth, plus steps around */
    }
    free((void *)in);
    *spans = out;
    *n_io = m;
    out = NULL;
    rc = 0;
done:
    if (st)
        for (uint32_t t = 0; t < nthreads; t++) free(st[t].v);
    free(st);
    free(out);
    free(adopted);
    free(above);
    free(out_of);
    free(sorted);
    free(src);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* The call tree                                                             */
/* ------------------------------------------------------------------------ */

/* sps__tree_node's lookup (model.h): the index, then a new node. */
int32_t sps__tree_find(sps__tree_t *t, int32_t parent, uint32_t region) {
    sps__hprobe_t p = sps__htab_probe(&t->index, sps__hash_pair32((uint32_t)parent, region));
    for (uint32_t i; sps__htab_next(&t->index, &p, &i);)
        if (t->n[i].parent == parent && t->n[i].region == region) return (int32_t)i;
    if (sps__htab_make_room(&t->index, &p)) return -1;
    if (t->len == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        sps__tree_node_t *v = realloc(t->n, cap * sizeof *v);
        if (!v) return -1;
        t->n = v;
        t->cap = cap;
    }
    t->n[t->len] = (sps__tree_node_t){.parent = parent, .region = region};
    sps__htab_put(&t->index, &p, (uint32_t)t->len);
    return (int32_t)t->len++;
}

void sps__tree_free(sps__tree_t *t) {
    free(t->n);
    sps__htab_free(&t->index);
    memset(t, 0, sizeof *t);
}
