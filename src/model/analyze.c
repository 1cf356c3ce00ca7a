/* analyze.c -- statistics accumulators, nesting, the live call tree, and the
 * incremental analyzer that keeps session statistics up to date.
 *
 * Nesting rule (one rule, used by every consumer so they always agree):
 *   begin(r) pushes a frame.  end(r) closes the innermost open frame of r;
 *   frames above it are closed at the same time and counted as misuse.  An
 *   end with no open frame of r is ignored and counted as misuse.  A region
 *   id that was never handed out is ignored and counted as misuse. */
#include "sps_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Accumulators                                                              */
/* ------------------------------------------------------------------------ */

/* Adds one call [start, end) with self time self to a (ns, or ticks for
 * aggregate mode's per-thread accumulators). */
void sps__acc_add(sps__acc_t *a, uint64_t start, uint64_t end, uint64_t self) {
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

/* Mean and sum of squared deviations (m2) of a, in a's unit. */
static void acc_moments(const sps__acc_t *a, double *mean, double *m2) {
    double n = (double)a->count;
    *mean = n ? (double)a->shift + a->s1 / n : 0.0;
    *m2 = n ? a->s2 - a->s1 * a->s1 / n : 0.0;
    if (*m2 < 0) *m2 = 0;
}

/* Merges from into into (Chan et al.'s pairwise update for the moments). */
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

/* Converts an accumulator kept in ticks (aggregate mode) to ns. */
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
/* Stacks                                                                    */
/* ------------------------------------------------------------------------ */

int sps__stack_push(sps__stack_t *s, sps__frame_t f) {
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        sps__frame_t *p = realloc(s->f, cap * sizeof *p);
        if (!p) return SPS_ENOMEM;
        s->f = p;
        s->cap = cap;
    }
    s->f[s->n++] = f;
    return 0;
}

void sps__stack_free(sps__stack_t *s) {
    free(s->f);
    s->f = NULL;
    s->n = s->cap = 0;
}

int sps__stack_copy(sps__stack_t *dst, const sps__stack_t *src) {
    dst->n = 0;
    for (size_t i = 0; i < src->n; i++)
        if (sps__stack_push(dst, src->f[i])) return SPS_ENOMEM;
    return 0;
}

/* Applies an end record of region r at ts to stack s.  For each frame it
 * closes, innermost first, calls fn(ctx, frame, end, self, depth) where
 * depth is the frame's index in the stack.  Returns the misuse count. */
int sps__nest_end(sps__stack_t *s, uint32_t r, uint64_t ts,
                  sps__close_fn fn, void *ctx) {
    size_t k = s->n;
    while (k > 0 && s->f[k - 1].region != r) k--;
    if (k == 0) return 1;
    int misuse = (int)(s->n - k);
    while (s->n >= k) {
        sps__frame_t f = s->f[--s->n];
        uint64_t d = ts > f.start ? ts - f.start : 0;
        if (s->n > 0) s->f[s->n - 1].child += d;
        fn(ctx, &f, ts, d > f.child ? d - f.child : 0, s->n);
    }
    return misuse;
}

/* ------------------------------------------------------------------------ */
/* The live call tree                                                        */
/* ------------------------------------------------------------------------ */

