/* analyze.c -- the incremental analyzer that keeps the session's statistics
 * and call tree up to date, by the one fold (fold.c).  A region id that was
 * never handed out is ignored and counted as misuse. */
#include "model/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

sps__analysis_t sps__an;

/* ------------------------------------------------------------------------ */
/* The incremental analyzer (under the session lock)                         */
/* ------------------------------------------------------------------------ */

/* Makes room for region id r in the session's accumulator arrays. */
int sps__acc_reserve(uint32_t r) {
    if (r < sps__an.acc_cap) return 0;
    uint32_t cap = sps__registry_count() + 256;
    if (cap <= r) cap = r + 256;
    sps__acc_t *c = realloc(sps__an.cum, cap * sizeof *c);
    if (!c) return SPS_ENOMEM;
    sps__an.cum = c;
    sps__acc_t *p = realloc(sps__an.per, cap * sizeof *p);
    if (!p) return SPS_ENOMEM;
    sps__an.per = p;
    uint32_t *lc = realloc(sps__an.lanes_cum, cap * sizeof *lc);
    if (!lc) return SPS_ENOMEM;
    sps__an.lanes_cum = lc;
    uint32_t *lp = realloc(sps__an.lanes_per, cap * sizeof *lp);
    if (!lp) return SPS_ENOMEM;
    sps__an.lanes_per = lp;
    uint32_t old = sps__an.acc_cap;
    memset(c + old, 0, (cap - old) * sizeof *c);
    memset(p + old, 0, (cap - old) * sizeof *p);
    memset(lc + old, 0, (cap - old) * sizeof *lc);
    memset(lp + old, 0, (cap - old) * sizeof *lp);
    sps__an.acc_cap = cap;
    return 0;
}

/* Marks entry i of a thread's seen bytes (*v, *cap of them) as run in
 * the period and the session, counting the thread once in *per / *cum
 * where it had not run i there yet.  Out of memory: not counted (the
 * table's "% session" then reads high; nothing else depends on it). */
static void lane_mark(uint8_t **v, uint32_t *cap, uint32_t i, uint32_t *per, uint32_t *cum) {
    if (i >= *cap) {
        uint32_t n = *cap ? *cap : 64;
        while (n <= i) n *= 2;
        uint8_t *p = realloc(*v, n);
        if (!p) return;
        memset(p + *cap, 0, n - *cap);
        *v = p;
        *cap = n;
    }
    uint8_t m = (*v)[i];
    if (!(m & 1)) (*per)++;
    if (!(m & 2)) (*cum)++;
    (*v)[i] = 3;
}

/* Thread t ran a call of region r at tree node `node` (-1: none). */
static void lanes_count(sps__thr_t *t, uint32_t r, int32_t node) {
    if (r < t->an_seen_cap && t->an_seen[r] == 3 &&
        (node < 0 || ((uint32_t)node < t->an_seen_node_cap && t->an_seen_node[node] == 3)))
        return; /* the common case: seen in this period already */
    if (!t->an_seen_cap || t->an_seen[0] != 3)
        lane_mark(&t->an_seen, &t->an_seen_cap, 0, &sps__an.threads_per, &sps__an.threads_cum);
    if (r < sps__an.acc_cap)
        lane_mark(&t->an_seen, &t->an_seen_cap, r, &sps__an.lanes_per[r], &sps__an.lanes_cum[r]);
    if (node >= 0) {
        sps__tree_node_t *n = &sps__an.tree.n[node];
        lane_mark(&t->an_seen_node, &t->an_seen_node_cap, (uint32_t)node, &n->lanes_per,
                  &n->lanes_cum);
    }
}

/* Forgets, in every thread, which regions it ran in the period (bit 0);
 * session: also in the session (bit 1). */
static void lanes_forget(int session) {
    uint8_t keep = session ? 0 : 2;
    for (sps__thr_t *t = sps__g.threads; t; t = t->next_all) {
        for (uint32_t i = 0; i < t->an_seen_cap; i++) t->an_seen[i] &= keep;
        for (uint32_t i = 0; i < t->an_seen_node_cap; i++) t->an_seen_node[i] &= keep;
    }
}

