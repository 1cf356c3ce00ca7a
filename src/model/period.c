/* period.c -- the merged pass over a period's records.
 *
 * The pass merges every thread's records by timestamp (a binary heap over
 * the threads' next events), applies the nesting rule per thread, and gives
 * each call written in this period its call id (start order across the
 * rank, as scope-profiler's call_ids) and its ordinal within its region.
 * Sinks receive begins (in start order) and ends (in end order): the HDF5
 * writer's (formats/h5_period.c), sps_spans's (api/query.c) and the
 * per-call queries' (collect.c).  Memory is
 * bounded by the number of threads and regions, never by the number of
 * events. */
#include "model/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* The merged pass                                                           */
/* ------------------------------------------------------------------------ */

typedef struct lane {
    sps__rd_t rd;
    sps__ev_t ev;  /* next event */
    sps__stack_t st;
    const sps__stack_t *open; /* frames that stay open: their begins are skipped */
    size_t open_i;
    const sps__stack_t *carried; /* frames carried in from the previous period */
    size_t carried_i;
    uint32_t thread;
} lane_t;

typedef struct pass {
    lane_t *lanes;
    sps__heap_t heap; /* lanes by (next event's time, thread) (util.h) */
    const sps__pass_cb_t *cb;
    int64_t next_id;
    uint64_t *ord;  /* by region id */
    uint32_t nids;
    uint64_t misuse;
    lane_t *cur_lane;
    int err;
} pass_t;

static void pass_close(void *ctx, const sps__frame_t *f, uint64_t end,
                       uint64_t self, size_t depth) {
    pass_t *p = ctx;
    if (f->id < 0 || p->err) return;
    lane_t *ln = p->cur_lane;
    sps__call_t c = {f->region, ln->thread, f->start, end, self, f->id,
                     ln->st.n ? ln->st.f[ln->st.n - 1].id : -1,
                     (uint32_t)depth, f->ord, f->seq, f->prior};
    if (p->cb->end) p->err = p->cb->end(p->cb->ctx, &c);
}

/* A begin carried in from the previous period (its frames come first, in
 * order) keeps the time its children spent before the checkpoint: they
 * were written with that period, and the call's self time is the live
 * session's (duration minus all its children), in every view of the file
 * (the writer stores it as /carried, the reader subtracts it). */
static void carried_child(lane_t *ln, uint64_t seq, sps__frame_t *f) {
    if (!ln->carried || ln->carried_i >= ln->carried->n ||
        ln->carried->f[ln->carried_i].seq != seq)
        return;
    f->child = f->prior = ln->carried->f[ln->carried_i++].child;
}

/* Handles one event of lane ln. */
static void pass_event(pass_t *p, lane_t *ln) {
    const sps__ev_t *e = &ln->ev;
    if (e->region == 0 || e->region >= p->nids) {
        p->misuse++;
        return;
    }
    p->cur_lane = ln;
    if (e->is_end) {
        p->misuse += (uint64_t)sps__fold_end(&ln->st, e->region, e->ns,
                                             pass_close, p);
        return;
    }
    sps__frame_t f = {e->region, -1, e->ns, 0, e->seq, -1, 0, 0, 0};
    carried_child(ln, e->seq, &f);
    int stays_open = ln->open && ln->open_i < ln->open->n &&
                     ln->open->f[ln->open_i].seq == e->seq;
    if (stays_open) {
        ln->open_i++;
    } else {
        f.id = p->next_id++;
        f.ord = p->ord[e->region]++;
        sps__call_t c = {e->region, ln->thread, e->ns, 0, 0, f.id,
                         ln->st.n ? ln->st.f[ln->st.n - 1].id : -1,
                         (uint32_t)ln->st.n, f.ord, e->seq, f.prior};
        if (p->cb->begin && !p->err) p->err = p->cb->begin(p->cb->ctx, &c);
    }
    if (sps__stack_push(&ln->st, f)) p->err = SPS_ENOMEM;
}

/* Runs the merged pass over snap, calling cb.  Returns 0 or an SPS_E code;
 * *misuse (if not NULL) receives the number of repaired nesting errors. */
int sps__pass_run(const sps__snap_t *snap, const sps__pass_cb_t *cb,
                  uint64_t *misuse) {
    pass_t p = {0};
    uint32_t nt = snap->nthreads;
    p.cb = cb;
    p.nids = sps__registry_count();
    p.lanes = calloc(nt ? nt : 1, sizeof *p.lanes);
    sps__heap_init(&p.heap, NULL, NULL); /* ties: the lower thread first */
    p.ord = calloc(p.nids, sizeof *p.ord);
    if (!p.lanes || sps__heap_reserve(&p.heap, nt) || !p.ord) p.err = SPS_ENOMEM;
    size_t si = 0;
    for (uint32_t t = 0; t < nt && !p.err; t++) {
        size_t s0 = si;
        while (si < snap->nsegs && snap->segs[si].thread == t) si++;
        lane_t *ln = &p.lanes[t];
        ln->thread = t;
        ln->open = snap->open ? &snap->open[t] : NULL;
        ln->carried = snap->carried ? &snap->carried[t] : NULL;
        sps__rd_init(&ln->rd, snap->segs + s0, si - s0,
                     snap->carried ? &snap->carried[t] : NULL, &snap->tm);
        int rc = sps__rd_next(&ln->rd, &ln->ev);
        if (rc < 0) p.err = rc;
        if (rc > 0) sps__heap_push(&p.heap, ln->ev.ns, t); /* reserved */
    }
    while (p.heap.n && !p.err) {
        lane_t *ln = &p.lanes[sps__heap_top(&p.heap).idx];
        pass_event(&p, ln);
        int rc = sps__rd_next(&ln->rd, &ln->ev);
        if (rc < 0) p.err = rc;
        if (rc > 0) {
            if (p.heap.n > 1) sps__heap_update_top(&p.heap, ln->ev.ns); /* one lane: no order to keep */
        } else {
            sps__heap_pop(&p.heap);
        }
    }
    for (uint32_t t = 0; p.lanes && t < nt; t++) {
        sps__rd_free(&p.lanes[t].rd);
        sps__stack_free(&p.lanes[t].st);
    }
    free(p.lanes);
    sps__heap_free(&p.heap);
    free(p.ord);
    if (misuse) *misuse = p.misuse;
    return p.err;
}