/* Index of the node (parent, region), created if new; -1 on ENOMEM. */
int32_t sps__tree_node(sps__tree_t *t, int32_t parent, uint32_t region) {
    sps__hprobe_t p = sps__htab_probe(&t->index, sps__hash_pair32((uint32_t)parent, region));
    for (uint32_t i; sps__htab_next(&t->index, &p, &i);)
        if (t->n[i].parent == parent && t->n[i].region == region) return (int32_t)i;
    if (sps__htab_make_room(&t->index, &p)) return -1;
    if (t->len == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        sps__tree_node_t *p = realloc(t->n, cap * sizeof *p);
        if (!p) return -1;
        t->n = p;
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

/* ------------------------------------------------------------------------ */
/* The incremental analyzer (under the session lock)                         */
/* ------------------------------------------------------------------------ */

/* Makes room for region id r in the session's accumulator arrays. */
int sps__acc_reserve(uint32_t r) {
    if (r < sps__g.acc_cap) return 0;
    uint32_t cap = sps__registry_count() + 256;
    if (cap <= r) cap = r + 256;
    sps__acc_t *c = realloc(sps__g.cum, cap * sizeof *c);
    if (!c) return SPS_ENOMEM;
    sps__g.cum = c;
    sps__acc_t *p = realloc(sps__g.per, cap * sizeof *p);
    if (!p) return SPS_ENOMEM;
    sps__g.per = p;
    memset(c + sps__g.acc_cap, 0, (cap - sps__g.acc_cap) * sizeof *c);
    memset(p + sps__g.acc_cap, 0, (cap - sps__g.acc_cap) * sizeof *p);
    sps__g.acc_cap = cap;
    return 0;
}

static void analyze_close(void *ctx, const sps__frame_t *f, uint64_t end,
                          uint64_t self, size_t depth) {
    (void)ctx;
    (void)depth;
    if (sps__acc_reserve(f->region) == 0) {
        sps__acc_add(&sps__g.cum[f->region], f->start, end, self);
        sps__acc_add(&sps__g.per[f->region], f->start, end, self);
    }
    if (f->node >= 0) {
        sps__tree_node_t *n = &sps__g.tree.n[f->node];
        sps__acc_add(&n->cum, f->start, end, self);
        sps__acc_add(&n->per, f->start, end, self);
    }
}

/* Feeds one decoded record of thread t into the analyzer. */
static void analyze_event(sps__thr_t *t, const sps__ev_t *e, uint32_t nids) {
    if (e->region == 0 || e->region >= nids) {
        sps__g.misuse++;
        return;
    }
    if (!e->is_end) {
        int32_t parent = t->stack.n ? t->stack.f[t->stack.n - 1].node : -1;
        sps__frame_t f = {e->region, sps__tree_node(&sps__g.tree, parent, e->region),
                          e->ns, 0, e->seq, -1, 0};
        if (sps__stack_push(&t->stack, f)) sps__g.misuse++;
        return;
    }
    sps__g.misuse += (uint64_t)sps__nest_end(&t->stack, e->region, e->ns,
                                             analyze_close, NULL);
}

/* Brings the analysis of thread t up to its current write position. */
int sps__analyze_thread(sps__thr_t *t) {
    if (t->epoch != sps__g.epoch || !t->an_chunk) return 0;
    size_t ns = 0, cap = 0;
    sps__seg_t *segs = NULL;
    uint32_t skip = t->an_pos, last_n = 0;
    sps__chunk_t *c = t->an_chunk, *last = NULL;
    while (c) {
        uint32_t n = c == t->cur
            ? (uint32_t)(atomic_load_explicit(&t->pos, memory_order_acquire) - c->rec)
            : c->n;
        if (ns == cap) {
            cap = cap ? cap * 2 : 16;
            sps__seg_t *p = realloc(segs, cap * sizeof *p);
            if (!p) { free(segs); return SPS_ENOMEM; }
            segs = p;
        }
        segs[ns++] = (sps__seg_t){t->index, c->rec, c->file_off, n, skip, c->seq0};
        skip = 0;
        last = c;
        last_n = n;
        c = c == t->cur ? NULL : (c->next ? c->next : t->cur);
    }
    sps__rd_t rd;
    sps__rd_init(&rd, segs, ns, NULL, &sps__g.tm);
    uint32_t nids = sps__registry_count();
    sps__ev_t e;
    int rc;
    while ((rc = sps__rd_next(&rd, &e)) > 0) analyze_event(t, &e, nids);
    sps__rd_free(&rd);
    free(segs);
    t->an_chunk = last;
    t->an_pos = last_n;
    return rc;
}