static void analyze_close(void *ctx, const sps__frame_t *f, uint64_t end,
                          uint64_t self, size_t depth) {
    (void)depth;
    /* the period's accumulators only: the session's (cum) are the earlier
     * periods', merged with these when asked (sps__cum_acc, sps__node_cum)
     * and when the period is taken -- half the work per call */
    if (f->region < sps__an.acc_cap || sps__acc_reserve(f->region) == 0)
        sps__acc_add(&sps__an.per[f->region], f->start, end, self);
    if (f->node >= 0) sps__acc_add(&sps__an.tree.n[f->node].per, f->start, end, self);
    lanes_count(ctx, f->region, f->node);
}

/* Feeds one decoded record of thread t into the analyzer. */
static void analyze_event(sps__thr_t *t, const sps__ev_t *e, uint32_t nids) {
    if (e->region == 0 || e->region >= nids) {
        sps__g.misuse++;
        return;
    }
    if (!e->is_end) {
        int32_t parent = t->stack.n ? t->stack.f[t->stack.n - 1].node : -1;
        sps__frame_t f = {e->region, sps__tree_node(&sps__an.tree, parent, e->region),
                          e->ns, 0, e->seq, -1, 0, 0, 0};
        if (sps__stack_push(&t->stack, f)) sps__g.misuse++;
        return;
    }
    sps__g.misuse += (uint64_t)sps__fold_end(&t->stack, e->region, e->ns,
                                             analyze_close, t);
}

/* Brings the analysis of thread t up to its current write position. */
int sps__analyze_thread(sps__thr_t *t) {
    if (t->epoch != sps__g.epoch || !t->an_chunk) return 0;
    size_t ns = 0, cap = 0;
    sps__seg_t *segs = NULL;
    uint32_t skip = t->an_pos, last_n = 0;
    int preset_hi = 0;
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
        if (ns == 0 && c->rec && skip && skip <= n && t->an_hi_seq == c->seq0 + skip) {
            /* resume at the cursor with the upper half known there: the
             * reader need not walk records [0, an_pos) again (a query then
             * costs the records since the previous one) */
            segs[ns++] = (sps__seg_t){t->index, c->rec + skip, -1, n - skip, 0, c->seq0 + skip};
            preset_hi = 1;
        } else {
            segs[ns++] = (sps__seg_t){t->index, c->rec, c->file_off, n, skip, c->seq0};
        }
        skip = 0;
        last = c;
        last_n = n;
        c = c == t->cur ? NULL : (c->next ? c->next : t->cur);
    }
    sps__rd_t rd;
    sps__rd_init(&rd, segs, ns, NULL, &sps__g.tm);
    if (preset_hi) rd.hi = t->an_hi;
    uint32_t nids = sps__registry_count();
    sps__ev_t e;
    int rc;
    while ((rc = sps__rd_next(&rd, &e)) > 0) analyze_event(t, &e, nids);
    sps__rd_free(&rd);
    free(segs);
    t->an_chunk = last;
    t->an_pos = last_n;
    /* rd.hi is the upper half at the end of what was read: the cursor's,
     * when the last segment was read from memory to its end */
    t->an_hi_seq = rc == 0 && last && last->rec ? last->seq0 + last_n : UINT64_MAX;
    t->an_hi = rd.hi;
    return rc;
}

/* ------------------------------------------------------------------------ */
/* The analysis's part of sessions and snapshots (the api layer calls these) */
/* ------------------------------------------------------------------------ */

void sps__analysis_reset(void) {
    if (sps__an.acc_cap) {
        memset(sps__an.cum, 0, sps__an.acc_cap * sizeof *sps__an.cum);
        memset(sps__an.per, 0, sps__an.acc_cap * sizeof *sps__an.per);
        memset(sps__an.lanes_cum, 0, sps__an.acc_cap * sizeof *sps__an.lanes_cum);
        memset(sps__an.lanes_per, 0, sps__an.acc_cap * sizeof *sps__an.lanes_per);
    }
    sps__an.threads_cum = sps__an.threads_per = 0;
    lanes_forget(1);
    sps__tree_free(&sps__an.tree);
}

void sps__analyze_all(void) {
    if (sps__g.mode != SPS__EVENTS) return;
    for (sps__thr_t *t = sps__g.threads; t; t = t->next_all) sps__analyze_thread(t);
}

sps__acc_t sps__cum_acc(sps_region_t r) {
    sps__acc_t a = {0};
    if (sps__g.mode == SPS__AGGREGATE) {
        for (sps__thr_t *t = sps__g.threads; t; t = t->next_all)
            if (t->epoch == sps__g.epoch) {
                sps__acc_t x = sps__agg_read(t, r);
                sps__acc_to_ns(&x, &sps__g.tm);
                sps__acc_merge(&a, &x);
            }
    } else if (r < sps__an.acc_cap) {
        a = sps__an.cum[r];
        sps__acc_merge(&a, &sps__an.per[r]);
    }
    return a;
}

