/* pass.h -- the merged pass (period.c) as an inline template.
 *
 * sps__pass_run (model.h) calls its sink through two function pointers,
 * twice per call: at finalize that is every call of the period, and the
 * calls, the building of an sps__call_t and its reading back cost about
 * as much as the sink's own work.  A sink on that path (the HDF5 writer's,
 * formats/h5_period.c) runs the same pass through this header instead:
 * sps__pass_loop is inline, its begin and close functions are constants at
 * the call site, and the compiler inlines the sink into the loop.  The
 * rules (the merge order, the nesting rule through sps__fold_end, the call
 * ids and ordinals) are written here once; period.c's sps__pass_run is
 * this loop with the pointers.
 *
 * Use:
 *     SPS__PASS_CLOSE(my_close, my_end)   -- a close function calling my_end
 *     sps__pass_t p;
 *     int rc = sps__pass_open(&p, snap, ctx);
 *     if (!rc) sps__pass_loop(&p, my_begin, my_close);
 *     rc = sps__pass_done(&p, rc, &misuse);
 */
#ifndef SPS_MODEL_PASS_H
#define SPS_MODEL_PASS_H

#include "model/model.h"

/* One thread's records, as the pass reads them. */
typedef struct sps__lane {
    sps__rd_t rd;
    sps__ev_t ev;  /* next event */
    sps__stack_t st;
    const sps__stack_t *open; /* frames that stay open: their begins are skipped */
    size_t open_i;
    const sps__stack_t *carried; /* frames carried in from the previous period */
    size_t carried_i;
    uint32_t thread;
    sps__vlane_t vl; /* the values' fold beside st (model/values.c) */
    sps__sample_t *smp; /* the lane's stack samples, by time (snap's) */
    size_t nsmp, smp_i; /* how many; the first not yet attributed */
} sps__lane_t;

typedef int (*sps__pass_fn)(void *ctx, const sps__call_t *c);

/* A pass in progress.  ctx is the sink's; end is used only by the
 * close functions that take it from here (period.c's). */
typedef struct sps__pass {
    sps__lane_t *lanes;
    uint32_t nlanes;
    sps__heap_t heap; /* lanes by (next event's time, thread) (util.h) */
    void *ctx;
    sps__pass_fn end;
    int64_t next_id;
    uint64_t *ord;  /* by region id */
    uint32_t nids;
    uint64_t misuse;
    sps__lane_t *cur_lane;
    int err;
} sps__pass_t;

/* Starts a pass over snap for the sink ctx: every lane at its first
 * event.  0 or an SPS_E code; either way sps__pass_done ends it. */
SPS__HIDDEN int sps__pass_open(sps__pass_t *p, const sps__snap_t *snap, void *ctx);
/* Frees p; returns rc, else the pass's error; *misuse (if not NULL)
 * receives the number of repaired nesting errors. */
SPS__HIDDEN int sps__pass_done(sps__pass_t *p, int rc, uint64_t *misuse);

/* Frame f of the current lane closed at end: fills *c, the call as the
 * sinks see it.  0 when it is not the sink's (a frame that was not
 * written in this period, or the pass failed). */
SPS__INLINE int sps__pass_ended(const sps__pass_t *p, const sps__frame_t *f, uint64_t end,
                                uint64_t self, size_t depth, sps__call_t *c) {
    sps__lane_t *ln = p->cur_lane;
    int vals = ln->vl.n && sps__vlane_close(&ln->vl, depth, &ln->ev);
    if (f->id < 0 || p->err) return 0;
    *c = (sps__call_t){f->region, ln->thread, f->start, end, self, f->id,
                       ln->st.n ? ln->st.f[ln->st.n - 1].id : -1,
                       (uint32_t)depth, f->ord, f->seq, f->prior,
                       vals ? ln->vl.n : 0, ln->vl.own, ln->vl.self,
                       vals ? ln->ev.vals : NULL};
    return 1;
}

/* Defines `static void name(...)`, an sps__close_fn that hands every
 * written call to end_fn (an sps__pass_fn) with the sink's ctx. */
#define SPS__PASS_CLOSE(name, end_fn)                                            \
    SPS__INLINE void name(void *pass, const sps__frame_t *f, uint64_t end,       \
                     uint64_t self, size_t depth) {                              \
        sps__pass_t *p_ = pass;                                                  \
        sps__call_t c_;                                                          \
        if (sps__pass_ended(p_, f, end, self, depth, &c_)) p_->err = end_fn(p_->ctx, &c_); \
    }

/* Attributes the lane's samples taken before ns to the innermost frame
 * open on it now: a sample belongs to the innermost span open on its
 * thread at its time (docs/design.md, "Event model").  A frame that stays
 * open past the period has no call id yet: its samples are deferred to the
 * period that writes it (SPS__SMP_DEFER). */
