/* steps.c -- ProfilerStep#N spans among the spans of a recording.
 *
 * Steps (sps_step) are not records, so the fold that gives spans their
 * parents never sees them.  This file places them among the folded spans
 * with the event model's one nesting rule, and nothing else re-derives
 * nesting: the parents the fold gave stay, except where a step comes
 * between a span and its parent.
 *
 * It is kept one function with one contract (sps__steps_nest) so that it
 * can move onto the fold (src/model/fold.c) as a pass over the same start
 * order with the same per-thread stack. */
#include "sps_int.h"

#include <stdlib.h>

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
 *   - pop while the top ends before the span at hand does (torch's event
 *     tree rule: a span ending after the innermost open span's end is not
 *     its child);
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
        ostack_t *s = &st[is_step ? p->thread : f->thread];
        while (s->n && s->v[s->n - 1].end < end) s->n--;
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