sps__acc_t sps__node_cum(size_t i) {
    sps__acc_t a = sps__an.tree.n[i].cum;
    sps__acc_merge(&a, &sps__an.tree.n[i].per);
    return a;
}

int sps__analysis_take(sps__snap_t *s) {
    /* Aggregate mode never runs the analyzer, so nothing else grows the
     * arrays to the registry: sized by acc_cap alone, a session whose
     * first regions were aggregate ones took a period of no regions and
     * wrote an empty /rank_region_index (issue 12).  Every id gets a slot,
     * which finalize fills from the threads' accumulators. */
    if (sps__g.mode == SPS__AGGREGATE && sps__acc_reserve(sps__registry_count()))
        return SPS_ENOMEM;
    s->nregions = sps__an.acc_cap;
    s->per = calloc(s->nregions ? s->nregions : 1, sizeof *s->per);
    s->nnodes = sps__an.tree.len;
    s->node_per = calloc(s->nnodes ? s->nnodes : 1, sizeof *s->node_per);
    s->lanes = calloc(s->nregions ? s->nregions : 1, sizeof *s->lanes);
    s->node_lanes = calloc(s->nnodes ? s->nnodes : 1, sizeof *s->node_lanes);
    if (!s->per || !s->node_per || !s->lanes || !s->node_lanes) return SPS_ENOMEM;
    if (s->nregions) {
        memcpy(s->per, sps__an.per, s->nregions * sizeof *s->per);
        memcpy(s->lanes, sps__an.lanes_per, s->nregions * sizeof *s->lanes);
        for (uint32_t r = 0; r < s->nregions; r++)
            sps__acc_merge(&sps__an.cum[r], &sps__an.per[r]);
        memset(sps__an.per, 0, s->nregions * sizeof *sps__an.per);
        memset(sps__an.lanes_per, 0, s->nregions * sizeof *sps__an.lanes_per);
    }
    for (size_t i = 0; i < s->nnodes; i++) {
        sps__tree_node_t *n = &sps__an.tree.n[i];
        s->node_per[i] = n->per;
        s->node_lanes[i] = n->lanes_per;
        sps__acc_merge(&n->cum, &n->per);
        memset(&n->per, 0, sizeof n->per);
        n->lanes_per = 0;
    }
    s->lanes_total = sps__an.threads_per;
    sps__an.threads_per = 0;
    lanes_forget(0);
    return 0;
}

/* The larger of two thread counts: a thread of both periods is one. */
static uint32_t lanes_max(uint32_t a, uint32_t b) { return a > b ? a : b; }

void sps__analysis_merge(sps__snap_t *s, const sps__snap_t *old) {
    for (uint32_t r = 0; r < s->nregions && r < old->nregions; r++) {
        sps__acc_merge(&s->per[r], &old->per[r]);
        if (s->lanes && old->lanes) s->lanes[r] = lanes_max(s->lanes[r], old->lanes[r]);
    }
    for (size_t k = 0; k < s->nnodes && k < old->nnodes; k++) {
        sps__acc_merge(&s->node_per[k], &old->node_per[k]);
        if (s->node_lanes && old->node_lanes)
            s->node_lanes[k] = lanes_max(s->node_lanes[k], old->node_lanes[k]);
    }
    s->lanes_total = lanes_max(s->lanes_total, old->lanes_total);
}

int sps__analysis_describe(sps__snap_t *s) {
    uint32_t count = sps__registry_count();
    s->regs = malloc(count * sizeof *s->regs);
    s->node_parent = malloc((sps__an.tree.len + 1) * sizeof *s->node_parent);
    s->node_region = malloc((sps__an.tree.len + 1) * sizeof *s->node_region);
    if (!s->regs || !s->node_parent || !s->node_region) return SPS_ENOMEM;
    for (sps_region_t r = 1; r < count; r++) {
        int reg = sps__region_registered(r);
        int rec = (r < s->nregions && s->per[r].count) || sps__cum_acc(r).count;
        if (reg || rec) s->regs[s->nregs++] = r;
    }
    sps__regions_sort(s->regs, s->nregs);
    for (size_t i = 0; i < s->nnodes; i++) {
        s->node_parent[i] = sps__an.tree.n[i].parent;
        s->node_region[i] = sps__an.tree.n[i].region;
    }
    return 0;
}