SPS__INLINE void sps__pass_samples(sps__lane_t *ln, uint64_t ns) {
    while (ln->smp_i < ln->nsmp && (uint64_t)ln->smp[ln->smp_i].ns < ns) {
        sps__sample_t *x = &ln->smp[ln->smp_i++];
        const sps__frame_t *f = ln->st.n ? &ln->st.f[ln->st.n - 1] : NULL;
        x->region = f ? f->region : 0;
        x->call_id = f ? f->id : -1;
        x->flags = f && f->id < 0 ? SPS__SMP_DEFER : 0;
    }
}

/* A begin carried in from the previous period (its frames come first, in
 * order) keeps the time its children spent before the checkpoint: they
 * were written with that period, and the call's self time is the live
 * session's (duration minus all its children), in every view of the file
 * (the writer stores it as /carried, the reader subtracts it). */
SPS__INLINE void sps__pass_carried_child(sps__lane_t *ln, uint64_t seq, sps__frame_t *f) {
    if (!ln->carried || ln->carried_i >= ln->carried->n ||
        ln->carried->f[ln->carried_i].seq != seq)
        return;
    f->child = f->prior = ln->carried->f[ln->carried_i++].child;
}

/* A begin (frame f, not yet pushed) whose lane's next event, now in
 * ln->ev, is its own end, and comes before every other lane's next event:
 * a leaf call.  It closes at once, as sps__fold_end would close it from
 * the top of the stack, without the push and the pop.  1 when it did. */
SPS__INLINE int sps__pass_leaf(sps__pass_t *p, sps__lane_t *ln, const sps__frame_t *f,
                               sps__close_fn close) {
    const sps__ev_t *e = &ln->ev;
    if (!e->is_end || e->region != f->region || !sps__heap_keeps_top(&p->heap, e->ns))
        return 0;
    if (ln->smp_i < ln->nsmp && (uint64_t)ln->smp[ln->smp_i].ns < e->ns)
        return 0; /* a sample inside: the leaf is pushed, to be on top for it */
    sps__fold_close(&ln->st, f, e->ns, close, p);
    return 1;
}

/* Handles the current event of lane ln and moves the lane on: an end
 * closes through close (which gets p as its ctx), a begin written in this
 * period goes to begin (NULL: none) with its call id and ordinal.  Returns
 * what sps__rd_next returned for the lane's next event (1: in ln->ev, 0:
 * the lane ended, < 0: an error). */
SPS__INLINE int sps__pass_event(sps__pass_t *p, sps__lane_t *ln, sps__pass_fn begin,
                                sps__close_fn close) {
    const sps__ev_t *e = &ln->ev;
    if (ln->smp_i < ln->nsmp) sps__pass_samples(ln, e->ns);
    if (e->region == 0 || e->region >= p->nids) {
        p->misuse++;
        return sps__rd_next(&ln->rd, &ln->ev);
    }
    p->cur_lane = ln;
    if (e->is_end) {
        p->misuse += (uint64_t)sps__fold_end(&ln->st, e->region, e->ns, close, p);
        return sps__rd_next(&ln->rd, &ln->ev);
    }
    sps__frame_t f = {e->region, -1, e->ns, 0, e->seq, -1, 0, 0, 0};
    sps__pass_carried_child(ln, e->seq, &f);
    if (ln->vl.n && sps__vlane_begin(&ln->vl, ln->st.n, e)) p->err = SPS_ENOMEM;
    int stays_open = ln->open && ln->open_i < ln->open->n &&
                     ln->open->f[ln->open_i].seq == e->seq;
    int rc;
    if (stays_open) {
        ln->open_i++;
        rc = sps__rd_next(&ln->rd, &ln->ev);
    } else {
        f.id = p->next_id++;
        f.ord = p->ord[e->region]++;
        sps__call_t c = {e->region, ln->thread, e->ns, 0, 0, f.id,
                         ln->st.n ? ln->st.f[ln->st.n - 1].id : -1,
                         (uint32_t)ln->st.n, f.ord, e->seq, f.prior, 0, NULL, NULL, NULL};
        if (begin && !p->err) p->err = begin(p->ctx, &c);
        rc = sps__rd_next(&ln->rd, &ln->ev);
        if (rc > 0 && sps__pass_leaf(p, ln, &f, close)) return sps__rd_next(&ln->rd, &ln->ev);
    }
    if (sps__stack_push(&ln->st, f)) p->err = SPS_ENOMEM;
    return rc;
}

/* Runs the pass to its end (or its first error, in p->err): events of all
 * lanes in (time, thread) order. */
SPS__INLINE void sps__pass_loop(sps__pass_t *p, sps__pass_fn begin, sps__close_fn close) {
    while (p->heap.n && !p->err) {
        sps__lane_t *ln = &p->lanes[sps__heap_top(&p->heap).idx];
        int rc = sps__pass_event(p, ln, begin, close);
        if (rc < 0) p->err = rc;
        if (rc > 0) {
            if (p->heap.n > 1) sps__heap_update_top(&p->heap, ln->ev.ns); /* one lane: no order to keep */
        } else {
            sps__pass_samples(ln, UINT64_MAX); /* the lane's last samples */
            sps__heap_pop(&p->heap);
        }
    }
}

#endif
