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
 * events.  The loop itself is inline, in pass.h (a sink on finalize's
 * path runs it there, with its functions inlined); this file starts and
 * ends a pass, and runs it for the sinks that give function pointers. */
#include "model/pass.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* The merged pass                                                           */
/* ------------------------------------------------------------------------ */

int sps__pass_open(sps__pass_t *p, const sps__snap_t *snap, void *ctx) {
    memset(p, 0, sizeof *p);
    uint32_t nt = snap->nthreads;
    p->ctx = ctx;
    p->nids = sps__registry_count();
    p->lanes = calloc(nt ? nt : 1, sizeof *p->lanes);
    sps__heap_init(&p->heap, NULL, NULL); /* ties: the lower thread first */
    p->ord = calloc(p->nids, sizeof *p->ord);
    if (!p->lanes || sps__heap_reserve(&p->heap, nt) || !p->ord) return p->err = SPS_ENOMEM;
    p->nlanes = nt;
    size_t si = 0, mi = 0;
    for (uint32_t t = 0; t < nt && !p->err; t++) {
        size_t s0 = si;
        while (si < snap->nsegs && snap->segs[si].thread == t) si++;
        sps__lane_t *ln = &p->lanes[t];
        ln->thread = t;
        sps__vlane_init(&ln->vl, sps__g.nvals);
        ln->open = snap->open ? &snap->open[t] : NULL;
        ln->carried = snap->carried ? &snap->carried[t] : NULL;
        sps__rd_init(&ln->rd, snap->segs + s0, si - s0,
                     snap->carried ? &snap->carried[t] : NULL, &snap->tm);
        /* the lane's samples (sps__samples_sort: by thread, then time) */
        while (mi < snap->nsamples && snap->samples[mi].thread < t) mi++;
        ln->smp = snap->samples ? snap->samples + mi : NULL;
        while (mi < snap->nsamples && snap->samples[mi].thread == t) mi++, ln->nsmp++;
        int rc = sps__rd_next(&ln->rd, &ln->ev);
        if (rc < 0) p->err = rc;
        if (rc > 0) sps__heap_push(&p->heap, ln->ev.ns, t); /* reserved */
        if (rc == 0) sps__pass_samples(ln, UINT64_MAX); /* no events: outside any span */
    }
    return p->err;
}

int sps__pass_done(sps__pass_t *p, int rc, uint64_t *misuse) {
    for (uint32_t t = 0; p->lanes && t < p->nlanes; t++) {
        sps__rd_free(&p->lanes[t].rd);
        sps__stack_free(&p->lanes[t].st);
        sps__vlane_free(&p->lanes[t].vl);
    }
    free(p->lanes);
    sps__heap_free(&p->heap);
    free(p->ord);
    if (misuse) *misuse = p->misuse;
    rc = rc ? rc : p->err;
    memset(p, 0, sizeof *p);
    return rc;
}

/* The close function of the sinks that give a pointer (p->end). */
SPS__INLINE void pass_close(void *pass, const sps__frame_t *f, uint64_t end,
                            uint64_t self, size_t depth) {
    sps__pass_t *p = pass;
    sps__call_t c;
    if (p->end && sps__pass_ended(p, f, end, self, depth, &c)) p->err = p->end(p->ctx, &c);
}

/* Runs the merged pass over snap, calling cb.  Returns 0 or an SPS_E code;
 * *misuse (if not NULL) receives the number of repaired nesting errors. */
int sps__pass_run(const sps__snap_t *snap, const sps__pass_cb_t *cb,
                  uint64_t *misuse) {
    sps__pass_t p;
    int rc = sps__pass_open(&p, snap, cb->ctx);
    p.end = cb->end;
    if (!rc) sps__pass_loop(&p, cb->begin, pass_close);
    return sps__pass_done(&p, rc, misuse);
}
