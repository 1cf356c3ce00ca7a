/* values.c -- the value fold (model.h: "values per span"): own and self
 * values of each span from the cumulative readings its begin and end
 * records carry, and peaks from the segments between records.
 *
 * Peaks.  The core hands, with each record, how far the thread's live
 * bytes rose above their level at the previous record (the excess of the
 * segment between the two).  That segment lies inside the innermost span
 * open on the lane: at a begin, the span that is the new one's parent; at
 * an end, the span it closes (the first frame the fold closes for it).
 * live bytes at a record = allocated - freed, both cumulative. */
#include "model/model.h"

#include <stdlib.h>
#include <string.h>

void sps__vlane_init(sps__vlane_t *v, uint32_t n) {
    memset(v, 0, sizeof *v);
    v->n = n > SPS__VAL_MAX ? SPS__VAL_MAX : n;
    v->excess = -1;
    for (uint32_t i = 0; i < v->n; i++)
        if (sps__values_kind(i) == SPS__VAL_EXCESS) v->excess = (int)i;
}

void sps__vlane_free(sps__vlane_t *v) {
    free(v->f);
    v->f = NULL;
    v->cap = 0;
}

/* Live bytes at a reading (the memory values come first: see core.h). */
static int64_t live_of(const sps__vlane_t *v, const sps__ev_t *e) {
    if (v->excess < 0) return 0;
    return (int64_t)(e->vals[SPS__MEM_ALLOC_BYTES] - e->vals[SPS__MEM_FREE_BYTES]);
}

/* Credits the segment that ends at e to frame f (once per event), and
 * moves the lane's live level to e's. */
static void credit_segment(sps__vlane_t *v, sps__vframe_t *f, const sps__ev_t *e) {
    if (v->excess < 0 || (v->seg_done && v->seg_seq == e->seq)) return;
    int64_t top = v->last_live + (int64_t)e->vals[v->excess];
    if (f && f->has) {
        if (top > f->peak_self) f->peak_self = top;
        if (top > f->peak) f->peak = top;
    }
    v->last_live = live_of(v, e);
    v->seg_seq = e->seq;
    v->seg_done = 1;
}

int sps__vlane_begin(sps__vlane_t *v, size_t depth, const sps__ev_t *e) {
    if (!v->n) return 0;
    if (depth >= v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 16;
        while (cap <= depth) cap *= 2;
        sps__vframe_t *f = realloc(v->f, cap * sizeof *f);
        if (!f) return SPS_ENOMEM;
        v->f = f;
        v->cap = cap;
    }
    sps__vframe_t *f = &v->f[depth];
    f->has = e->nvals == v->n;
    if (!f->has) return 0;
    credit_segment(v, depth ? &v->f[depth - 1] : NULL, e);
    memcpy(f->begin, e->vals, v->n * sizeof *f->begin);
    memset(f->child, 0, v->n * sizeof *f->child);
    f->live0 = f->peak_self = f->peak = live_of(v, e);
    return 0;
}

int sps__vlane_close(sps__vlane_t *v, size_t depth, const sps__ev_t *e) {
    if (!v->n || depth >= v->cap || !v->f[depth].has || e->nvals != v->n) return 0;
    sps__vframe_t *f = &v->f[depth];
    credit_segment(v, f, e);
    sps__vframe_t *parent = depth && v->f[depth - 1].has ? &v->f[depth - 1] : NULL;
    for (uint32_t i = 0; i < v->n; i++) {
        if ((int)i == v->excess) {
            v->own[i] = (uint64_t)(f->peak - f->live0);
            v->self[i] = (uint64_t)(f->peak_self - f->live0);
            continue;
        }
        /* a reading never goes back; 0 if a broken stream says otherwise */
        uint64_t own = e->vals[i] >= f->begin[i] ? e->vals[i] - f->begin[i] : 0;
        v->own[i] = own;
        v->self[i] = own > f->child[i] ? own - f->child[i] : 0;
        if (parent) parent->child[i] += own;
    }
    if (parent && f->peak > parent->peak) parent->peak = f->peak;
    return 1;
}
